// The quick JSON syntax check: "certainly valid" or "not sure" (RapidJSON then decides).
#include "core/json_check.h"

#include <thread>

#include "core/fast_sax.h"
#include "core/utf8.h"

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// The AVX2 block walk is compiled for AVX2 on its own (a target attribute)
// and chosen at run time: the build stays baseline x86-64.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PIHYDRATE_AVX2_WALK 1
#include <immintrin.h>
#endif

namespace pihydrate {

namespace {

// The bytes of a string literal that need a look: '"', '\\', control bytes
// (< 0x20) and, with kNonAscii, bytes of 0x80 and up.
template <bool kNonAscii>
inline bool is_string_special(unsigned char c) {
  return c == '"' || c == '\\' || c < 0x20 || (kNonAscii && c >= 0x80);
}

#if defined(__SSE2__)
// is_string_special of the 16 bytes at p, as a bit mask.
template <bool kNonAscii>
inline std::uint32_t special_mask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  // kNonAscii: signed v < 0x20 is a control byte or one of 0x80 and up;
  // otherwise v <= 0x1F (unsigned) exactly when max(v, 0x1F) == 0x1F.
  const __m128i low = kNonAscii ? _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))
                                : _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
  const __m128i hit =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))), low);
  return static_cast<std::uint32_t>(_mm_movemask_epi8(hit));
}
#endif

template <bool kNonAscii>
const char* next_special(const char* p, const char* end) {
#if defined(__SSE2__)
  while (end - p >= 16) {
    if (const std::uint32_t mask = special_mask16<kNonAscii>(p)) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < end && !is_string_special<kNonAscii>(static_cast<unsigned char>(*p))) ++p;
  return p;
}

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

enum class Step { kGoOn, kClosingQuote, kRejected };

// What a backslash followed by each byte is: the escape's length, or 0 when
// it is not a JSON escape. A table, not a chain of comparisons: which
// escape comes next (\", \n, \\, \t...) is what the branch predictor cannot
// guess.
struct EscapeLengths {
  std::uint8_t of[256] = {};
  constexpr EscapeLengths() {
    for (unsigned char c : {'"', '\\', '/', 'b', 'f', 'n', 'r', 't'}) of[c] = 2;
    of[static_cast<unsigned char>('u')] = 6;
  }
};
constexpr EscapeLengths kEscapeLengths;

// Looks at the special byte at q; on kGoOn, `next` is where scanning goes on.
// Always inline: called for every special byte (every 20 bytes or so of
// tool output), and the UTF-8 variant was otherwise left a call.
template <bool kCheckUtf8>
[[gnu::always_inline]] inline Step step_over_special(const char* q, const char* end, StringScan& scan,
                                                     const char*& next) {
  const auto c = static_cast<unsigned char>(*q);
  if (c == '\\') {
    scan.escaped = true;
    if (end - q < 2) return Step::kRejected;
    const std::uint8_t length = kEscapeLengths.of[static_cast<unsigned char>(q[1])];
    if (length == 2) {
      next = q + 2;
      return Step::kGoOn;
    }
    if (length == 0 || end - q < 6 || !is_hex(q[2]) || !is_hex(q[3]) || !is_hex(q[4]) || !is_hex(q[5]))
      return Step::kRejected;
    // A surrogate escape: RapidJSON decides what to make of it.
    if ((q[2] == 'd' || q[2] == 'D') && !(q[3] >= '0' && q[3] <= '7')) return Step::kRejected;
    next = q + 6;
    return Step::kGoOn;
  }
  if (c == '"') return Step::kClosingQuote;
  if (kCheckUtf8 && c >= 0x80) {
    // The same walk as find_invalid_utf8's, which stops at the first bad byte.
    const std::size_t length =
        utf8_sequence_length(reinterpret_cast<const unsigned char*>(q), static_cast<std::size_t>(end - q));
    if (length == 0 && scan.first_invalid_utf8 == nullptr) scan.first_invalid_utf8 = q;
    next = q + (length == 0 ? 1 : length);
    return Step::kGoOn;
  }
  return Step::kRejected;  // a control byte
}

