#include "core/json_check.h"

#include "core/fast_sax.h"

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pihydrate {

const char* next_string_special(const char* p, const char* end) {
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

namespace {

// Every container is skipped (syntax and depth checked), nothing is kept.
struct CheckOnly {
  bool Null() { return true; }
  bool Bool(bool) { return true; }
  bool RawNumber(const char*, unsigned, bool) { return true; }
  bool String(const char*, unsigned, bool) { return true; }
  bool Key(const char*, unsigned, bool) { return true; }
  bool StartObject() { return true; }
  bool EndObject(unsigned) { return true; }
  bool StartArray() { return true; }
  bool EndArray(unsigned) { return true; }
  bool skips_current() const { return true; }
  bool wants_text() const { return false; }
};

// The check that also records long values. A JSON text that is one
// container has all its values inside skipped containers (itself included).
struct CheckCollectingLongValues : CheckOnly {
  static constexpr std::size_t kProgressStep = std::size_t{1} << 20;
  LongValues* long_values;
  const char* origin;  // the byte at offset 0
  const std::function<void(std::size_t)>* progress;
  std::size_t next_progress;  // offset of the next report; SIZE_MAX without a listener
  void skipped_string(const char* quote, const char* past_end) {
    if (const auto at = static_cast<std::size_t>(past_end - origin); at >= next_progress) {
      (*progress)(at);
      next_progress = at + kProgressStep;
    }
    if (static_cast<std::size_t>(past_end - quote) > LongValues::kMinLength)
      long_values->add_string(static_cast<std::size_t>(quote - origin), static_cast<std::size_t>(past_end - origin));
  }
  void skipped_container(const char* open, const char* past_close, bool loose) {
    if (static_cast<std::size_t>(past_close - open) > LongValues::kMinLength)
      long_values->add_container(static_cast<std::size_t>(open - origin), static_cast<std::size_t>(past_close - origin),
                                 loose);
  }
};

}  // namespace

bool is_certainly_valid_json(std::string_view text, std::size_t max_depth) {
  CheckOnly check;
  FastSaxReader<CheckOnly> reader;
  return reader.parse(text.data(), text.data() + text.size(), check, max_depth);
}

bool is_certainly_valid_json(std::string_view text, std::size_t max_depth, LongValues& long_values,
                             std::size_t base, const std::function<void(std::size_t)>& progress) {
  long_values.clear();
  CheckCollectingLongValues check;
  check.long_values = &long_values;
  check.origin = text.data() - base;
  check.progress = &progress;
  check.next_progress = progress ? base + CheckCollectingLongValues::kProgressStep : SIZE_MAX;
  FastSaxReader<CheckCollectingLongValues> reader;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  // A top-level string is not inside a container: its span is found the slow way.
  if (p < end && *p != '{' && *p != '[') return false;
  if (!reader.parse(text.data(), end, check, max_depth)) return false;
  long_values.finish();
  return true;
}

}  // namespace pihydrate
