// Thread export conversion and hydration on arbitrary bytes, and the quick
// JSON syntax check against RapidJSON's.
#include <string>

#include <rapidjson/reader.h>

#include "core/json_check.h"
#include "fuzz_common.h"
#include "pihydrate/thread_export.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pihydrate;
  if (size == 0) return 0;
  ThreadOptions to;
  to.partial = static_cast<PartialPolicy>(data[0] % 3);
  to.trailer = (data[0] & 4) != 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  // What the quick check calls certainly valid, RapidJSON must accept.
  if (bytes.find('\0') == std::string::npos && is_certainly_valid_json(bytes, 512)) {
    rapidjson::StringStream stream(bytes.c_str());
    rapidjson::BaseReaderHandler<> handler;
    rapidjson::Reader reader;
    if (reader.Parse<rapidjson::kParseNumbersAsStringsFlag>(stream, handler).IsError()) __builtin_trap();
  }
  ConvertedThread thread = convert_thread_export(bytes, "fuzz", to);
  if (!thread.ok()) return 0;
  HydrateOptions o = fuzz::options_from(data[0]);
  o.session_id = thread.session_id;
  auto source = make_memory_source(thread.session);
  SessionIndex index = build_session_index(*source, "fuzz", o.index);
  auto lines = make_memory_line_source(thread.session);
  fuzz::CountingSink sink;
  HydrateReport report;
  hydrate_session(index, *lines, o, sink, report);
  return 0;
}
