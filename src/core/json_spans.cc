// Walking JSON text by byte offsets: members, elements, string values, edits, long values stepped over.
#include "core/json_spans.h"

#include "core/utf8.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pihydrate {

std::size_t skip_json_ws(std::string_view s, std::size_t pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')) ++pos;
  return pos;
}

namespace {

// To each '"', then an even run of backslashes before it means the quote
// ends the string. Scans [from, to); returns 0 when the string does not end there.
// The first '"' in [p, end), or nullptr. Inline and 16 bytes at a time:
// tool output is dense in escaped quotes, and a memchr call per quote cost
// more than the search.
const char* find_quote(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  while (end - p >= 16) {
    const int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), quote));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  for (; p < end; ++p)
    if (*p == '"') return p;
  return nullptr;
}

// The first '"', '{', '}', '[' or ']' in [p, end), or end: a container's
// walk jumps from one to the next over numbers, literals and punctuation.
const char* next_structural(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
  const __m128i lower = _mm_set1_epi8(0x20);  // '[' | 0x20 is '{', ']' | 0x20 is '}', and no other byte's
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i folded = _mm_or_si128(v, lower);
    const __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                     _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)));
    if (const int mask = _mm_movemask_epi8(hit)) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  for (; p < end; ++p)
    if (*p == '"' || *p == '{' || *p == '}' || *p == '[' || *p == ']') return p;
  return end;
}

std::size_t scan_string_end(std::string_view s, std::size_t pos, std::size_t from, std::size_t to) {
  const char* base = s.data();
  std::size_t i = from;
  while (i < to) {
    const char* q = find_quote(base + i, base + to);
    if (!q) return 0;
    std::size_t at = static_cast<std::size_t>(q - base);
    std::size_t slashes = 0;
    while (at - slashes > pos + 1 && base[at - slashes - 1] == '\\') ++slashes;
    if (slashes % 2 == 0) return at + 1;
    i = at + 1;
  }
  return 0;
}

// Where the string at `pos` ('"') closes when no backslash comes first (a
// key, nearly always): its closing quote, found with one look at 16 bytes
// for either byte; 0 when a backslash comes first or the text ends.
std::size_t unescaped_string_close(std::string_view s, std::size_t pos) {
  const char* const base = s.data();
  const char* p = base + pos + 1;
  const char* const end = base + s.size();
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  for (; end - p >= 16; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const unsigned quotes = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)));
    const unsigned slashes = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)));
    if ((quotes | slashes) == 0) continue;
    const unsigned first = __builtin_ctz(quotes | slashes);
    return (quotes >> first) & 1u ? static_cast<std::size_t>(p - base) + first : 0;
  }
#endif
  for (; p < end; ++p) {
    if (*p == '"') return static_cast<std::size_t>(p - base);
    if (*p == '\\') return 0;
  }
  return 0;
}

std::size_t string_end(std::string_view s, std::size_t pos, const LongValues* known) {  // pos at '"'
  // A string that does not end within its first bytes may be one whose end
  // is already known: walking the same values again then skips it at once.
  const std::size_t head = std::min(s.size(), pos + 1 + LongValues::kMinLength);
  if (std::size_t end = scan_string_end(s, pos, pos + 1, head)) return end;
  if (known)
    if (std::size_t end = known->string_end_of(pos)) return end;
  std::size_t end = scan_string_end(s, pos, head, s.size());
  return end ? end : s.size();
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::uint32_t hex4(std::string_view s, std::size_t pos) {
  std::uint32_t v = 0;
  for (std::size_t i = pos; i < pos + 4 && i < s.size(); ++i) {
    char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= static_cast<std::uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= static_cast<std::uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= static_cast<std::uint32_t>(c - 'A' + 10);
  }
  return v;
}

}  // namespace

