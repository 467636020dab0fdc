// The converter's fast reader of thread exports against the reference
// reader (thread_reading.h): the same entries, diagnostics and repairs on
// every golden export and on mutations of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/thread_reference_reader.h"

namespace pihydrate {
namespace {

std::vector<std::filesystem::path> golden_exports() {
  std::vector<std::filesystem::path> found;
  const auto root = std::filesystem::path(PIHYDRATE_SOURCE_DIR) / "tests" / "golden" / "thread";
  for (const auto& dir : std::filesystem::directory_iterator(root))
    for (const char* name : {"input.json", "input.jsonl"})
      if (std::filesystem::exists(dir.path() / name)) found.push_back(dir.path() / name);
  std::sort(found.begin(), found.end());
  return found;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string describe(const ReadThread& r) {
  std::ostringstream out;
  out << "json_valid=" << r.json_valid << " entry_count=" << r.entry_count << "\n";
  for (const Diagnostic& d : r.diagnostics)
    out << "  " << d.line << ":" << d.column << " " << code_name(d.code) << " " << d.message << "\n";
  for (const auto& [kind, count] : r.repairs) out << "  repair " << kind << " " << count << "\n";
  for (const ReadEntry& e : r.entries)
    out << "  [" << e.index << "] " << thread_rules::kind_name(e.kind) << " role=" << static_cast<int>(e.role)
        << " id=" << e.id << " ref=" << e.ref << " key=" << e.has_stream_key << e.stream_key
        << " final=" << e.final_timestamp << "\n";
  return out.str();
}

// What the fast reader must agree with the reference on. Invalid JSON is
// compared by that alone: both readers leave its message to RapidJSON. A
// number beyond a double's range, which JSON.parse reads as Infinity, is
// past what the reference reads.
void expect_same_reading(const std::string& bytes, const ThreadOptions& options, const std::string& what) {
  const ReadThread reference = read_thread_reference(bytes, "t.json", options.max_depth);
  const ReadThread fast = read_thread_fast(bytes, "t.json", options);
  if (reference.number_too_big) return;
  if (!reference.json_valid || !fast.json_valid) {
    if (fast.json_valid != reference.json_valid)
      std::ofstream("/tmp/thread-reader-mismatch.json", std::ios::binary) << bytes;
    ASSERT_EQ(fast.json_valid, reference.json_valid) << what << "\n" << describe(fast);
    return;
  }
  ASSERT_EQ(describe(fast), describe(reference)) << what;
}

TEST(ThreadReaderTest, GoldenExportsReadAsTheReferenceReadsThem) {
  const auto exports = golden_exports();
  ASSERT_GT(exports.size(), 50u);
  for (const auto& path : exports) {
    const std::string bytes = slurp(path);
    expect_same_reading(bytes, ThreadOptions(), path.string());
  }
}

// Mutations: a byte changed, removed or repeated, or a JSON token put in.
TEST(ThreadReaderTest, MutatedExportsReadAsTheReferenceReadsThem) {
  const auto exports = golden_exports();
  std::mt19937 random(25);
  const std::vector<std::string> tokens = {
      "\"", "{",     "}",      "[",        "]",       ",",       ":",       "null",         "1",
      "-0", "1e999", "\"id\"", "\"kind\"", "\"seq\"", "\\u0000", "\\ud800", "\"pi.chunk\"", "\"chat\"",
      "\n"};
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = slurp(exports[random() % exports.size()]);
    if (bytes.empty()) continue;
    for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
      const std::size_t at = random() % bytes.size();
      switch (random() % 4) {
        case 0: bytes[at] = static_cast<char>(random() % 128); break;
        case 1: bytes.erase(at, 1 + random() % 8); break;
        case 2: bytes.insert(at, bytes.substr(at, 1 + random() % 16)); break;
        default: bytes.insert(at, tokens[random() % tokens.size()]); break;
      }
    }
    expect_same_reading(bytes, ThreadOptions(), "round " + std::to_string(round));
    if (HasFatalFailure()) return;
  }
}

// The comparison can fail: a reading that differs in one entry shows.
TEST(ThreadReaderTest, AnotherReadingIsSeen) {
  const std::string bytes = slurp(golden_exports().front());
  ReadThread reference = read_thread_reference(bytes, "t.json", 512);
  ASSERT_FALSE(reference.entries.empty());
  const ReadThread fast = read_thread_fast(bytes, "t.json", ThreadOptions());
  EXPECT_EQ(describe(fast), describe(reference));
  reference.entries.back().id += "x";
  EXPECT_NE(describe(fast), describe(reference));
}

}  // namespace
}  // namespace pihydrate
