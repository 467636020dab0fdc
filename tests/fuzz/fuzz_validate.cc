// The validator (all levels, both pi versions) on arbitrary bytes.
#include "fuzz_common.h"
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
  auto source = make_memory_source(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  FileReport report = validate_source(*source, "fuzz", o);
  if (report.resumable && !report.loadable) __builtin_trap();
  return 0;
}