std::size_t json_value_end(std::string_view s, std::size_t pos, const LongValues* known) {
  if (pos >= s.size()) return s.size();
  char c = s[pos];
  if (c == '"') return string_end(s, pos, known);
  if (c == '{' || c == '[') {
    if (known)
      if (std::size_t end = known->container_end_of(pos)) return end;
    int depth = 0;
    const char* const base = s.data();
    const char* const end = base + s.size();
    for (const char* p = base + pos; (p = next_structural(p, end)) < end; ++p) {
      if (*p == '"') {
        p = base + string_end(s, static_cast<std::size_t>(p - base), known) - 1;
      } else if (*p == '{' || *p == '[') {
        ++depth;
      } else if (--depth == 0) {
        return static_cast<std::size_t>(p - base) + 1;
      }
    }
    return s.size();
  }
  // A number or literal ends at the first byte that can follow a value.
  static constexpr auto kEndsScalar = [] {
    std::array<bool, 256> ends{};
    for (unsigned char byte : {',', '}', ']', ' ', '\t', '\r', '\n'}) ends[byte] = true;
    return ends;
  }();
  std::size_t i = pos;
  while (i < s.size() && !kEndsScalar[static_cast<unsigned char>(s[i])]) ++i;
  return i;
}

namespace {

// The contents of the string literal at `pos` whose closing quote is at `end`.
std::string string_contents(std::string_view s, std::size_t pos, std::size_t end) {
  std::string out;
  for (std::size_t i = pos + 1; i < end; ++i) {
    // Runs without a backslash, nearly all of every string, are copied whole.
    const void* slash = std::memchr(s.data() + i, '\\', end - i);
    const std::size_t run_end = slash ? static_cast<std::size_t>(static_cast<const char*>(slash) - s.data()) : end;
    out.append(s.data() + i, run_end - i);
    i = run_end;
    if (i >= end) break;
    char e = s[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        std::uint32_t cp = hex4(s, i + 1);
        i += 4;
        bool paired = false;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < end + 1 && s[i + 1] == '\\' && s[i + 2] == 'u') {
          std::uint32_t lo = hex4(s, i + 3);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
            paired = true;
          }
        }
        if (!paired && cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // a lone surrogate has no UTF-8
        append_utf8(out, cp);
        break;
      }
      default: out += e; break;  // " \ /
    }
  }
  return out;
}

// A member's key (its quotes at `pos` and `end`): keys are short and nearly
// never escaped, so a look for a backslash decides whether it is the bytes'
// own text, and only an escaped one is unescaped (into memory reused).
void set_key(MemberSpan& m, std::string_view s, std::size_t pos, std::size_t end) {
  m.raw_key = s.substr(pos + 1, end - pos - 1);
  m.escaped = false;
  for (char c : m.raw_key) {
    if (c == '\\') {
      m.unescaped = string_contents(s, pos, end);
      m.escaped = true;
      return;
    }
  }
}

}  // namespace

std::string json_string_value(std::string_view s, std::size_t pos) {
  return string_contents(s, pos, string_end(s, pos, nullptr) - 1);
}

bool json_string_is_blank(std::string_view raw) {
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  const std::size_t n = raw.size();
  std::size_t i = 0;
  while (i < n) {
    char32_t c = p[i];
    std::size_t length = 1;
    if (c == '\\') {
      if (i + 1 >= n) return false;
      switch (p[i + 1]) {
        case 'n':
        case 't':
        case 'r':
        case 'f':
          c = ' ';
          length = 2;
          break;
        case 'u':
          if (i + 6 > n) return false;
          c = hex4(raw, i + 2);  // an accepted literal: four hex digits
          length = 6;
          break;
        default: return false;  // \" \\ \/ \b
      }
    } else if (c >= 0x80) {
      length = utf8_sequence_length(p + i, n - i);
      if (length == 0) return false;
      c = length == 2 ? (c & 0x1F) : length == 3 ? (c & 0x0F) : (c & 0x07);
      for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (p[i + k] & 0x3F);
    }
    if (!is_js_space(c)) return false;
    i += length;
  }
  return true;
}

std::string json_quote(std::string_view text) {
  // Runs of bytes that need no escape (nearly all of a text) are appended whole.
  static constexpr auto kPlain = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 256; ++c) plain[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
    return plain;
  }();
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const char* run = p;
    while (p < end && kPlain[static_cast<unsigned char>(*p)]) ++p;
    out.append(run, static_cast<std::size_t>(p - run));
    if (p == end) break;
    const unsigned char c = static_cast<unsigned char>(*p++);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default: {
        static const char* hex = "0123456789abcdef";
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
      }
    }
  }
  out += '"';
  return out;
}