#if defined(__SSE2__)
// The bytes of 64 that need a look, one bit per byte.
struct BlockMasks {
  std::uint64_t quote = 0, backslash = 0, control = 0, non_ascii = 0;
};

// The bytes of 64 that need a look, as one mask (see is_string_special).
template <bool kNonAscii>
inline std::uint64_t special_mask64(const char* block) {
  return std::uint64_t{special_mask16<kNonAscii>(block)} | std::uint64_t{special_mask16<kNonAscii>(block + 16)} << 16 |
         std::uint64_t{special_mask16<kNonAscii>(block + 32)} << 32 |
         std::uint64_t{special_mask16<kNonAscii>(block + 48)} << 48;
}

// The bytes of 64 that need a look, one mask per kind.
inline BlockMasks classify_block(const char* block) {
  BlockMasks m;
#pragma GCC unroll 4
  for (int lane = 0; lane < 4; ++lane) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * lane));
    const auto bits = [](__m128i hits) { return std::uint64_t{static_cast<std::uint32_t>(_mm_movemask_epi8(hits))}; };
    const std::uint64_t non_ascii = bits(v);  // the sign bits
    m.quote |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) << (16 * lane);
    m.backslash |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) << (16 * lane);
    // Signed, below 0x20 is a control byte or one of 0x80 and up.
    m.control |= (bits(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20))) & ~non_ascii) << (16 * lane);
    m.non_ascii |= non_ascii << (16 * lane);
  }
  return m;
}

// The bytes of a block that a backslash escapes. A run of backslashes
// escapes by pairs, so what a run escapes depends on the parity of its
// start: adding a run's start bit to the run clears exactly that run, which
// picks out the runs starting at even bytes without a loop over them.
// `carry` in: the block's byte 0 is escaped by the block before; out: this
// block's last byte escapes the next block's first.
inline std::uint64_t escaped_bytes(std::uint64_t backslash, std::uint64_t& carry) {
  constexpr std::uint64_t kEven = 0x5555555555555555u;
  const std::uint64_t live = backslash & ~carry;  // an escaped backslash escapes nothing
  const std::uint64_t starts = live & ~(live << 1);
  const std::uint64_t even_runs = live & ~(live + (starts & kEven));
  const std::uint64_t escapers = (even_runs & kEven) | (live & ~even_runs & ~kEven);
  const std::uint64_t escaped = (escapers << 1) | carry;
  carry = escapers >> 63;
  return escaped;
}

// A \u escape whose 'u' is at u: four hex digits, and not a surrogate (those
// are left to RapidJSON).
inline bool is_plain_unicode_escape(const char* u, const char* end) {
  if (end - u < 5 || !is_hex(u[1]) || !is_hex(u[2]) || !is_hex(u[3]) || !is_hex(u[4])) return false;
  return !((u[1] == 'd' || u[1] == 'D') && !(u[2] >= '0' && u[2] <= '7'));
}
#endif

}  // namespace

