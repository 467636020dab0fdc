// A SAX reader for the plain JSON that session lines nearly always are. It
// calls a RapidJSON-style handler with the same events RapidJSON's Reader
// would, but it does not modify or copy the line, decodes only the strings
// the handler reads, and skips whole containers the handler ignores (tool
// output, thinking, images). Anything it is not sure about (invalid JSON,
// keys with escapes, surrogate escapes, exponents, very long numbers, deep
// nesting) makes it give up, and the caller runs RapidJSON instead, which
// also gives errors their exact message and offset.
//
// The handler provides RapidJSON's event methods and:
//   bool skips_current() const;  // after Start*: is the container just opened ignored?
//   bool wants_text() const;     // is the next scalar's text read (else only its kind)?
// and optionally
//   void skipped_container(const char* open, const char* past_close, bool loose);
//       // each ignored container, itself included; `loose`: whitespace between its tokens
//   void newline(const char* after);  // each newline between tokens (a string holds none)
//   static constexpr bool kChecksUtf8 = true;
//       // check UTF-8 inside strings on the way (see first_invalid_utf8)
//   bool knows_string_ends() const;
//   std::size_t known_string_min_length() const;
//   const char* known_string_end(const char* quote);
//       // where a long string the handler ignores ends (one past its closing
//       // quote), known from an earlier pass that checked it; null: not known
//   void ignored_string(const char* quote, const char* past_end);
//       // each string whose text the handler does not read (a value when
//       // wants_text is false; a key or value inside an ignored container),
//       // whether scanned or stepped over
//   static constexpr std::size_t kElementLevel;
//   void element(const char* begin, const char* past_end);
//       // each element, inside an ignored container, of an array whose
//       // elements sit at kElementLevel (counted as skip_rest counts, see
//       // Continuation: 3 for the elements of a top-level object's array)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/json_check.h"
#include "core/json_spans.h"
#include "core/utf8.h"

namespace pihydrate {

template <typename Handler, typename = void>
struct SeesSkippedContainers : std::false_type {};
template <typename Handler>
struct SeesSkippedContainers<Handler,
                             std::void_t<decltype(std::declval<Handler&>().skipped_container(
                                 static_cast<const char*>(nullptr), static_cast<const char*>(nullptr), false))>>
    : std::true_type {};

template <typename Handler, typename = void>
struct SeesNewlines : std::false_type {};
template <typename Handler>
struct SeesNewlines<Handler, std::void_t<decltype(std::declval<Handler&>().newline(static_cast<const char*>(nullptr)))>>
    : std::true_type {};

template <typename Handler, typename = void>
struct ChecksUtf8 : std::false_type {};
template <typename Handler>
struct ChecksUtf8<Handler, std::void_t<decltype(Handler::kChecksUtf8)>> : std::bool_constant<Handler::kChecksUtf8> {};

template <typename Handler, typename = void>
struct KnowsStringEnds : std::false_type {};
template <typename Handler>
struct KnowsStringEnds<
    Handler, std::void_t<decltype(std::declval<Handler&>().known_string_end(static_cast<const char*>(nullptr)))>>
    : std::true_type {};

template <typename Handler, typename = void>
struct SeesIgnoredStrings : std::false_type {};
template <typename Handler>
struct SeesIgnoredStrings<Handler, std::void_t<decltype(std::declval<Handler&>().ignored_string(
                                       static_cast<const char*>(nullptr), static_cast<const char*>(nullptr)))>>
    : std::true_type {};

template <typename Handler, typename = void>
struct SeesElements : std::false_type {};
template <typename Handler>
struct SeesElements<Handler, std::void_t<decltype(Handler::kElementLevel)>> : std::true_type {};

template <typename Handler>
class FastSaxReader {
 public:
  // Reads the one JSON value in [p, end) (whitespace around it allowed).
  // False: not sure; the handler may have seen some events, so the caller
  // must reset what it fills.
  bool parse(const char* p, const char* end, Handler& handler, std::size_t max_depth) {
    end_ = end;
    handler_ = &handler;
    max_depth_ = max_depth < kMaxDepth ? max_depth : kMaxDepth;
    depth_ = 0;
    first_invalid_utf8_ = nullptr;
    skip_ws(p);
    if (!value(p)) return false;
    skip_ws(p);
    return p == end_;
  }

  // A second reader may check the tail of a long array while this one reads
  // up to it (a thread export's entries, split in two; see json_check.cc).
  // When this reader, skipping, gets to `at` as an element that follows a
  // comma, with `level` containers counted as skip_rest counts them, it
  // calls join(): the second reader's end (past the array's closing
  // bracket) and whether it saw whitespace between tokens, or null when it
  // was not sure, in which case this reader goes on by itself.
  struct Continuation {
    const char* at = nullptr;
    std::size_t level = 0;
    std::function<const char*(bool& loose)> join;
  };
  void set_continuation(const Continuation* continuation) { continuation_ = continuation; }