namespace {
bool hex4_at(const char* d, std::size_t size, std::size_t pos, std::uint32_t& value) {
  if (pos + 4 > size) return false;
  value = 0;
  for (std::size_t i = pos; i < pos + 4; ++i) {
    char c = d[i];
    value <<= 4;
    if (c >= '0' && c <= '9')
      value |= static_cast<std::uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      value |= static_cast<std::uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      value |= static_cast<std::uint32_t>(c - 'A' + 10);
    else
      return false;
  }
  return true;
}
}  // namespace

void neutralize_lone_surrogates(char* d, std::size_t size, const std::function<void(std::size_t)>& rewritten,
                                const std::function<void(std::size_t)>& progress) {
  // Only "\u" followed by d/D can start a surrogate. Jump from backslash to
  // backslash; an escape pair ("\n", "\\") is skipped whole, so a "u" after
  // an escaped backslash is never taken for an escape.
  ProgressReports reports(progress);
  char* p = d;
  char* const end = d + size;
  while (p + 1 < end) {
    p = static_cast<char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p)));
    if (!p || p + 1 >= end) return;
    reports.at(static_cast<std::size_t>(p - d));
    if (p[1] != 'u' || p + 6 > end || (p[2] != 'd' && p[2] != 'D')) {
      p += 2;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t at = static_cast<std::size_t>(p - d);
    if (!hex4_at(d, size, at + 2, cp)) {
      p += 2;
      continue;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      std::uint32_t low = 0;
      if (at + 12 <= size && p[6] == '\\' && p[7] == 'u' && hex4_at(d, size, at + 8, low) && low >= 0xDC00 &&
          low <= 0xDFFF) {
        p += 12;  // a proper pair
        continue;
      }
      std::memcpy(p + 2, "FFFD", 4);
      if (rewritten) rewritten(at + 2);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      std::memcpy(p + 2, "FFFD", 4);
      if (rewritten) rewritten(at + 2);
    }
    p += 6;
  }
}

void append_compact_json(std::string& out, std::string_view text) {
  // Runs are copied whole: outside strings up to the next whitespace or
  // quote, and each string literal through its closing quote.
  const char* const base = text.data();
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t run = i;
    while (run < text.size()) {
      const char c = base[run];
      if (c == '"' || c == ' ' || c == '\t' || c == '\n' || c == '\r') break;
      ++run;
    }
    out.append(base + i, run - i);
    if (run >= text.size()) break;
    if (base[run] != '"') {  // whitespace outside a string: dropped
      i = run + 1;
      continue;
    }
    const std::size_t end = string_end(text, run, nullptr);
    out.append(base + run, end - run);
    i = end;
  }
}

std::string compact_json(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_compact_json(out, text);
  return out;
}

std::vector<MemberSpan> object_members(std::string_view s, std::size_t pos, const LongValues* known) {
  std::vector<MemberSpan> out;
  out.reserve(8);  // most objects have fewer; growing one member at a time moved every key
  object_members(s, pos, known, out);
  return out;
}

void object_members(std::string_view s, std::size_t pos, const LongValues* known, std::vector<MemberSpan>& out) {
  std::size_t count = 0;
  std::size_t i = skip_json_ws(s, pos + 1);
  while (i < s.size() && s[i] == '"') {
    const std::size_t before = i;
    if (count == out.size()) out.emplace_back();
    MemberSpan& m = out[count++];
    m.begin = i;
    std::size_t key_end;
    if (const std::size_t close = unescaped_string_close(s, i)) {
      m.raw_key = s.substr(i + 1, close - i - 1);
      m.escaped = false;
      key_end = close + 1;
    } else {
      key_end = string_end(s, i, known);
      set_key(m, s, i, key_end - 1);
    }
    i = skip_json_ws(s, key_end);
    if (i < s.size() && s[i] == ':') ++i;
    m.value_begin = skip_json_ws(s, i);
    m.value_end = json_value_end(s, m.value_begin, known);
    i = skip_json_ws(s, m.value_end);
    if (i < s.size() && s[i] == ',') i = skip_json_ws(s, i + 1);
    if (i <= before) break;  // not valid JSON after all: stop rather than loop
  }
  out.resize(count);
}

