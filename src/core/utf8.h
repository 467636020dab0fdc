// Strict UTF-8 checking, with the same idea of "invalid" as the WHATWG
// decoder node uses: overlong forms, surrogates and code points above
// U+10FFFF are invalid (node replaces them with U+FFFD).
#pragma once

#include <cstddef>
#include <string_view>

namespace pihydrate {

constexpr std::size_t kUtf8Valid = static_cast<std::size_t>(-1);

// Returns the byte offset of the first invalid sequence, or kUtf8Valid.
std::size_t find_invalid_utf8(std::string_view bytes);

// Whether JavaScript's trim() removes this code point: \t \n \v \f \r,
// space, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000 and U+FEFF.
bool is_js_space(char32_t code_point);

// The length of the valid sequence that starts with the non-ASCII byte p[0]
// (`available` bytes from p on), or 0 when it is invalid or cut short.
inline std::size_t utf8_sequence_length(const unsigned char* p, std::size_t available) {
  const unsigned char c = p[0];
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
    return 0;
  }
  if (need >= available) return 0;  // cut short
  if (p[1] < lo || p[1] > hi) return 0;
  for (std::size_t k = 2; k <= need; ++k) {
    if ((p[k] & 0xC0) != 0x80) return 0;
  }
  return need + 1;
}

}  // namespace pihydrate
