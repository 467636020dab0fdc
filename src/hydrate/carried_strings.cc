// Which of the input's long strings an output line carries unchanged, and
// where they land in the output.
#include "hydrate/plan.h"

namespace pihydrate {

void note_carried_strings(const LongStrings& input, std::uint64_t in, std::uint64_t out, std::uint64_t length,
                          LongStrings& carried) {
  for (std::size_t k = input.first_at_or_after(in); k < input.size(); ++k) {
    // Each is carried once at most; the cap keeps a bug from growing the list.
    if (carried.size() >= input.size()) return;
    const std::uint64_t begin = input.begin(k), end = begin + input.length(k);
    if (end > in + length) break;  // this one runs past the copied bytes; later ones start after it
    carried.add(out + (begin - in), input.length(k));
  }
}

}  // namespace pihydrate