std::pair<std::size_t, std::size_t> first_member_value(std::string_view s, std::size_t pos, std::string_view key,
                                                       const LongValues* known) {
  MemberSpan name;
  std::size_t i = skip_json_ws(s, pos + 1);
  while (i < s.size() && s[i] == '"') {
    const std::size_t before = i;
    const std::size_t key_end = string_end(s, i, known);
    set_key(name, s, i, key_end - 1);
    i = skip_json_ws(s, key_end);
    if (i < s.size() && s[i] == ':') ++i;
    const std::size_t value_begin = skip_json_ws(s, i);
    const std::size_t value_end = json_value_end(s, value_begin, known);
    if (name.key() == key) return {value_begin, value_end};
    i = skip_json_ws(s, value_end);
    if (i < s.size() && s[i] == ',') i = skip_json_ws(s, i + 1);
    if (i <= before) break;  // not valid JSON after all: stop rather than loop
  }
  return {0, 0};
}

const MemberSpan* find_member(const std::vector<MemberSpan>& members, std::string_view key) {
  const MemberSpan* found = nullptr;
  for (const MemberSpan& m : members) {
    // Sizes, then first bytes, rule out nearly every other key before a compare.
    const std::string_view k = m.key();
    if (k.size() == key.size() && (key.empty() || (k[0] == key[0] && k == key)))
      found = &m;  // JSON.parse: the last one wins
  }
  return found;
}

std::vector<ElementSpan> array_elements(std::string_view s, std::size_t pos, const LongValues* known,
                                        const std::function<void(std::size_t)>& progress) {
  std::vector<ElementSpan> out;
  std::size_t i = skip_json_ws(s, pos + 1);
  while (i < s.size() && s[i] != ']') {
    if (progress) progress(i);
    ElementSpan e;
    e.begin = i;
    e.end = json_value_end(s, i, known);
    if (e.end <= i) break;  // not valid JSON after all: stop rather than loop
    out.push_back(e);
    i = skip_json_ws(s, e.end);
    if (i < s.size() && s[i] == ',') i = skip_json_ws(s, i + 1);
  }
  return out;
}

void ByteEdits::remove_member(std::string_view s, const MemberSpan& m) {
  // Take the comma after the member; for the last member, the comma before it.
  std::size_t after = skip_json_ws(s, m.value_end);
  if (after < s.size() && s[after] == ',') {
    replace(m.begin, skip_json_ws(s, after + 1), "");
    return;
  }
  std::size_t before = m.begin;
  while (before > 0 &&
         (s[before - 1] == ' ' || s[before - 1] == '\t' || s[before - 1] == '\r' || s[before - 1] == '\n'))
    --before;
  if (before > 0 && s[before - 1] == ',') --before;
  replace(before, m.value_end, "");
}

std::string ByteEdits::apply(std::string_view s) const {
  std::string out;
  out.reserve(s.size() + 64);
  append_applied(out, s);
  return out;
}

void ByteEdits::append_applied(std::string& out, std::string_view s, std::vector<CopiedRun>* copied) const {
  // The edits by where they begin, those at one place in the order they were
  // made. A line has a few: sorted by insertion, on the stack (a hydration
  // applies them to every line; a vector and stable_sort's buffer were two
  // allocations a line).
  constexpr std::size_t kOnStack = 16;
  const Edit* few[kOnStack];
  std::vector<const Edit*> many;
  const Edit** order = few;
  if (edits_.size() <= kOnStack) {
    std::size_t n = 0;
    for (const Edit& e : edits_) {
      std::size_t at = n++;
      for (; at > 0 && order[at - 1]->begin > e.begin; --at) order[at] = order[at - 1];
      order[at] = &e;
    }
  } else {
    for (const Edit& e : edits_) many.push_back(&e);
    std::stable_sort(many.begin(), many.end(), [](const Edit* a, const Edit* b) { return a->begin < b->begin; });
    order = many.data();
  }
  std::size_t pos = 0;
  auto copy = [&](std::size_t end) {
    if (copied && end > pos) copied->push_back({out.size(), pos, end - pos});
    out.append(s.data() + pos, end - pos);
  };
  for (std::size_t k = 0; k < edits_.size(); ++k) {
    const Edit* e = order[k];
    if (e->begin < pos) continue;  // overlapping edits: the first wins
    copy(e->begin);
    out += e->text;
    pos = e->end;
  }
  copy(s.size());
}

