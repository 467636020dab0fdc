// A thread export's JSON, parsed into spans: its variant, line starts, and member lookups by offset.
#include "readers/thread_document.h"

#include "readers/page_window.h"

#include "core/json_check.h"

#include "core/bounded_stream.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

namespace pihydrate {
namespace {

constexpr std::size_t kWindow = std::size_t{1} << 20;  // passes over the whole export go a MiB at a time

// Counts depth only: the syntax check must not recurse without a limit.
class DepthHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, DepthHandler> {
 public:
  explicit DepthHandler(std::size_t max) : max_(max) {}
  bool Default() { return true; }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return true; }
  bool StartObject() { return ++depth_ <= max_ || (too_deep_ = true, false); }
  bool StartArray() { return ++depth_ <= max_ || (too_deep_ = true, false); }
  bool EndObject(rapidjson::SizeType) { return --depth_, true; }
  bool EndArray(rapidjson::SizeType) { return --depth_, true; }
  bool too_deep_ = false;

 private:
  std::size_t max_;
  std::size_t depth_ = 0;
};

}  // namespace

bool ThreadDocument::check_syntax(std::string_view text, std::size_t base, std::size_t max_depth,
                                  bool collect_long_values, bool quick_only) {
  // A MiB at a time, so a mapped export's pages can be let go behind.
  for (std::size_t window = 0; window < text.size(); window += kWindow) {
    const std::size_t length = std::min(kWindow, text.size() - window);
    if (const void* nul = std::memchr(text.data() + window, '\0', length)) {
      error = "NUL byte";
      error_offset = base + static_cast<std::size_t>(static_cast<const char*>(nul) - text.data());
      return false;
    }
    release_before(base + window);
  }
  // Most exports are plain JSON: a quick check settles them without
  // RapidJSON's string copies; anything it is unsure of goes on below.
  if (collect_long_values) {
    if (is_certainly_valid_json(text, max_depth, long_values_, base, release_progress()))
      return long_values_ready_ = true;
    long_values_.clear();  // incomplete
  } else if (is_certainly_valid_json(text, max_depth)) {
    return true;
  }
  if (quick_only) return false;
  // JSON.parse reads a number too big for a double as Infinity; RapidJSON
  // refuses it. Such a number is patched to an equal-length zero for the
  // check and restored afterwards (the caller's bytes are writable, see parse).
  char* writable = const_cast<char*>(text.data());
  std::vector<std::pair<std::size_t, std::string>> patched;
  auto restore = [&] {
    for (const auto& [at, original] : patched) std::memcpy(writable + at, original.data(), original.size());
  };
  for (int attempt = 0;; ++attempt) {
    BoundedStream stream(text);
    DepthHandler handler(max_depth);
    rapidjson::Reader reader;
    rapidjson::ParseResult r = reader.Parse<rapidjson::kParseNumbersAsStringsFlag>(stream, handler);
    if (r) {
      restore();
      return true;
    }
    if (r.Code() == rapidjson::kParseErrorNumberTooBig && attempt < 64) {
      std::size_t at = r.Offset(), end = at;
      while (end < text.size() && std::strchr("+-.0123456789eE", text[end]) && text[end] != '\0') ++end;
      if (end - at >= 3) {
        patched.emplace_back(at, std::string(text.substr(at, end - at)));
        writable[at] = '0';
        writable[at + 1] = 'e';
        std::memset(writable + at + 2, '0', end - at - 2);
        continue;
      }
    }
    restore();
    error =
        handler.too_deep_ ? "nesting deeper than " + std::to_string(max_depth) : rapidjson::GetParseError_En(r.Code());
    if (!error.empty() && error.back() == '.') error.pop_back();
    error_offset = base + r.Offset();
    return false;
  }
}

// Where the syntax check's second thread may start (see SecondThread): the
// first line past the middle that opens an object after a line ending in
// ','. A raw newline is never inside a string, so the guess is at least
// outside one; the check verifies the rest (a guess deeper in the document,
// as a pretty-printed export may give, only costs the second thread's work).
// 0: no guess (a small document, or none within kGuessLines lines).
std::size_t ThreadDocument::guess_second_half(std::string_view text) const {
  constexpr std::size_t kGuessLines = 4096;
  if (text.size() < kSecondThreadBytes) return 0;
  std::size_t line = text.find('\n', text.size() / 2);
  for (std::size_t tried = 0; line != std::string_view::npos && tried < kGuessLines;
       ++tried, line = text.find('\n', line + 1)) {
    std::size_t at = line + 1;
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
    if (at >= text.size() || text[at] != '{') continue;
    std::size_t before = line;
    while (before > 0 && (text[before - 1] == '\n' || text[before - 1] == '\r' || text[before - 1] == ' ' ||
                          text[before - 1] == '\t'))
      --before;
    if (before > 0 && text[before - 1] == ',') return at;
  }
  return 0;
}

