// The converter's fast reader of thread exports against the reference
// reader (src/hydrate/thread_reading.h) on arbitrary bytes: the same
// entries, diagnostics and repairs.
#include <cstdint>
#include <string>

#include "common/thread_reference_reader.h"

namespace {

bool same(const pihydrate::ReadThread& a, const pihydrate::ReadThread& b) {
  if (a.json_valid != b.json_valid) return false;
  if (!a.json_valid) return true;  // both leave the message to RapidJSON
  if (a.entries != b.entries || a.entry_count != b.entry_count || a.repairs != b.repairs) return false;
  if (a.diagnostics.size() != b.diagnostics.size()) return false;
  for (std::size_t i = 0; i < a.diagnostics.size(); ++i) {
    const pihydrate::Diagnostic& x = a.diagnostics[i];
    const pihydrate::Diagnostic& y = b.diagnostics[i];
    if (x.code != y.code || x.severity != y.severity || x.line != y.line || x.column != y.column ||
        x.message != y.message)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pihydrate;
  const ThreadOptions options;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const ReadThread reference = read_thread_reference(bytes, "t.json", options.max_depth);
  if (reference.number_too_big) return 0;  // past what the reference reads (JSON.parse: Infinity)
  if (!same(read_thread_fast(bytes, "t.json", options), reference)) __builtin_trap();
  return 0;
}
