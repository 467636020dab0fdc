// UTF-8: the first invalid sequence of a text (JSON.parse's reading), and JavaScript's white space.
#include "core/utf8.h"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pihydrate {

std::size_t find_invalid_utf8(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
#if defined(__SSE2__)
    // Fast path: 64 ASCII bytes at a time (JSON is mostly ASCII); a block
    // with any high bit set goes byte by byte below.
    while (i + 64 <= n) {
      const auto* b = reinterpret_cast<const __m128i*>(p + i);
      const __m128i any = _mm_or_si128(_mm_or_si128(_mm_loadu_si128(b), _mm_loadu_si128(b + 1)),
                                       _mm_or_si128(_mm_loadu_si128(b + 2), _mm_loadu_si128(b + 3)));
      if (_mm_movemask_epi8(any) != 0) break;
      i += 64;
    }
    if (i == n) break;  // all ASCII to the end: p[n] is not ours to read
#endif
    // Eight ASCII bytes at a time.
    if (i + 8 <= n) {
      std::uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    const std::size_t length = utf8_sequence_length(p + i, n - i);
    if (length == 0) return i;
    i += length;
  }
  return kUtf8Valid;
}

bool is_js_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

}  // namespace pihydrate