#if defined(__SSE2__)
namespace {

// What a walk of 64-byte blocks carries from one block to the next.
struct BlockWalk {
  std::uint64_t carry = 0;      // the next block's first byte is escaped
  std::uint64_t continued = 0;  // the next block's first bytes end a UTF-8 sequence
};

// Decides a block of 64 bytes from its masks: which bytes are escaped,
// where the first unescaped quote is, whether a control byte comes before
// it. `odd_letters(letters)` gives the escaped letters that are not a
// two-byte escape ("/bfnrt): each must be a \u escape. Only UTF-8 lead
// bytes are looked at one by one.
template <bool kCheckUtf8, typename OddLetters>
[[gnu::always_inline]] inline Step decide_block(const char* block, const char* end, const BlockMasks& m,
                                                BlockWalk& walk, StringScan& scan, const char*& quote,
                                                OddLetters&& odd_letters) {
  const std::uint64_t escaped = escaped_bytes(m.backslash, walk.carry);
  const std::uint64_t quotes = m.quote & ~escaped;
  const std::uint64_t before = (quotes & (~quotes + 1)) - 1;  // all ones when there is no quote
  if (m.control & before) return Step::kRejected;
  if (m.backslash & before) scan.escaped = true;
  if (const std::uint64_t letters = escaped & ~m.backslash & before) {
    for (std::uint64_t odd = odd_letters(letters); odd != 0; odd &= odd - 1) {
      const char* letter = block + __builtin_ctzll(odd);
      if (*letter != 'u' || !is_plain_unicode_escape(letter, end)) return Step::kRejected;
    }
  }
  if (kCheckUtf8 && scan.first_invalid_utf8 == nullptr) {
    std::uint64_t leads = m.non_ascii & before & ~walk.continued;
    walk.continued = 0;
    while (leads != 0) {
      const unsigned at = static_cast<unsigned>(__builtin_ctzll(leads));
      const char* q = block + at;
      const std::size_t length =
          utf8_sequence_length(reinterpret_cast<const unsigned char*>(q), static_cast<std::size_t>(end - q));
      if (length == 0) {
        scan.first_invalid_utf8 = q;  // the first is all that is kept
        break;
      }
      if (at + length >= 64) {
        walk.continued = (std::uint64_t{1} << (at + length - 64)) - 1;
        break;
      }
      leads &= ~std::uint64_t{0} << (at + length);
    }
  }
  if (quotes == 0) return Step::kGoOn;
  quote = block + __builtin_ctzll(quotes);
  return Step::kClosingQuote;
}

// Walks whole blocks from p while 64 bytes are left: kClosingQuote with
// `quote` set, kRejected, or kGoOn with p where fewer than 64 are left.
template <bool kCheckUtf8>
Step walk_blocks_sse2(const char*& p, const char* end, BlockWalk& walk, StringScan& scan, const char*& quote) {
  // Escaped letters are few (a handful per block of code): each is looked
  // up in a table, without a branch on which escape it makes.
  const auto odd_letters = [&p](std::uint64_t letters) {
    unsigned odd = 0;
    for (std::uint64_t bits = letters; bits != 0; bits &= bits - 1)
      odd |= kEscapeLengths.of[static_cast<unsigned char>(p[__builtin_ctzll(bits)])] ^ 2u;
    if (odd == 0) return std::uint64_t{0};
    std::uint64_t found = 0;
    for (std::uint64_t bits = letters; bits != 0; bits &= bits - 1)
      if (kEscapeLengths.of[static_cast<unsigned char>(p[__builtin_ctzll(bits)])] != 2) found |= bits & (~bits + 1);
    return found;
  };
  for (; end - p >= 64; p += 64) {
    const Step step = decide_block<kCheckUtf8>(p, end, classify_block(p), walk, scan, quote, odd_letters);
    if (step != Step::kGoOn) return step;
  }
  return Step::kGoOn;
}

#if defined(PIHYDRATE_AVX2_WALK)
#define PIHYDRATE_AVX2 gnu::target("avx2")

[[PIHYDRATE_AVX2]] inline std::uint64_t bits_of(__m256i hits) {
  return std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(hits))};
}

