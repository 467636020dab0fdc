// Session hydration on arbitrary bytes. Whatever it writes must itself be
// accepted by the scanner: one JSON object per line; and what it says it
// carries from the input must hold.
#include <string>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pihydrate;
  if (size == 0) return 0;
  HydrateOptions o = fuzz::options_from(data[0]);
  o.index.record_long_strings = true;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto source = make_memory_source(bytes);
  SessionIndex index = build_session_index(*source, "fuzz", o.index);
  auto lines = make_memory_line_source(bytes);
  fuzz::CollectingSink sink;
  HydrateReport report;
  if (!hydrate_session(index, *lines, o, sink, report)) return 0;
  auto out_source = make_memory_source(sink.text);
  SessionIndex out = build_session_index(*out_source, "out");
  if (!out.bad_lines.empty()) __builtin_trap();  // every written line parses
  fuzz::check_carried_strings(bytes, index, report, sink.text);
  return 0;
}
