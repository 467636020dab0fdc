// The JSONL reader and scanner on arbitrary bytes, with small caps and
// tiny read chunks so line splitting across refills is exercised too; and
// the scanner's fast path against RapidJSON alone on the same bytes.
#include <deque>
#include <vector>

#include "core/entry_scanner.h"
#include "core/utf8.h"
#include "fuzz_common.h"

namespace {

// The fast path and RapidJSON alone must agree on a line: same status, and
// for a parsed line the same fields the rules read.
void compare_scan_paths(std::string_view line, std::size_t max_depth) {
  using namespace pihydrate;
  if (line.find('\n') != std::string_view::npos) return;
  Entry entries[2];
  BadLine bad[2];
  ScanStatus status[2];
  StringArena arena;
  std::vector<ToolCallRef> calls[2];
  std::deque<EntryDetails> details[2];
  for (int fast = 0; fast < 2; ++fast) {
    EntryScanner scanner(arena, calls[fast], details[fast], max_depth);
    scanner.set_fast_path(fast == 1);
    std::vector<char> buffer(line.begin(), line.end());
    buffer.push_back('\0');
    status[fast] = scanner.scan(buffer.data(), line.size(), 0, entries[fast], bad[fast]);
    // Both paths give the UTF-8 verdict of the line as it was before the scan.
    if (scanner.utf8_verdict() != find_invalid_utf8(line)) __builtin_trap();
  }
  if (status[0] != status[1]) __builtin_trap();
  if (status[0] != ScanStatus::kParsed) return;
  const Entry& a = entries[0];
  const Entry& b = entries[1];
  auto same = [](const Field& x, const Field& y) {
    return x.kind == y.kind && x.column == y.column && x.text() == y.text();
  };
  if (a.root != b.root || a.falsy != b.falsy || a.type != b.type || a.type_text() != b.type_text() ||
      !same(a.id, b.id) || !same(a.parent_id, b.parent_id) || !same(a.timestamp, b.timestamp) ||
      a.message.kind != b.message.kind || a.role != b.role || a.content_kind != b.content_kind ||
      a.stop_reason != b.stop_reason || !same(a.tool_call_id, b.tool_call_id) ||
      !same(a.message_timestamp, b.message_timestamp) || a.tool_calls_count != b.tool_calls_count ||
      !same(a.details().cwd, b.details().cwd) || !same(a.details().target_id, b.details().target_id))
    __builtin_trap();
  for (std::uint32_t i = 0; i < a.tool_calls_count; ++i) {
    const ToolCallRef& x = calls[0][a.tool_calls_begin + i];
    const ToolCallRef& y = calls[1][b.tool_calls_begin + i];
    if (x.id != y.id || x.name != y.name || x.column != y.column) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pihydrate;
  if (size == 0) return 0;
  IndexOptions options;
  options.reader.read_chunk = 1 + data[0] % 64;
  options.reader.max_line_bytes = 16 + data[0] * 64u;
  options.max_depth = 1 + data[0] % 96;
  options.max_entries = 1000;
  compare_scan_paths(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), options.max_depth);
  auto source = make_memory_source(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  SessionIndex index = build_session_index(*source, "fuzz", options);
  for (const Entry& e : index.entries) {
    if (e.offset + e.length > size) __builtin_trap();  // spans must stay inside the input
  }
  return 0;
}