// The escaped letters of a block, checked all at once: a byte is one of
// "\\/bfnrt when the table of its low nibble and the table of its high
// nibble share a bit (one bit per high nibble: 2, 5, 6, 7).
struct Avx2OddLetters {
  __m256i a, b;  // the block
  [[PIHYDRATE_AVX2]] static std::uint64_t not_two_byte_escapes(__m256i v) {
    const __m256i by_low = _mm256_setr_epi8(0, 0, 0x1 | 0x4 | 0x8, 0, 0x8, 0, 0x4, 0, 0, 0, 0, 0, 0x2, 0, 0x4, 0x1,  //
                                            0, 0, 0x1 | 0x4 | 0x8, 0, 0x8, 0, 0x4, 0, 0, 0, 0, 0, 0x2, 0, 0x4, 0x1);
    const __m256i by_high = _mm256_setr_epi8(0, 0, 0x1, 0, 0, 0x2, 0x4, 0x8, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                             0, 0, 0x1, 0, 0, 0x2, 0x4, 0x8, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i low = _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
    const __m256i both = _mm256_and_si256(_mm256_shuffle_epi8(by_low, low), _mm256_shuffle_epi8(by_high, high));
    return bits_of(_mm256_cmpeq_epi8(both, _mm256_setzero_si256()));
  }
  [[PIHYDRATE_AVX2]] std::uint64_t operator()(std::uint64_t letters) const {
    return letters & (not_two_byte_escapes(a) | not_two_byte_escapes(b) << 32);
  }
};

// The same walk as walk_blocks_sse2, 32 bytes to a vector.
template <bool kCheckUtf8>
[[PIHYDRATE_AVX2]] Step walk_blocks_avx2(const char*& p, const char* end, BlockWalk& walk, StringScan& scan,
                                         const char*& quote) {
  for (; end - p >= 64; p += 64) {
    Avx2OddLetters block;
    block.a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    block.b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    const __m256i a = block.a, b = block.b;
    BlockMasks m;
    m.quote = bits_of(_mm256_cmpeq_epi8(a, _mm256_set1_epi8('"'))) |
              bits_of(_mm256_cmpeq_epi8(b, _mm256_set1_epi8('"'))) << 32;
    m.backslash = bits_of(_mm256_cmpeq_epi8(a, _mm256_set1_epi8('\\'))) |
                  bits_of(_mm256_cmpeq_epi8(b, _mm256_set1_epi8('\\'))) << 32;
    m.non_ascii = bits_of(a) | bits_of(b) << 32;
    // Signed, below 0x20 is a control byte or one of 0x80 and up.
    m.control = (bits_of(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), a)) |
                 bits_of(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), b)) << 32) &
                ~m.non_ascii;
    const Step step = decide_block<kCheckUtf8>(p, end, m, walk, scan, quote, block);
    if (step != Step::kGoOn) return step;
  }
  return Step::kGoOn;
}
#undef PIHYDRATE_AVX2
#endif

template <bool kCheckUtf8>
using BlockWalker = Step (*)(const char*&, const char*, BlockWalk&, StringScan&, const char*&);

bool processor_has_avx2() {
#if defined(PIHYDRATE_AVX2_WALK)
  __builtin_cpu_init();  // this may run before main, in a static initializer
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

// The walks taken: SSE2's from the start (constant-initialized, so a scan
// in another file's static initializer finds them), AVX2's once the
// processor is asked, before main (and by tests).
struct BlockWalkers {
  BlockWalker<true> checking_utf8;
  BlockWalker<false> plain;
  void select(StringScanWalk walk) {
#if defined(PIHYDRATE_AVX2_WALK)
    if (walk == StringScanWalk::kAvx2) {
      checking_utf8 = walk_blocks_avx2<true>;
      plain = walk_blocks_avx2<false>;
      return;
    }
#endif
    checking_utf8 = walk_blocks_sse2<true>;
    plain = walk_blocks_sse2<false>;
  }
  template <bool kCheckUtf8>
  BlockWalker<kCheckUtf8> get() const {
    if constexpr (kCheckUtf8)
      return checking_utf8;
    else
      return plain;
  }
};
BlockWalkers block_walkers{walk_blocks_sse2<true>, walk_blocks_sse2<false>};
[[maybe_unused]] const bool avx2_walk_chosen = [] {
  if (processor_has_avx2()) block_walkers.select(StringScanWalk::kAvx2);
  return true;
}();

}  // namespace
#endif

