// The JSONL reader and scanner on arbitrary bytes, with small caps and
// tiny read chunks so line splitting across refills is exercised too.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pihydrate;
  if (size == 0) return 0;
  IndexOptions options;
  options.reader.read_chunk = 1 + data[0] % 64;
  options.reader.max_line_bytes = 16 + data[0] * 64u;
  options.max_depth = 1 + data[0] % 96;
  options.max_entries = 1000;
  auto source = make_memory_source(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  SessionIndex index = build_session_index(*source, "fuzz", options);
  for (const Entry& e : index.entries) {
    if (e.offset + e.length > size) __builtin_trap();  // spans must stay inside the input
  }
  return 0;
}
