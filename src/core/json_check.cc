#include "core/json_check.h"

#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pihydrate {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The first quote, backslash or control byte in [p, end), or end: the only
// bytes inside a string literal that need a look.
const char* next_special(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x1F);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // v <= 0x1F (unsigned) exactly when max(v, 0x1F) == 0x1F.
    const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(v, space), space);
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), control);
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < end && *p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) ++p;
  return p;
}

// p at the opening quote; on success p is past the closing one.
bool skip_string(const char*& p, const char* end) {
  ++p;
  for (;;) {
    p = next_special(p, end);
    if (p >= end || static_cast<unsigned char>(*p) < 0x20) return false;
    if (*p == '"') {
      ++p;
      return true;
    }
    if (end - p < 2) return false;  // a backslash: one escape
    switch (p[1]) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        p += 2;
        break;
      case 'u': {
        if (end - p < 6 || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) || !is_hex(p[5])) return false;
        // Surrogates (d800-dfff) are RapidJSON's to judge.
        const bool surrogate = (p[2] == 'd' || p[2] == 'D') && !(p[3] >= '0' && p[3] <= '7');
        if (surrogate) return false;
        p += 6;
        break;
      }
      default: return false;
    }
  }
}

// RapidJSON refuses numbers beyond double and reads exponents itself: those
// are left to it. Plain numbers of up to 300 characters cannot overflow.
bool skip_number(const char*& p, const char* end) {
  const char* start = p;
  if (p < end && *p == '-') ++p;
  if (p >= end || !is_digit(*p)) return false;
  if (*p == '0') {
    ++p;
  } else {
    while (p < end && is_digit(*p)) ++p;
  }
  if (p < end && *p == '.') {
    ++p;
    if (p >= end || !is_digit(*p)) return false;
    while (p < end && is_digit(*p)) ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) return false;
  return p - start <= 300;
}

bool skip_literal(const char*& p, const char* end, std::string_view word) {
  if (static_cast<std::size_t>(end - p) < word.size() || std::string_view(p, word.size()) != word) return false;
  p += word.size();
  return true;
}

}  // namespace

bool is_certainly_valid_json(std::string_view text, std::size_t max_depth) {
  enum class Need { kValue, kValueOrClose, kKey, kKeyOrClose, kColon, kCommaOrClose, kNothing };
  const char* p = text.data();
  const char* const end = p + text.size();
  std::vector<char> open;  // '{' or '[' per level
  Need need = Need::kValue;
  for (;;) {
    while (p < end && is_ws(*p)) ++p;
    if (p >= end) return need == Need::kNothing;
    const char c = *p;
    switch (need) {
      case Need::kNothing: return false;  // text after the value
      case Need::kColon:
        if (c != ':') return false;
        ++p;
        need = Need::kValue;
        continue;
      case Need::kCommaOrClose:
        if (c == ',') {
          ++p;
          need = open.back() == '{' ? Need::kKey : Need::kValue;
          continue;
        }
        if ((c == '}' && open.back() == '{') || (c == ']' && open.back() == '[')) {
          ++p;
          open.pop_back();
          need = open.empty() ? Need::kNothing : Need::kCommaOrClose;
          continue;
        }
        return false;
      case Need::kKeyOrClose:
        if (c == '}') {
          ++p;
          open.pop_back();
          need = open.empty() ? Need::kNothing : Need::kCommaOrClose;
          continue;
        }
        [[fallthrough]];
      case Need::kKey:
        if (c != '"' || !skip_string(p, end)) return false;
        need = Need::kColon;
        continue;
      case Need::kValueOrClose:
        if (c == ']') {
          ++p;
          open.pop_back();
          need = open.empty() ? Need::kNothing : Need::kCommaOrClose;
          continue;
        }
        [[fallthrough]];
      case Need::kValue:
        break;
    }
    // A value.
    bool ok = true;
    if (c == '{' || c == '[') {
      if (open.size() >= max_depth) return false;
      open.push_back(c);
      ++p;
      need = c == '{' ? Need::kKeyOrClose : Need::kValueOrClose;
      continue;
    }
    if (c == '"') ok = skip_string(p, end);
    else if (c == 't') ok = skip_literal(p, end, "true");
    else if (c == 'f') ok = skip_literal(p, end, "false");
    else if (c == 'n') ok = skip_literal(p, end, "null");
    else ok = skip_number(p, end);
    if (!ok) return false;
    need = open.empty() ? Need::kNothing : Need::kCommaOrClose;
  }
}

}  // namespace pihydrate