// Where the JSON starts: past a BOM (tolerated here) and whitespace.
std::size_t ThreadDocument::document_start(std::string_view bytes) {
  return skip_json_ws(bytes, bytes.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0);
}

bool ThreadDocument::parse(std::string_view bytes, std::size_t max_depth) { return parse(bytes, max_depth, false); }
bool ThreadDocument::parse_plain(std::string_view bytes, std::size_t max_depth) {
  return parse(bytes, max_depth, true);
}

// One pass over a plain document: the quick check also records where lines
// start (a text it accepts has every raw newline between tokens) and needs
// no NUL scan (it accepts no NUL). Anything it is unsure of goes to parse().
bool ThreadDocument::parse_in_one_pass(std::string_view bytes, std::size_t max_depth) {
  const std::size_t start = document_start(bytes);
  if (start >= bytes.size()) return false;  // parse() reports it
  for (std::size_t i = 0; i < start; ++i)
    if (bytes[i] == '\n') layout_->line_starts.push_back(i + 1);
  const std::string_view text = bytes.substr(start);
  SecondThread second;
  second.at = guess_second_half(text);
  // The second thread hears of its progress every MiB; it lets pages go a
  // step at a time, as the first does (each madvise that drops pages also
  // interrupts the other core to flush its TLB).
  if (residency_) {
    second.progress = [this, released = std::size_t{0}](std::size_t begin, std::size_t offset) mutable {
      if (offset < std::max(begin, released) + PageWindow::kStep) return;
      residency_->release_range(begin, offset);
      released = offset;
    };
  }
  const bool valid = is_certainly_valid_json(text, max_depth, long_values_, start, release_progress(), second,
                                             &layout_->line_starts, &layout_->top_array_elements);
  if (!valid) {
    long_values_.clear();  // incomplete
    layout_->line_starts.assign(1, 0);
    layout_->top_array_elements.clear();
    return false;
  }
  long_values_ready_ = true;
  layout_->top_array_elements_known = true;
  root_ = {start, json_value_end(bytes, start, &long_values_)};
  release_before(bytes.size());
  return true;
}

bool ThreadDocument::parse(std::string_view bytes, std::size_t max_depth, bool quick_only) {
  bytes_ = bytes;
  layout_ = std::make_shared<Layout>();
  layout_->line_starts.assign(1, 0);
  if (quick_only) return parse_in_one_pass(bytes, max_depth);
  // A MiB at a time, so a mapped export's pages can be let go behind.
  for (std::size_t window = 0; window < bytes.size(); window += kWindow) {
    const char* p = bytes.data() + window;
    const char* const end = bytes.data() + std::min(bytes.size(), window + kWindow);
    while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)))))
      layout_->line_starts.push_back(static_cast<std::size_t>(++p - bytes.data()));
    release_before(window);
  }
  release_before(bytes.size());
  const std::size_t start = document_start(bytes);
  if (start >= bytes.size()) {
    error = "the input is empty";
    error_offset = 0;
    return false;
  }
  // One document?
  std::string saved_error;
  std::size_t saved_offset = 0;
  if (check_syntax(bytes.substr(start), start, max_depth, /*collect_long_values=*/true, quick_only)) {
    if (!long_values_ready_) long_values_.index(bytes, release_progress());
    root_ = {start, json_value_end(bytes, start, &long_values_)};
    release_before(bytes.size());
    return true;
  }
  if (quick_only) return false;
  saved_error = error;
  saved_offset = error_offset;
  // The JSONL variant: a header line, then one entry per line.
  std::size_t first_end = bytes.find('\n', start);
  if (first_end == std::string_view::npos || bytes[start] != '{' ||
      !check_syntax(bytes.substr(start, first_end - start), start, max_depth)) {
    error = saved_error;
    error_offset = saved_offset;
    return false;
  }
  JsonRef header{start, json_value_end(bytes, start)};
  jsonl_ = true;
  root_ = header;
  if (member(header, "entries").valid()) {  // a JSON document with trailing garbage, not JSONL
    jsonl_ = false;
    error = saved_error;
    error_offset = saved_offset;
    return false;
  }
  std::size_t pos = first_end + 1;
  while (pos < bytes.size()) {
    std::size_t eol = bytes.find('\n', pos);
    if (eol == std::string_view::npos) eol = bytes.size();
    std::string_view line = bytes.substr(pos, eol - pos);
    std::size_t b = skip_json_ws(line, 0);
    if (b < line.size()) {
      if (!check_syntax(line, pos, max_depth)) return false;
      layout_->jsonl_entries.push_back({pos + b, pos + json_value_end(line, b)});
    }
    pos = eol + 1;
  }
  long_values_.index(bytes, release_progress());
  release_before(bytes.size());
  return true;
}

