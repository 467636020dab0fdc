// The scanner's fast path (FastSaxReader) against RapidJSON alone: for every
// line of every golden input, and for many mutations of real lines, both
// must give the same entry, or the same verdict on a line that is not JSON.
#include "core/entry_scanner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace pihydrate {
namespace {

std::string describe(const Field& f) {
  std::ostringstream out;
  out << static_cast<int>(f.kind) << "@" << f.column << ":" << f.text();
  return out.str();
}
std::string describe(const KindField& f) {
  return std::to_string(static_cast<int>(f.kind)) + "@" + std::to_string(f.column);
}

struct Scanned {
  ScanStatus status;
  std::string text;  // everything the scan produced, in one comparable string
};

Scanned scan_line(const std::string& line, bool fast) {
  StringArena arena;
  std::vector<ToolCallRef> calls;
  std::deque<EntryDetails> details;
  EntryScanner scanner(arena, calls, details, 64);
  scanner.set_fast_path(fast);
  std::vector<char> buffer(line.begin(), line.end());
  buffer.push_back('\0');
  Entry e;
  BadLine bad;
  const std::size_t start = line.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  Scanned out{scanner.scan(buffer.data(), line.size(), start, e, bad), {}};
  std::ostringstream d;
  if (out.status == ScanStatus::kBad) {
    d << "bad " << static_cast<int>(bad.problem) << " @" << bad.column << " " << bad.reason;
  } else if (out.status == ScanStatus::kParsed) {
    const EntryDetails& x = e.details();
    d << static_cast<int>(e.root) << e.falsy << " type " << static_cast<int>(e.type) << describe(e.type_field) << "="
      << e.type_text() << " id " << describe(e.id) << " parent " << describe(e.parent_id) << " ts "
      << describe(e.timestamp) << " msg " << describe(e.message) << " role " << static_cast<int>(e.role)
      << describe(e.role_field) << "=" << x.unknown_role << " content " << static_cast<int>(e.content_kind) << " usage "
      << static_cast<int>(e.usage_kind) << static_cast<int>(e.usage_cost_kind) << " stop "
      << static_cast<int>(e.stop_reason) << describe(e.stop_reason_field) << " mts " << describe(e.message_timestamp)
      << " tcid " << describe(e.tool_call_id) << " excl " << e.exclude_from_context << " blank/thinking/other "
      << static_cast<int>(e.content_blank_texts) << e.content_has_thinking << e.content_has_other << " calls";
    for (std::uint32_t i = 0; i < e.tool_calls_count; ++i) {
      const ToolCallRef& c = calls[e.tool_calls_begin + i];
      d << " [" << c.id << "|" << c.name << "|" << c.column << "|" << static_cast<int>(c.id_kind) << "]";
    }
    d << " details " << describe(x.version) << describe(x.cwd) << describe(x.first_kept_entry_id)
      << describe(x.first_kept_entry_index) << describe(x.target_id) << describe(x.label) << describe(x.from_id)
      << describe(x.summary) << "=" << x.unknown_type;
  }
  out.text = d.str();
  return out;
}

std::vector<std::string> golden_lines() {
  std::vector<std::string> lines;
  const std::filesystem::path root = std::filesystem::path(PIHYDRATE_SOURCE_DIR) / "tests" / "golden";
  for (const auto& f : std::filesystem::recursive_directory_iterator(root)) {
    if (!f.is_regular_file() || f.path().filename().string().rfind("input", 0) != 0) continue;
    if (f.file_size() > (1 << 20)) continue;
    std::ifstream in(f.path(), std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  return lines;
}

void expect_same(const std::string& line) {
  const Scanned fast = scan_line(line, true);
  const Scanned slow = scan_line(line, false);
  EXPECT_EQ(static_cast<int>(fast.status), static_cast<int>(slow.status)) << line;
  EXPECT_EQ(fast.text, slow.text) << line;
}

TEST(FastSaxTest, GoldenLinesScanAlikeBothWays) {
  const auto lines = golden_lines();
  ASSERT_GT(lines.size(), 1000u);
  for (const std::string& line : lines) expect_same(line);
}

TEST(FastSaxTest, MutatedLinesScanAlikeBothWays) {
  const auto lines = golden_lines();
  std::mt19937 rng(11);
  const std::string alphabet = "{}[]:,\"\\ 0123456789.-eEtrufalsn\tuabcdDF8";
  for (int round = 0; round < 60000; ++round) {
    std::string line = lines[rng() % lines.size()];
    if (line.empty()) continue;
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
      const std::size_t at = rng() % (line.size() + 1);
      switch (rng() % 3) {
        case 0:
          if (at < line.size()) line[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          if (at < line.size()) line.erase(at, 1);
          break;
        default: line.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    expect_same(line);
    if (HasFailure()) return;  // one mismatch is enough to read
  }
}

}  // namespace
}  // namespace pihydrate
