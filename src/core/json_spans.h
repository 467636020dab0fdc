// Byte spans inside one JSON text that the scanner has already accepted.
// Writers use them to edit a line in place (replace one member's value,
// insert or remove a member) and copy every other byte unchanged.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pihydrate {

std::size_t skip_json_ws(std::string_view s, std::size_t pos);

// Hands a pass's progress (an offset) to an optional listener, at most
// about once a MiB: often enough for a mapped export to let pages go behind
// the pass, rarely enough to cost nothing.
class ProgressReports {
 public:
  ProgressReports() = default;
  // `listener` may be empty; the first report comes a MiB past `start`.
  explicit ProgressReports(const std::function<void(std::size_t)>& listener, std::size_t start = 0)
      : listener_(listener ? &listener : nullptr), next_(listener ? start + kStep : SIZE_MAX) {}
  void at(std::size_t offset) {
    if (offset < next_) return;
    (*listener_)(offset);
    next_ = offset + kStep;
  }

 private:
  static constexpr std::size_t kStep = std::size_t{1} << 20;
  const std::function<void(std::size_t)>* listener_ = nullptr;
  std::size_t next_ = SIZE_MAX;
};

// Where the long values of one JSON text end: string literals, objects and
// arrays spanning more than kMinLength bytes. The functions below take it
// optionally: a big document's values are walked once per level of nesting
// (entry, data, message, content), and with it each walk steps over tool
// output, images and whole nested values instead of scanning them again.
class LongValues {
 public:
  static constexpr std::size_t kMinLength = 256;  // shorter values are cheaper to scan than to look up
  // s: syntactically valid JSON (one value or several). `progress`
  // (optional) hears how far the pass has come, every MiB or so.
  void index(std::string_view s, const std::function<void(std::size_t)>& progress = {});
  void clear();
  // For a producer that finds them in one pass (the quick syntax check):
  // strings in increasing order, containers in any order, then finish().
  void add_string(std::size_t begin, std::size_t end) { own().strings.emplace_back(begin, end); }
  // `loose`: whitespace separates tokens somewhere inside it. Containers
  // close after what they hold: each is moved before the few it holds, so
  // the list stays sorted and finish() has next to nothing left to sort.
  void add_container(std::size_t begin, std::size_t end, bool loose) {
    Storage& data = own();
    data.containers.emplace_back(begin, end);
    move_before_later(data.containers, begin);
    if (loose) {
      data.loose.push_back(begin);
      move_before_later(data.loose, begin);
    }
  }
  void finish();
  // Room for the strings of `bytes` bytes of text (each is longer than
  // kMinLength) and about as many containers, taken before a pass fills
  // them: they never move while they grow. Room never written to stays
  // out of memory (its pages are never touched), so it is not given back.
  void reserve_for(std::size_t bytes);
  // Sorts the containers found so far. A two-thread check calls it on each
  // half, on that half's thread, so finish() only merges in the few
  // containers closed after the halves joined (those around everything).
  void sort_containers();
  // Takes `later`'s values, all past this one's (strings stay in order).
  void append(LongValues&& later);
  // One past the value starting at `begin` ('"', '{' or '['); 0 when not indexed.
  std::size_t string_end_of(std::size_t begin) const { return end_in(data_->strings, string_hint_, begin); }
  std::size_t container_end_of(std::size_t begin) const { return end_in(data_->containers, container_hint_, begin); }
  // True when the container starting at `begin` is indexed and has no
  // whitespace between its tokens: a line made of it needs no compacting.
  bool container_is_compact(std::size_t begin) const;
  bool operator==(const LongValues& other) const {
    return data_->strings == other.data_->strings && data_->containers == other.data_->containers &&
           data_->loose == other.data_->loose;
  }
  std::size_t size() const { return data_->strings.size() + data_->containers.size(); }
  // Whether every string of the document was found valid UTF-8 (only the
  // quick syntax check says so; index() does not check).
  bool strings_valid_utf8() const { return data_->valid_utf8; }
  void set_strings_valid_utf8(bool valid) { own().valid_utf8 = valid; }

 private:
  using Spans = std::vector<std::pair<std::size_t, std::size_t>>;  // (first byte, one past the last), sorted
  // Walks go front to back nearly always, so each search starts where the
  // last one ended (`hint`) and gallops: a few steps instead of a binary
  // search over every long value of the document. The hints make lookups
  // not thread-safe; a LongValues belongs to one reader (give another
  // reader a copy).
  static std::size_t end_in(const Spans& spans, std::size_t& hint, std::size_t begin);
  // Moves the value just appended (starting at `begin`) before the values
  // that start after it, when there are a few; a container holding more
  // stays last, and finish() sorts it in.
  template <typename T>
  static void move_before_later(std::vector<T>& v, std::size_t begin) {
    constexpr std::size_t kMaxMoved = 64;
    const std::size_t last = v.size() - 1;
    std::size_t at = last;
    while (at > 0 && last - at < kMaxMoved && first_of(v[at - 1]) > begin) --at;
    if (at == last || (at > 0 && first_of(v[at - 1]) > begin)) return;
    const T moved = v[last];
    std::move_backward(v.begin() + static_cast<std::ptrdiff_t>(at), v.begin() + static_cast<std::ptrdiff_t>(last),
                       v.end());
    v[at] = moved;
  }
  static std::size_t first_of(const std::pair<std::size_t, std::size_t>& span) { return span.first; }
  static std::size_t first_of(std::size_t begin) { return begin; }
  struct Storage {
    Spans strings;
    Spans containers;
    std::vector<std::size_t> loose;  // first bytes of the containers with whitespace inside, sorted
    bool valid_utf8 = false;
  };
  // A copy shares the spans (a second reader of a big document needs no
  // second copy of them) and has hints of its own; changing a copy copies
  // the spans first.
  Storage& own() {
    if (data_.use_count() != 1) data_ = std::make_shared<Storage>(*data_);
    return *data_;
  }
  std::shared_ptr<Storage> data_ = std::make_shared<Storage>();
  mutable std::size_t string_hint_ = 0;
  mutable std::size_t container_hint_ = 0;
};

