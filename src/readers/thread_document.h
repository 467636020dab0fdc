// Reading a thread export's bytes: syntax check (with a depth cap), the two
// variants (one JSON document, or a JSONL header line plus one entry per
// line), and positions (line:col) for every value.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_spans.h"
#include "readers/thread_export.h"

namespace pihydrate {

// A value inside the document: its bytes [begin, end).
struct JsonRef {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool valid() const { return end > begin; }
};

enum class RefKind { kMissing, kNull, kBool, kNumber, kString, kArray, kObject };

class ThreadDocument;

class ThreadDocument {
 public:
  // Returns false with `error`, `error_offset` set when the bytes are not a
  // thread export's JSON (either variant). The bytes must be writable: a
  // number too big for a double is patched during the syntax check and
  // restored before parse returns.
  bool parse(std::string_view bytes, std::size_t max_depth);
  // The same, but only when the quick check settles the bytes as one JSON
  // document; false (with no error) otherwise. The quick check gives up on
  // any escaped UTF-16 surrogate, so a document it settles has none to repair.
  bool parse_plain(std::string_view bytes, std::size_t max_depth);

  // Told, when set before parse, which bytes the passes are done with (a
  // mapped export then drops those pages); see ExportResidency.
  void set_residency(ExportResidency* residency) { residency_ = residency; }
  void release_before(std::size_t offset) const {
    if (residency_) residency_->release_before(offset);
  }
  // The same as a progress callback for a pass over the whole export; empty without a residency.
  std::function<void(std::size_t)> release_progress() const {
    if (!residency_) return {};
    return [this](std::size_t offset) { residency_->release_before(offset); };
  }

  std::string_view bytes() const { return bytes_; }
  bool is_jsonl() const { return jsonl_; }
  JsonRef root() const { return root_; }  // the document, or the JSONL header line
  const std::vector<JsonRef>& jsonl_entries() const { return layout_->jsonl_entries; }

  RefKind kind(JsonRef ref) const;
  // True when `ref` is an object or array known to have no whitespace between
  // its tokens (long values only): its bytes are already one compact line.
  bool is_compact(JsonRef ref) const { return long_values_.container_is_compact(ref.begin); }
  const LongValues& long_values() const { return long_values_; }
  JsonRef member(JsonRef object, std::string_view key) const;  // invalid when missing
  // An object's members, read once, for several lookups without rescanning.
  std::vector<MemberSpan> members(JsonRef object) const;
  // The same into `out` (emptied when `object` is not an object), reusing
  // its memory: for a pass that walks every entry once.
  void members_into(JsonRef object, std::vector<MemberSpan>& out) const;
  static JsonRef find(const std::vector<MemberSpan>& members, std::string_view key);
  // `progress` (optional) is told how far a long walk has come.
  std::vector<JsonRef> elements(JsonRef array, const std::function<void(std::size_t)>& progress = {}) const;
  // The same for an array that is a member of the top-level object (the
  // entries), from what the syntax check found when it could: then no byte
  // of the export is read again. What it found is handed over once (a big
  // export has hundreds of thousands of entries): a second call walks.
  std::vector<JsonRef> top_array_elements(JsonRef array, const std::function<void(std::size_t)>& progress = {}) const;
  std::string string_value(JsonRef ref) const;  // unescaped
  // The same without a copy for a string with no escape (nearly every one):
  // a view of the document, or of `scratch` holding it unescaped.
  std::string_view string_text(JsonRef ref, std::string& scratch) const;
  std::string_view raw(JsonRef ref) const { return bytes_.substr(ref.begin, ref.end - ref.begin); }

  // 1-based line and byte column of an offset.
  void position(std::size_t offset, std::uint64_t& line, std::uint64_t& column) const;

  std::string error;
  std::size_t error_offset = 0;

  // Documents this long are checked on two threads when a split can be guessed.
  static constexpr std::size_t kSecondThreadBytes = std::size_t{8} << 20;

 private:
  // With `collect_long_values`, the quick check also fills long_values_
  // (and sets long_values_ready_) when it settles the text.
  bool check_syntax(std::string_view text, std::size_t base, std::size_t max_depth, bool collect_long_values = false,
                    bool quick_only = false);
  bool parse(std::string_view bytes, std::size_t max_depth, bool quick_only);
  bool parse_in_one_pass(std::string_view bytes, std::size_t max_depth);
  static std::size_t document_start(std::string_view bytes);
  std::size_t guess_second_half(std::string_view text) const;
  const std::vector<MemberSpan>& walked_members(std::size_t begin) const;
  mutable std::vector<MemberSpan> members_buffer_;  // walked_members's, reused (one reader per thread)
  std::string_view bytes_;
  ExportResidency* residency_ = nullptr;
  bool jsonl_ = false;
  JsonRef root_;
  // Where lines start, and the JSONL variant's entries: written by parse,
  // then only read.
  struct Layout {
    std::vector<std::size_t> line_starts;
    std::vector<JsonRef> jsonl_entries;
    // The elements of the top-level object's arrays, when the quick check
    // settled the document in one pass (see top_array_elements).
    std::vector<ElementSpan> top_array_elements;
    bool top_array_elements_known = false;
  };
  std::shared_ptr<Layout> layout_ = std::make_shared<Layout>();
  LongValues
      long_values_;  // the document's long strings and containers, so repeated walks skip them (shared by copies)
  bool long_values_ready_ = false;
};

}  // namespace pihydrate
