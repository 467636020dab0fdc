// Which of the input's long strings an output line carries unchanged, and
// where they land in the output.
#include <algorithm>

#include "hydrate/plan.h"

namespace pihydrate {

void note_carried_strings(const LongStrings& input, std::uint64_t in, std::uint64_t out, std::uint64_t length,
                          LongStrings& carried) {
  auto it = std::lower_bound(input.begin.begin(), input.begin.end(), in);
  for (std::size_t k = static_cast<std::size_t>(it - input.begin.begin()); k < input.begin.size(); ++k) {
    const std::uint64_t begin = input.begin[k], end = begin + input.length[k];
    if (end > in + length) break;  // this one runs past the copied bytes; later ones start after it
    carried.add(out + (begin - in), input.length[k]);
  }
}

}  // namespace pihydrate
