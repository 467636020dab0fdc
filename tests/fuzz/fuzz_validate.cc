// The validator (all levels, both pi versions) and the resumed context
// (pi-hydrate context) on arbitrary bytes.
#include "fuzz_common.h"
#include "pihydrate/context.h"
#include "pihydrate/validator.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pihydrate;
  if (size == 0) return 0;
  ValidateOptions o;
  o.level = Level::kLint;
  o.pi_version = (data[0] & 1) ? PiVersion::k0_78 : PiVersion::k1_5;
  o.check_cwd = (data[0] & 2) != 0;
  o.linear = (data[0] & 4) != 0;
  o.index.max_depth = 64;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto source = make_memory_source(bytes);
  SessionIndex index = build_session_index(*source, "fuzz", o.index);
  PiView view = build_pi_view(index, o.pi_version);
  FileReport report = validate_index(index, view, o);
  if (report.resumable && !report.loadable) __builtin_trap();
  // Every message sent comes from a line of the path, or is pi-ai's answer to a call.
  ResumeContext rc =
      build_resume_context(index, view, [&](const Entry& e) { return std::string(bytes.substr(e.offset, e.length)); });
  for (const SentMessage& m : rc.messages)
    if ((m.line == 0) != (m.source == SentSource::kSynthesized)) __builtin_trap();
  return 0;
}