// One past the end of the value starting at `pos` (no leading whitespace).
std::size_t json_value_end(std::string_view s, std::size_t pos, const LongValues* known = nullptr);

struct MemberSpan {
  std::size_t begin = 0;  // the key's opening quote
  std::size_t value_begin = 0;
  std::size_t value_end = 0;  // one past the value
  // The key, unescaped. Nearly every key has no escape: it is then the
  // walked bytes' own text (a view: those bytes must outlive the span), and
  // only a key with escapes is copied, unescaped.
  std::string_view key() const { return escaped ? std::string_view(unescaped) : raw_key; }
  std::string_view raw_key;  // between the key's quotes, in the walked bytes
  std::string unescaped;     // with `escaped`
  bool escaped = false;
};

// Members of the object whose '{' is at `pos`, in order. Their keys are
// views of `s` (see MemberSpan::key): `s`'s bytes must outlive them.
std::vector<MemberSpan> object_members(std::string_view s, std::size_t pos, const LongValues* known = nullptr);
// The same into `out`, whose elements (and their keys' buffers) are reused:
// a caller walking many objects allocates nothing per object.
void object_members(std::string_view s, std::size_t pos, const LongValues* known, std::vector<MemberSpan>& out);
const MemberSpan* find_member(const std::vector<MemberSpan>& members, std::string_view key);
// The value of the first member named `key` of the object whose '{' is at
// `pos`, as [begin, end), walking no further than that member; {0, 0} when
// there is none. For a key known to appear once (find_member takes the
// last of several, as JSON.parse does).
std::pair<std::size_t, std::size_t> first_member_value(std::string_view s, std::size_t pos, std::string_view key,
                                                       const LongValues* known = nullptr);

struct ElementSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};
// Elements of the array whose '[' is at `pos`, in order.
// `progress` (optional) hears each element's start.
std::vector<ElementSpan> array_elements(std::string_view s, std::size_t pos, const LongValues* known = nullptr,
                                        const std::function<void(std::size_t)>& progress = {});

// The unescaped contents of the string literal at `pos` ('"').
std::string json_string_value(std::string_view s, std::size_t pos);

// Whether a string literal whose contents (between its quotes, escapes as
// written) are `raw` is empty or white space only, as JavaScript's trim()
// sees it (pi-ai leaves such text out; Anthropic rejects it). Reads only up
// to the first character that is not white space.
bool json_string_is_blank(std::string_view raw);

// A JSON string literal for `text` (escapes ", \ and control characters only,
// like JSON.stringify: other UTF-8 passes through).
std::string json_quote(std::string_view text);

// Rewrites each \u escape of a lone UTF-16 surrogate (a high one without its
// low partner, or a low one alone) to \uFFFD, in place and at the same
// length. JSON.parse accepts lone surrogates; RapidJSON rejects a lone high
// one, so without this a line pi reads would look malformed.
// `rewritten` (optional) hears of each rewrite's offset; `progress` (optional)
// of how far the pass has come, every MiB or so.
void neutralize_lone_surrogates(char* data, std::size_t size, const std::function<void(std::size_t)>& rewritten = {},
                                const std::function<void(std::size_t)>& progress = {});

// `text` without the whitespace outside strings: one JSONL line from a
// pretty-printed value. Strings, numbers and escapes are kept byte for byte.
std::string compact_json(std::string_view text);
void append_compact_json(std::string& out, std::string_view text);  // the same, appended to `out`

// A list of byte edits applied in one pass over a text.
class ByteEdits {
 public:
  void replace(std::size_t begin, std::size_t end, std::string text) {
    edits_.push_back({begin, end, std::move(text)});
  }
  void insert(std::size_t at, std::string text) { replace(at, at, std::move(text)); }
  // Removes a member and the comma that separates it from its neighbour.
  void remove_member(std::string_view s, const MemberSpan& m);
  std::string apply(std::string_view s) const;
  // The same, appended to `out`; `copied` (optional) gets where each run of
  // `s` copied unchanged went in `out`.
  struct CopiedRun {
    std::size_t out_at, from, length;
  };
  void append_applied(std::string& out, std::string_view s, std::vector<CopiedRun>* copied = nullptr) const;
  bool empty() const { return edits_.empty(); }
  // At most how many bytes applying the edits adds to the text.
  std::size_t inserted_bytes() const {
    std::size_t n = 0;
    for (const Edit& e : edits_) n += e.text.size();
    return n;
  }

 private:
  struct Edit {
    std::size_t begin, end;
    std::string text;
  };
  std::vector<Edit> edits_;
};

}  // namespace pihydrate