  // The second reader's part: from `at`, an element after a comma, through
  // the rest of its array, whose elements sit at `level` (see Continuation).
  // The handler hears what is inside, not the array itself. Returns the end
  // past the closing bracket, or null when not sure.
  const char* skip_rest_of_array(const char* at, const char* end, Handler& handler, std::size_t max_depth,
                                 std::size_t level, bool& loose) {
    end_ = end;
    handler_ = &handler;
    max_depth_ = max_depth < kMaxDepth ? max_depth : kMaxDepth;
    if (level == 0 || level - 1 > max_depth_) return nullptr;
    depth_ = level - 1;
    first_invalid_utf8_ = nullptr;
    const char* p = at;
    return skip_rest(p, false, &loose) ? p : nullptr;
  }

  // For a handler with kChecksUtf8, after parse() returned true: the first
  // byte of the first invalid UTF-8 sequence, or null. Outside strings any
  // byte over 0x7F fails the parse, so a successful one has seen every
  // sequence of the text, in order.
  const char* first_invalid_utf8() const { return first_invalid_utf8_; }

 private:
  static constexpr std::size_t kMaxDepth = 256;  // deeper lines go to RapidJSON (no deep recursion here)

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  void skip_ws(const char*& p) const {
    if constexpr (SeesNewlines<Handler>::value) {
      for (; p < end_ && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'); ++p)
        if (*p == '\n') handler_->newline(p + 1);
    } else {
      while (p < end_ && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    }
  }

  // p at '"'. On success: p past the closing quote, [raw, raw_end) the
  // contents, `escaped` whether they hold a backslash.
  // `ignored`: the handler does not read the string, so a long one it
  // knows the end of is stepped over instead of scanned, and it hears of it.
  bool scan_string(const char*& p, const char*& raw, const char*& raw_end, bool& escaped, bool ignored = false) {
    const char* quote = p;
    if (!scan_string_body(p, raw, raw_end, escaped, ignored)) return false;
    if constexpr (SeesIgnoredStrings<Handler>::value)
      if (ignored) handler_->ignored_string(quote, p);
    return true;
  }
  bool scan_string_body(const char*& p, const char*& raw, const char*& raw_end, bool& escaped, bool ignored) {
    raw = ++p;
    StringScan scan;
    scan.first_invalid_utf8 = first_invalid_utf8_;
    const char* quote = nullptr;
    if constexpr (KnowsStringEnds<Handler>::value) {
      if (ignored && handler_->knows_string_ends() &&
          static_cast<std::size_t>(end_ - p) >= handler_->known_string_min_length()) {
        // Shorter strings end within the first bytes, and are not looked up.
        quote = scan_string_contents<ChecksUtf8<Handler>::value>(p, p + handler_->known_string_min_length() - 2, scan);
        if (quote == nullptr) {
          if (const char* past = handler_->known_string_end(raw - 1)) {
            escaped = true;  // not known; nothing reads it
            raw_end = past - 1;
            p = past;
            return true;
          }
          scan = StringScan();
          scan.first_invalid_utf8 = first_invalid_utf8_;
        }
      }
    }
    if (quote == nullptr) quote = scan_string_contents<ChecksUtf8<Handler>::value>(p, end_, scan);
    if (quote == nullptr) return false;
    first_invalid_utf8_ = scan.first_invalid_utf8;
    escaped = scan.escaped;
    raw_end = quote;
    p = quote + 1;
    return true;
  }

  // The unescaped contents of a scanned string (escapes already checked,
  // surrogates excluded); raw - 1 is its opening quote.
  std::string_view decode(const char* raw, const char* raw_end) {
    text_ = json_string_value(std::string_view(raw - 1, static_cast<std::size_t>(raw_end - raw) + 2), 0);
    return text_;
  }

  // RapidJSON refuses numbers beyond double and reads exponents itself.
  bool scan_number(const char*& p) const {
    const char* start = p;
    if (p < end_ && *p == '-') ++p;
    if (p >= end_ || !is_digit(*p)) return false;
    if (*p == '0')
      ++p;
    else
      while (p < end_ && is_digit(*p)) ++p;
    if (p < end_ && *p == '.') {
      ++p;
      if (p >= end_ || !is_digit(*p)) return false;
      while (p < end_ && is_digit(*p)) ++p;
    }
    if (p < end_ && (*p == 'e' || *p == 'E')) return false;
    return p - start <= 300;
  }

  bool literal(const char*& p, std::string_view word) const {
    if (static_cast<std::size_t>(end_ - p) < word.size() || std::string_view(p, word.size()) != word) return false;
    p += word.size();
    return true;
  }

  bool value(const char*& p) {
    if (p >= end_) return false;
    switch (*p) {
      case '{': return container(p, true);
      case '[': return container(p, false);
      case '"': {
        const char *raw = nullptr, *raw_end = nullptr;
        bool escaped = false;
        const bool wanted = handler_->wants_text();
        if (!scan_string(p, raw, raw_end, escaped, !wanted)) return false;
        if (!wanted) return handler_->String(raw, 0, false);
        std::string_view text =
            escaped ? decode(raw, raw_end) : std::string_view(raw, static_cast<std::size_t>(raw_end - raw));
        return handler_->String(text.data(), static_cast<unsigned>(text.size()), false);
      }
      case 't': return literal(p, "true") && handler_->Bool(true);
      case 'f': return literal(p, "false") && handler_->Bool(false);
      case 'n': return literal(p, "null") && handler_->Null();
      default: {
        const char* start = p;
        return scan_number(p) && handler_->RawNumber(start, static_cast<unsigned>(p - start), false);
      }
    }
  }

  bool container(const char*& p, bool object) {
    if (++depth_ > max_depth_) return false;
    ++p;
    if (!(object ? handler_->StartObject() : handler_->StartArray())) return false;
    if (handler_->skips_current()) {
      if (!skip_rest(p, object)) return false;
    } else {
      skip_ws(p);
      if (p < end_ && *p == (object ? '}' : ']')) {
        ++p;
      } else {
        for (;;) {
          if (object) {
            if (p >= end_ || *p != '"') return false;
            const char *raw = nullptr, *raw_end = nullptr;
            bool escaped = false;
            if (!scan_string(p, raw, raw_end, escaped) || escaped) return false;  // escaped keys: RapidJSON's
            if (!handler_->Key(raw, static_cast<unsigned>(raw_end - raw), false)) return false;
            skip_ws(p);
            if (p >= end_ || *p != ':') return false;
            ++p;
            skip_ws(p);
          }
          if (!value(p)) return false;
          skip_ws(p);
          if (p < end_ && *p == ',') {
            ++p;
            skip_ws(p);
            continue;
          }
          if (p < end_ && *p == (object ? '}' : ']')) {
            ++p;
            break;
          }
          return false;
        }
      }
    }
    --depth_;
    return object ? handler_->EndObject(0) : handler_->EndArray(0);
  }

  // ---- skipping an ignored container ----
  // Its syntax and nesting are checked on the way; the handler hears only of
  // the strings, elements and containers inside it that it asked for.

  static constexpr bool kSeesContainers = SeesSkippedContainers<Handler>::value;

  // What skip_rest expects next.
  enum class Need { kValueOrClose, kKeyOrClose, kKey, kColon, kValue, kCommaOrClose };

  // skip_rest's state.
  struct Skipping {
    std::size_t base;                     // the depth the skipped container opened at
    std::string open;                     // open containers, '{' or '[', the skipped one first and the innermost last
    bool* rest_loose;                     // see skip_rest
    const char* element_begin = nullptr;  // where the element being read at the handler's element level began
  };

  // Whether the `levels`-th innermost open container is an array whose
  // elements sit at the handler's element level.
  static bool at_element_level([[maybe_unused]] const Skipping& s, [[maybe_unused]] std::size_t levels) {
    if constexpr (SeesElements<Handler>::value)
      return s.open.size() >= levels && s.open[s.open.size() - levels] == '[' &&
             s.base + s.open.size() - (levels - 1) == Handler::kElementLevel;
    return false;
  }

  // Whitespace between tokens: the innermost open container is loose.
  [[gnu::always_inline]] void skip_ws_noting_loose(const char*& p) {
    if constexpr (kSeesContainers) {
      const char* before = p;
      skip_ws(p);
      if (p != before && !loose_.empty()) loose_.back() = true;
    } else {
      skip_ws(p);
    }
  }

  // p is past the closing bracket of the innermost open container: the
  // handler hears of the element and the container that end here.
  void close_skipped([[maybe_unused]] const char* p, Skipping& s) {
    if constexpr (SeesElements<Handler>::value)
      if (at_element_level(s, 2)) handler_->element(s.element_begin, p);
    if constexpr (kSeesContainers) {
      const bool loose = loose_.back();
      if (s.rest_loose && s.open.size() == 1)
        *s.rest_loose = loose;
      else
        handler_->skipped_container(opened_at_.back(), p, loose);
      opened_at_.pop_back();
      loose_.pop_back();
      if (loose && !loose_.empty()) loose_.back() = true;
    }
    s.open.pop_back();
  }

  // At the element where the second reader took over (see Continuation):
  // p goes past the array it checked, which is closed. False when p is
  // elsewhere, or the second reader was not sure.
  bool join_continuation(const char*& p, Need need, Skipping& s) {
    if (p != continuation_->at || need != Need::kValue || s.open.back() != '[' ||
        s.base + s.open.size() != continuation_->level)
      return false;
    bool loose = false;
    const char* rest_end = continuation_->join(loose);
    if (!rest_end) return false;
    p = rest_end;  // past the array's closing bracket
    if constexpr (kSeesContainers)
      if (loose) loose_.back() = true;
    close_skipped(p, s);
    return true;
  }

  // A string, literal or number inside an ignored container, p at its first byte `c`.
  [[gnu::always_inline]] bool skip_scalar(const char*& p, char c) {
    if (c == '"') {
      const char *raw = nullptr, *raw_end = nullptr;
      bool escaped = false;
      return scan_string(p, raw, raw_end, escaped, true);
    }
    if (c == 't') return literal(p, "true");
    if (c == 'f') return literal(p, "false");
    if (c == 'n') return literal(p, "null");
    return scan_number(p);
  }

  // A value inside an ignored container, p at its first byte `c`: a
  // container opens (`need` is then what it takes first), a scalar is
  // stepped over.
  [[gnu::always_inline]] bool skip_value(const char*& p, char c, Need& need, Skipping& s) {
    if (at_element_level(s, 1)) s.element_begin = p;
    if (c == '{' || c == '[') {
      if (s.base + s.open.size() > max_depth_) return false;
      s.open += c;
      if constexpr (kSeesContainers) {
        opened_at_.push_back(p);
        loose_.push_back(false);
      }
      ++p;
      need = c == '{' ? Need::kKeyOrClose : Need::kValueOrClose;
      return true;
    }
    if (!skip_scalar(p, c)) return false;
    if constexpr (SeesElements<Handler>::value)
      if (at_element_level(s, 1)) handler_->element(s.element_begin, p);
    need = Need::kCommaOrClose;
    return true;
  }

  // Skips the rest of an ignored container whose opening bracket p has
  // passed. With `rest_loose`, p is instead at an element after a comma
  // (skip_rest_of_array): the container is not reported, and whether it had
  // whitespace between tokens goes to *rest_loose.
  bool skip_rest(const char*& p, bool object, bool* rest_loose = nullptr) {
    Skipping s{depth_, std::string(1, object ? '{' : '['), rest_loose};
    opened_at_.clear();
    loose_.clear();
    if constexpr (kSeesContainers) {
      opened_at_.push_back(p - 1);
      loose_.push_back(false);
    }
    Need need = rest_loose ? Need::kValue : object ? Need::kKeyOrClose : Need::kValueOrClose;
    for (;;) {
      skip_ws_noting_loose(p);
      if (p >= end_) return false;
      if (continuation_ && join_continuation(p, need, s)) {
        if (s.open.empty()) return true;
        need = Need::kCommaOrClose;
        continue;
      }
      // The punctuation `need` asks for; a value goes on below.
      const char c = *p;
      const char close = s.open.back() == '{' ? '}' : ']';
      switch (need) {
        case Need::kColon:
          if (c != ':') return false;
          ++p;
          need = Need::kValue;
          continue;
        case Need::kCommaOrClose:
          if (c == ',') {
            ++p;
            need = s.open.back() == '{' ? Need::kKey : Need::kValue;
            continue;
          }
          if (c != close) return false;
          ++p;
          close_skipped(p, s);
          if (s.open.empty()) return true;
          continue;
        case Need::kKeyOrClose:
        case Need::kValueOrClose:
          if (c == close) {
            ++p;
            close_skipped(p, s);
            if (s.open.empty()) return true;
            need = Need::kCommaOrClose;
            continue;
          }
          if (need == Need::kValueOrClose) break;
          [[fallthrough]];
        case Need::kKey: {
          const char *raw = nullptr, *raw_end = nullptr;
          bool escaped = false;
          if (c != '"' || !scan_string(p, raw, raw_end, escaped, true)) return false;
          need = Need::kColon;
          continue;
        }
        case Need::kValue: break;
      }
      if (!skip_value(p, c, need, s)) return false;
    }
  }

  const char* end_ = nullptr;
  Handler* handler_ = nullptr;
  std::size_t max_depth_ = 0;
  std::size_t depth_ = 0;
  std::string text_;                          // decoded text of the last escaped string read
  const char* first_invalid_utf8_ = nullptr;  // with kChecksUtf8
  std::vector<const char*> opened_at_;        // skip_rest's open containers, for skipped_container
  std::vector<bool> loose_;                   // ... and whether each has whitespace between tokens
  const Continuation* continuation_ = nullptr;
};

}  // namespace pihydrate
