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
    std::size_t need;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c == 0xE0) {
      need = 2, lo = 0xA0;
    } else if (c >= 0xE1 && c <= 0xEC) {
      need = 2;
    } else if (c == 0xED) {
      need = 2, hi = 0x9F;  // no UTF-16 surrogates
    } else if (c >= 0xEE && c <= 0xEF) {
      need = 2;
    } else if (c == 0xF0) {
      need = 3, lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
      need = 3;
    } else if (c == 0xF4) {
      need = 3, hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (i + need >= n) return i;  // truncated sequence
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k <= need; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
    }
    i += need + 1;
  }
  return kUtf8Valid;
}

}  // namespace pihydrate