void LongValues::index(std::string_view s, const std::function<void(std::size_t)>& progress) {
  clear();
  reserve_for(s.size());
  // Outside a string: brackets open and close containers, and the next '"'
  // opens a string, whose end is where scanning resumes.
  ProgressReports reports(progress);
  struct Open {
    std::size_t begin;
    bool loose;
  };
  std::vector<Open> open;
  for (std::size_t i = 0; i < s.size(); ++i) {
    reports.at(i);
    const char c = s[i];
    if (c == '"') {
      const std::size_t end = string_end(s, i, nullptr);
      if (end - i > kMinLength) add_string(i, end);
      i = end - 1;
    } else if (c == '{' || c == '[') {
      open.push_back({i, false});
    } else if ((c == '}' || c == ']') && !open.empty()) {
      const Open closed = open.back();
      open.pop_back();
      if (i + 1 - closed.begin > kMinLength) add_container(closed.begin, i + 1, closed.loose);
      if (closed.loose && !open.empty()) open.back().loose = true;
    } else if ((c == ' ' || c == '\t' || c == '\n' || c == '\r') && !open.empty()) {
      open.back().loose = true;
    }
  }
  finish();
}

void LongValues::clear() {
  data_ = std::make_shared<Storage>();
  string_hint_ = container_hint_ = 0;
}

void LongValues::append(LongValues&& later) {
  Storage& data = own();
  const Storage& more = *later.data_;
  data.strings.insert(data.strings.end(), more.strings.begin(), more.strings.end());
  data.containers.insert(data.containers.end(), more.containers.begin(), more.containers.end());
  data.loose.insert(data.loose.end(), more.loose.begin(), more.loose.end());
  later.clear();
}

namespace {

// Sorts `v`, cheaply when all but a few values at its end are in order
// already: those are sorted and merged in from the back, in place (no
// buffer the size of `v`). Otherwise (containers nested too deep for
// add_container to put in place) a plain sort.
template <typename T>
void sort_mostly_sorted(std::vector<T>& v) {
  const auto sorted_end = std::is_sorted_until(v.begin(), v.end());
  if (sorted_end == v.end()) return;
  const auto sorted = static_cast<std::size_t>(sorted_end - v.begin());
  if (v.size() - sorted > std::max<std::size_t>(64, v.size() / 16)) {
    std::sort(v.begin(), v.end());
    return;
  }
  std::vector<T> tail(sorted_end, v.end());
  std::sort(tail.begin(), tail.end());
  std::size_t write = v.size(), read = sorted, rest = tail.size();
  while (rest > 0) {
    if (read > 0 && tail[rest - 1] < v[read - 1])
      v[--write] = v[--read];
    else
      v[--write] = tail[--rest];
  }
}

}  // namespace

void LongValues::sort_containers() {
  Storage& data = own();
  sort_mostly_sorted(data.containers);
  sort_mostly_sorted(data.loose);
}

void LongValues::finish() { sort_containers(); }

void LongValues::reserve_for(std::size_t bytes) {
  Storage& data = own();
  const std::size_t most = bytes / (kMinLength + 1) + 16;
  data.strings.reserve(most);
  data.containers.reserve(most);
}

bool LongValues::container_is_compact(std::size_t begin) const {
  return container_end_of(begin) != 0 && !std::binary_search(data_->loose.begin(), data_->loose.end(), begin);
}

std::size_t LongValues::end_in(const Spans& spans, std::size_t& hint, std::size_t begin) {
  // The first span starting at or after `begin` lies in [lo, hi]; the bounds
  // widen from the hint, doubling, until they hold it.
  const std::size_t n = spans.size();
  std::size_t lo = std::min(hint, n), hi = lo;
  if (lo < n && spans[lo].first < begin) {
    lo = hi = lo + 1;
    for (std::size_t step = 1; hi < n && spans[hi].first < begin; step <<= 1) {
      lo = hi + 1;
      hi = std::min(n, hi + step);
    }
  } else {
    for (std::size_t step = 1; lo > 0 && spans[lo - 1].first >= begin; step <<= 1) {
      hi = lo - 1;
      lo = lo > step ? lo - step : 0;
    }
  }
  auto it = std::lower_bound(spans.begin() + static_cast<std::ptrdiff_t>(lo),
                             spans.begin() + static_cast<std::ptrdiff_t>(hi), std::make_pair(begin, std::size_t{0}));
  hint = static_cast<std::size_t>(it - spans.begin());
  return it != spans.end() && it->first == begin ? it->second : 0;
}

}  // namespace pihydrate
