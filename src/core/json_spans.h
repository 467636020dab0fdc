// Byte spans inside one JSON text that the scanner has already accepted.
// Writers use them to edit a line in place (replace one member's value,
// insert or remove a member) and copy every other byte unchanged.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pihydrate {

std::size_t skip_json_ws(std::string_view s, std::size_t pos);

// Where the long string literals of one JSON text end, found in one pass.
// The functions below take it optionally: a big document's values are walked
// once per level of nesting (entry, data, message, content), and with it
// each walk skips tool output and images instead of scanning them again.
class LongStrings {
 public:
  static constexpr std::size_t kMinLength = 256;  // shorter strings are cheaper to scan than to look up
  void index(std::string_view s);                 // s: syntactically valid JSON (one value or several)
  void clear() { spans_.clear(); }
  void add(std::size_t begin, std::size_t end) { spans_.emplace_back(begin, end); }  // in increasing order
  std::size_t end_of(std::size_t begin) const;    // one past the closing quote; 0 when not indexed
  bool operator==(const LongStrings& other) const { return spans_ == other.spans_; }
  std::size_t size() const { return spans_.size(); }

 private:
  std::vector<std::pair<std::size_t, std::size_t>> spans_;  // (opening quote, one past closing), sorted
};

// One past the end of the value starting at `pos` (no leading whitespace).
std::size_t json_value_end(std::string_view s, std::size_t pos, const LongStrings* known = nullptr);

struct MemberSpan {
  std::string key;            // unescaped
  std::size_t begin = 0;      // the key's opening quote
  std::size_t value_begin = 0;
  std::size_t value_end = 0;  // one past the value
};

// Members of the object whose '{' is at `pos`, in order.
std::vector<MemberSpan> object_members(std::string_view s, std::size_t pos, const LongStrings* known = nullptr);
const MemberSpan* find_member(const std::vector<MemberSpan>& members, std::string_view key);

struct ElementSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};
// Elements of the array whose '[' is at `pos`, in order.
std::vector<ElementSpan> array_elements(std::string_view s, std::size_t pos, const LongStrings* known = nullptr);

// The unescaped contents of the string literal at `pos` ('"').
std::string json_string_value(std::string_view s, std::size_t pos);

// A JSON string literal for `text` (escapes ", \ and control characters only,
// like JSON.stringify: other UTF-8 passes through).
std::string json_quote(std::string_view text);

// Rewrites each \u escape of a lone UTF-16 surrogate (a high one without its
// low partner, or a low one alone) to \uFFFD, in place and at the same
// length. JSON.parse accepts lone surrogates; RapidJSON rejects a lone high
// one, so without this a line pi reads would look malformed.
void neutralize_lone_surrogates(char* data, std::size_t size);

// `text` without the whitespace outside strings: one JSONL line from a
// pretty-printed value. Strings, numbers and escapes are kept byte for byte.
std::string compact_json(std::string_view text);
void append_compact_json(std::string& out, std::string_view text);  // the same, appended to `out`

// A list of byte edits applied in one pass over a text.
class ByteEdits {
 public:
  void replace(std::size_t begin, std::size_t end, std::string text) { edits_.push_back({begin, end, std::move(text)}); }
  void insert(std::size_t at, std::string text) { replace(at, at, std::move(text)); }
  // Removes a member and the comma that separates it from its neighbour.
  void remove_member(std::string_view s, const MemberSpan& m);
  std::string apply(std::string_view s) const;
  bool empty() const { return edits_.empty(); }

 private:
  struct Edit {
    std::size_t begin, end;
    std::string text;
  };
  std::vector<Edit> edits_;
};

}  // namespace pihydrate