template <bool kCheckUtf8>
const char* scan_string_contents(const char* p, const char* end, StringScan& scan) {
  const char* next = nullptr;
#if defined(__SSE2__)
  // Most strings are keys, ids and short values that end within 64 bytes:
  // those are walked special byte by special byte, which costs less than
  // the masks below when there are few of them.
  if (end - p >= 64) {
    const char* block = p;
    std::uint64_t mask = special_mask64<kCheckUtf8>(block);
    p = block + 64;
    while (mask != 0) {
      const char* q = block + __builtin_ctzll(mask);
      const Step step = step_over_special<kCheckUtf8>(q, end, scan, next);
      if (step == Step::kClosingQuote) return q;
      if (step == Step::kRejected) return nullptr;
      const auto consumed = static_cast<std::size_t>(next - block);
      if (consumed >= 64) {  // an escape or sequence running into the next block
        p = next;
        break;
      }
      mask &= ~std::uint64_t{0} << consumed;
    }
  }
  // Past them, tool output is dense with escapes and non-ASCII text (a
  // special byte every dozen bytes or so): each further block of 64 bytes
  // is decided with bit masks (decide_block), with AVX2 where the processor
  // has it.
  BlockWalk walk;
  if (end - p >= 64) {
    const char* quote = nullptr;
    const Step step = block_walkers.get<kCheckUtf8>()(p, end, walk, scan, quote);
    if (step == Step::kClosingQuote) return quote;
    if (step == Step::kRejected) return nullptr;
  }
  // Fewer than 64 bytes are left: the byte-by-byte walk goes on from the
  // escaping backslash, or past a UTF-8 sequence begun in the last block.
  if (walk.carry)
    p -= 1;
  else if (walk.continued)
    p += __builtin_ctzll(~walk.continued);
#endif
  for (;;) {
    const char* q = next_special<kCheckUtf8>(p, end);
    if (q >= end) return nullptr;
    const Step step = step_over_special<kCheckUtf8>(q, end, scan, next);
    if (step == Step::kClosingQuote) return q;
    if (step == Step::kRejected) return nullptr;
    p = next;
  }
}

#if defined(__SSE2__)
bool string_scan_walk_available(StringScanWalk walk) { return walk == StringScanWalk::kSse2 || processor_has_avx2(); }
void select_string_scan_walk(StringScanWalk walk) {
  if (string_scan_walk_available(walk)) block_walkers.select(walk);
}
#else
bool string_scan_walk_available(StringScanWalk) { return false; }
void select_string_scan_walk(StringScanWalk) {}
#endif

template const char* scan_string_contents<false>(const char*, const char*, StringScan&);
template const char* scan_string_contents<true>(const char*, const char*, StringScan&);

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
  // So a later pass over the same bytes may step over a long string.
  static constexpr bool kChecksUtf8 = true;
  LongValues* long_values;
  const char* origin;  // the byte at offset 0
  ProgressReports progress;
  void ignored_string(const char* quote, const char* past_end) {
    progress.at(static_cast<std::size_t>(past_end - origin));
    if (static_cast<std::size_t>(past_end - quote) > LongValues::kMinLength)
      long_values->add_string(static_cast<std::size_t>(quote - origin), static_cast<std::size_t>(past_end - origin));
  }
  void skipped_container(const char* open, const char* past_close, bool loose) {
    if (static_cast<std::size_t>(past_close - open) > LongValues::kMinLength)
      long_values->add_container(static_cast<std::size_t>(open - origin), static_cast<std::size_t>(past_close - origin),
                                 loose);
  }
  std::vector<std::size_t>* line_starts = nullptr;
  void newline(const char* after) {
    if (line_starts) line_starts->push_back(static_cast<std::size_t>(after - origin));
  }
  // The elements of a top-level object's arrays (see SecondThread).
  static constexpr std::size_t kElementLevel = 3;
  std::vector<ElementSpan>* elements = nullptr;
  void element(const char* begin, const char* past_end) {
    if (elements)
      elements->push_back({static_cast<std::size_t>(begin - origin), static_cast<std::size_t>(past_end - origin)});
  }
};

}  // namespace

bool is_certainly_valid_json(std::string_view text, std::size_t max_depth) {
  CheckOnly check;
  FastSaxReader<CheckOnly> reader;
  return reader.parse(text.data(), text.data() + text.size(), check, max_depth);
}