RefKind ThreadDocument::kind(JsonRef ref) const {
  if (!ref.valid()) return RefKind::kMissing;
  switch (bytes_[ref.begin]) {
    case '{': return RefKind::kObject;
    case '[': return RefKind::kArray;
    case '"': return RefKind::kString;
    case 'n': return RefKind::kNull;
    case 't':
    case 'f': return RefKind::kBool;
    default: return RefKind::kNumber;
  }
}

// The members of the object at `begin`, walked into a buffer reused from
// one lookup to the next (nothing allocated per lookup).
const std::vector<MemberSpan>& ThreadDocument::walked_members(std::size_t begin) const {
  object_members(bytes_, begin, &long_values_, members_buffer_);
  return members_buffer_;
}

JsonRef ThreadDocument::member(JsonRef object, std::string_view key) const {
  if (kind(object) != RefKind::kObject) return {};
  const MemberSpan* m = find_member(walked_members(object.begin), key);
  if (!m) return {};
  return {m->value_begin, m->value_end};
}

std::vector<MemberSpan> ThreadDocument::members(JsonRef object) const {
  if (kind(object) != RefKind::kObject) return {};
  return walked_members(object.begin);
}

void ThreadDocument::members_into(JsonRef object, std::vector<MemberSpan>& out) const {
  if (kind(object) != RefKind::kObject) {
    out.clear();
    return;
  }
  object_members(bytes_, object.begin, &long_values_, out);
}

JsonRef ThreadDocument::find(const std::vector<MemberSpan>& members, std::string_view key) {
  const MemberSpan* m = find_member(members, key);
  return m ? JsonRef{m->value_begin, m->value_end} : JsonRef{};
}

std::vector<JsonRef> ThreadDocument::elements(JsonRef array, const std::function<void(std::size_t)>& progress) const {
  std::vector<JsonRef> out;
  if (kind(array) != RefKind::kArray) return out;
  for (const ElementSpan& e : array_elements(bytes_, array.begin, &long_values_, progress))
    out.push_back({e.begin, e.end});
  return out;
}

std::vector<JsonRef> ThreadDocument::top_array_elements(JsonRef array,
                                                        const std::function<void(std::size_t)>& progress) const {
  if (!layout_->top_array_elements_known || kind(array) != RefKind::kArray || kind(root_) != RefKind::kObject)
    return elements(array, progress);
  bool top = false;
  for (const MemberSpan& m : walked_members(root_.begin)) top = top || m.value_begin == array.begin;
  if (!top) return elements(array, progress);
  // Those inside the array's brackets are its own: any other array they
  // could belong to is outside it.
  std::vector<ElementSpan> all = std::move(layout_->top_array_elements);
  layout_->top_array_elements_known = false;
  auto first = std::lower_bound(all.begin(), all.end(), array.begin,
                                [](const ElementSpan& e, std::size_t at) { return e.begin <= at; });
  auto last = first;
  while (last != all.end() && last->begin < array.end) ++last;
  std::vector<JsonRef> out;
  out.reserve(static_cast<std::size_t>(last - first));
  for (auto it = first; it != last; ++it) out.push_back({it->begin, it->end});
  return out;
}

std::string ThreadDocument::string_value(JsonRef ref) const {
  if (kind(ref) != RefKind::kString) return {};
  return json_string_value(bytes_, ref.begin);
}

std::string_view ThreadDocument::string_text(JsonRef ref, std::string& scratch) const {
  if (kind(ref) != RefKind::kString || ref.end - ref.begin < 2) return {};
  const std::string_view text = bytes_.substr(ref.begin + 1, ref.end - ref.begin - 2);
  if (std::memchr(text.data(), '\\', text.size()) == nullptr) return text;
  scratch = json_string_value(bytes_, ref.begin);
  return scratch;
}

void ThreadDocument::position(std::size_t offset, std::uint64_t& line, std::uint64_t& column) const {
  const std::vector<std::size_t>& starts = layout_->line_starts;
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  std::size_t index = static_cast<std::size_t>(it - starts.begin()) - 1;
  line = index + 1;
  column = offset - starts[index] + 1;
}

}  // namespace pihydrate