bool is_certainly_valid_json(std::string_view text, std::size_t max_depth, LongValues& long_values, std::size_t base,
                             const std::function<void(std::size_t)>& progress) {
  return is_certainly_valid_json(text, max_depth, long_values, base, progress, SecondThread{});
}

bool is_certainly_valid_json(std::string_view text, std::size_t max_depth, LongValues& long_values, std::size_t base,
                             const std::function<void(std::size_t)>& progress, const SecondThread& second,
                             std::vector<std::size_t>* line_starts, std::vector<ElementSpan>* elements) {
  long_values.clear();
  long_values.reserve_for(text.size());
  CheckCollectingLongValues check;
  check.long_values = &long_values;
  check.line_starts = line_starts;
  check.elements = elements;
  check.origin = text.data() - base;
  check.progress = ProgressReports(progress, base);
  FastSaxReader<CheckCollectingLongValues> reader;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  // A top-level string is not inside a container: its span is found the slow way.
  if (p < end && *p != '{' && *p != '[') return false;
  if (second.at == 0 || second.at >= text.size() || *p != '{') {
    if (!reader.parse(text.data(), end, check, max_depth)) return false;
    long_values.finish();
    long_values.set_strings_valid_utf8(reader.first_invalid_utf8() == nullptr);
    return true;
  }

  // The guess: elements of an array inside the top-level object, at the
  // level skip_rest counts there (the object's reader is at depth 1, and
  // it and the array are open).
  constexpr std::size_t kEntriesLevel = CheckCollectingLongValues::kElementLevel;
  const char* const at = text.data() + second.at;
  LongValues rest_values;
  std::vector<std::size_t> rest_line_starts;
  std::vector<ElementSpan> rest_elements;
  const char* rest_end = nullptr;
  bool rest_loose = false;
  bool rest_valid_utf8 = false, joined = false;
  std::function<void(std::size_t)> rest_listener;
  if (second.progress) rest_listener = [&](std::size_t offset) { second.progress(base + second.at, offset); };
  std::thread helper;
  struct JoinOnExit {
    std::thread& thread;
    ~JoinOnExit() {
      if (thread.joinable()) thread.join();  // it uses this frame; when the guess was wrong, its work is dropped
    }
  } join_on_exit{helper};
  helper = std::thread([&] {
    try {
      CheckCollectingLongValues rest;
      rest.long_values = &rest_values;
      if (line_starts) rest.line_starts = &rest_line_starts;
      if (elements) rest.elements = &rest_elements;
      rest.origin = check.origin;
      rest.progress = ProgressReports(rest_listener, base + second.at);
      FastSaxReader<CheckCollectingLongValues> rest_reader;
      rest_end = rest_reader.skip_rest_of_array(at, end, rest, max_depth, kEntriesLevel, rest_loose);
      rest_valid_utf8 = rest_reader.first_invalid_utf8() == nullptr;
      if (rest_end) rest_values.sort_containers();
    } catch (...) {
      rest_end = nullptr;  // out of memory: the first reader goes on by itself
    }
  });
  FastSaxReader<CheckCollectingLongValues>::Continuation continuation;
  continuation.at = at;
  continuation.level = kEntriesLevel;
  continuation.join = [&](bool& loose) -> const char* {
    long_values.sort_containers();  // while the helper may still be reading
    if (helper.joinable()) helper.join();
    if (!rest_end) return nullptr;
    // The second half's long values follow the first's, strings in order.
    long_values.append(std::move(rest_values));
    if (line_starts) line_starts->insert(line_starts->end(), rest_line_starts.begin(), rest_line_starts.end());
    if (elements) elements->insert(elements->end(), rest_elements.begin(), rest_elements.end());
    loose = rest_loose;
    joined = true;
    return rest_end;
  };
  reader.set_continuation(&continuation);
  if (!reader.parse(text.data(), end, check, max_depth)) return false;
  long_values.finish();
  long_values.set_strings_valid_utf8(reader.first_invalid_utf8() == nullptr && (!joined || rest_valid_utf8));
  return true;
}

}  // namespace pihydrate
