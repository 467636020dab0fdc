// The session model: what one pass over a JSONL session file extracts, line
// by line, before any of pi's loading rules are applied. Only the fields that
// pi's loader and the rules look at are kept; the rest of a line stays on disk
// and is reached again through `offset`/`length` when it must be copied out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pihydrate/chunked_vector.h"
#include "pihydrate/diagnostic.h"
#include "pihydrate/line_reader.h"

namespace pihydrate {

// The JSON type of a member, with kMissing for an absent member.
enum class JsonKind : std::uint8_t { kMissing, kNull, kFalse, kTrue, kNumber, kString, kArray, kObject };
const char* json_kind_name(JsonKind kind);

enum class EntryType : std::uint8_t {
  kNone,  // no string `type`
  kSession,
  kMessage,
  kCompaction,
  kBranchSummary,
  kCustomMessage,
  kCustom,
  kLabel,
  kSessionInfo,
  kModelChange,
  kThinkingLevelChange,
  kContextEdit,
  kUsage,
  kUnknown,
};
// The `type` string of a known entry type; empty for kNone and kUnknown.
std::string_view entry_type_name(EntryType type);

enum class Role : std::uint8_t {
  kNone,  // no string `role`
  kUser,
  kAssistant,
  kToolResult,
  kCustom,
  kHookMessage,
  kBashExecution,
  kBranchSummary,
  kCompactionSummary,
  kSystem,
  kUnknown,
};

enum class StopReason : std::uint8_t { kNone, kStop, kLength, kToolUse, kError, kAborted, kPending, kOther };

// An assistant message's `api` (pi-ai's provider API), as far as tool call
// ids care: kNone when it has no string `api`.
enum class MessageApi : std::uint8_t { kNone, kAnthropicMessages, kOther };

// A string member as found in a line: its kind, its (unescaped) text when it
// is a string or a number, and the byte column where its value starts.
// An index holds one Entry per line, so its size is most of pi-hydrate's
// memory: a Field packs into 16 bytes (a pointer, a 32-bit length, and the
// column and kind sharing 32 bits).
struct Field {
  Field() : column(0), kind(JsonKind::kMissing) {}
  std::string_view text() const { return {text_data_, text_size_}; }  // points into the arena
  void set_text(std::string_view text) {
    text_data_ = text.data();
    text_size_ = static_cast<std::uint32_t>(text.size());
  }
  bool is_string() const { return kind == JsonKind::kString; }
  bool present() const { return kind != JsonKind::kMissing; }

  const char* text_data_ = nullptr;
  std::uint32_t text_size_ = 0;
  std::uint32_t column : 29;  // 1-based byte column of the value; 0 when missing (lines are
                              // at most kMaxLineBytesLimit long)
  JsonKind kind : 3;
};

// A member whose text is not kept (objects, or strings read into an enum):
// only its kind and column, in 4 bytes.
struct KindField {
  KindField() : column(0), kind(JsonKind::kMissing) {}
  bool is_string() const { return kind == JsonKind::kString; }
  bool present() const { return kind != JsonKind::kMissing; }
  std::uint32_t column : 29;  // 1-based byte column of the value; 0 when missing
  JsonKind kind : 3;
};

struct ToolCallRef {
  std::string_view id;
  std::string_view name;
  std::uint32_t column = 0;  // column of the block's `id` value
  JsonKind id_kind = JsonKind::kMissing;
};

// Members only a few lines have: the header's, and those of labels,
// compactions and branch summaries. They live apart from Entry so the common
// line (a message) does not pay for them.
struct EntryDetails {
  // Header members (type "session").
  Field version;
  Field cwd;
  // References to other entries.
  Field first_kept_entry_id;     // compaction
  Field first_kept_entry_index;  // v1 compaction
  Field target_id;               // label
  Field label;                   // label
  Field from_id;                 // branch_summary
  Field summary;                 // compaction, branch_summary: text is at most the first byte
                                 // (only its truthiness is read, and summaries can be large)
  // The text of a string `type` or `message.role` pi does not know.
  std::string_view unknown_type;
  std::string_view unknown_role;
};

// One parsed, non-blank line of the file. An index holds one per line, so
// on a file of many short entries this struct is most of the memory: its
// members are ordered and packed to leave no padding (144 bytes).
struct Entry {
  std::uint64_t line = 0;    // 1-based physical line
  std::uint64_t offset = 0;  // byte offset of the line in the file
  std::uint32_t length = 0;  // bytes in the line, without '\n' (at most kMaxLineBytesLimit)

  KindField type_field;  // its text: type_text()
  Field id;
  Field parent_id;
  Field timestamp;  // its text only with IndexOptions::keep_timestamps

  // `message` and what the rules need from inside it.
  Field message_timestamp;  // its text only with IndexOptions::keep_timestamps
  Field tool_call_id;       // toolResult.toolCallId
  KindField message;
  KindField role_field;  // a known role's text is `role`; an unknown one's is details().unknown_role
  KindField stop_reason_field;
  std::uint32_t tool_calls_begin = 0;
  std::uint32_t tool_calls_count = 0;

  JsonKind root = JsonKind::kObject;  // the line's JSON value type
  EntryType type = EntryType::kNone;
  Role role = Role::kNone;
  JsonKind content_kind = JsonKind::kMissing;
  JsonKind usage_kind = JsonKind::kMissing;
  JsonKind usage_cost_kind = JsonKind::kMissing;
  StopReason stop_reason = StopReason::kNone;
  MessageApi api = MessageApi::kNone;  // message.api
  // What a content string or array holds, for the repairs that keep every
  // sent message and text block non-empty: text blocks whose text is
  // missing, not a string, or white space only (JS trim(); counted up to
  // 255); a thinking or redacted_thinking block; anything else (a non-blank
  // string or text, a tool call, an image, a value of another kind).
  std::uint8_t content_blank_texts = 0;
  bool falsy : 1;                 // null, false, 0 or "" (JS truthiness)
  bool exclude_from_context : 1;  // bashExecution.excludeFromContext === true
  bool content_has_thinking : 1;
  bool content_has_other : 1;

  Entry() : falsy(false), exclude_from_context(false), content_has_thinking(false), content_has_other(false) {}

  // The text of a string `type`, known or not.
  std::string_view type_text() const;

  // The rarer members; all missing when the line has none of them.
  const EntryDetails& details() const { return details_ ? *details_ : kNoDetails; }
  const EntryDetails* details_ = nullptr;  // owned by SessionIndex::details
  static const EntryDetails kNoDetails;
};

// Per-line problems found while splitting and parsing, independent of pi's
// version. The pi view decides what they mean for loading.
enum class LineProblem : std::uint8_t { kMalformed, kGlued, kNulByte, kTooLong, kTooDeep };

struct BadLine {
  std::uint64_t line = 0;
  std::uint64_t column = 0;
  LineProblem problem = LineProblem::kMalformed;
  bool is_last_without_newline = false;
  std::string reason;  // parser's words, e.g. "Missing a comma or '}' after an object member."
};

// Where long strings of the bytes being indexed end, known from an earlier
// pass that checked their syntax and UTF-8: the scan steps over those whose
// text it does not read instead of scanning them again. (A converted
// thread's strings borrowed from the export; a hydration's output strings
// copied from its input.)
class KnownStrings {
 public:
  virtual ~KnownStrings() = default;
  // The string whose opening quote is at byte `offset` of the input: one
  // past its closing quote, or 0 when not known. build_file_index calls it
  // from two threads at once.
  virtual std::uint64_t string_end(std::uint64_t offset) const = 0;
  // Nothing is known: string_end would give 0 for every string.
  virtual bool empty() const = 0;
  // Only strings of this many bytes or more (quotes included) are known:
  // shorter ones are not looked up.
  virtual std::size_t min_length() const = 0;
};

// Strings of kMinLength bytes or more (quotes included) whose text the scan
// did not read, in lines it read as plain JSON and found valid UTF-8 (see
// IndexOptions::record_long_strings), in file order. A hydration's output
// copies most of them unchanged, and its verification steps over them.
// 12 bytes a string, in fixed chunks (no spare capacity beyond one).
class LongStrings {
 public:
  static constexpr std::uint32_t kMinLength = 256;
  // An index notes at most this many for `entries` entries: its memory
  // then stays within the per-entry bound whatever the mix (the
  // benchmark's has about four for every five entries).
  static std::size_t cap_for(std::size_t entries) { return entries / 2 * 3 + 4096; }

  std::size_t size() const { return begins_.size(); }
  std::uint64_t begin(std::size_t i) const { return begins_[i]; }  // offset of the opening quote
  std::uint32_t length(std::size_t i) const { return lengths_[i]; }
  // In increasing order of offset.
  void add(std::uint64_t offset, std::uint32_t length) {
    begins_.push_back(offset);
    lengths_.push_back(length);
  }
  // Takes `later`'s strings, all past these.
  void append(LongStrings&& later);
  // The first string starting at or after `offset` (size() when none).
  std::size_t first_at_or_after(std::uint64_t offset) const;
  // One past the string starting at `offset`, or 0 when none does.
  std::uint64_t end_of(std::uint64_t offset) const;

 private:
  ChunkedVector<std::uint64_t> begins_;
  ChunkedVector<std::uint32_t> lengths_;
};

// Long strings as the known strings of the bytes they lie in (not owned).
class KnownLongStrings final : public KnownStrings {
 public:
  explicit KnownLongStrings(const LongStrings& strings) : strings_(strings) {}
  std::uint64_t string_end(std::uint64_t offset) const override { return strings_.end_of(offset); }
  bool empty() const override { return strings_.size() == 0; }
  std::size_t min_length() const override { return LongStrings::kMinLength; }

 private:
  const LongStrings& strings_;
};

struct IndexOptions {
  LineReaderOptions reader;
  std::size_t max_depth = 512;                  // JSON nesting cap per line
  std::size_t max_entries = 50'000'000;         // parsed lines kept in memory
  bool two_threads = true;                      // build_file_index: scan a big file's halves at once
  bool record_long_strings = false;             // fill SessionIndex::long_strings
  const KnownStrings* known_strings = nullptr;  // not owned
  // Keep the text of each entry's `timestamp` and `message.timestamp` (only
  // lint rules read it; their kind and column are always kept). Without it a
  // file of many short entries takes about 40 bytes less per entry.
  bool keep_timestamps = true;
};

// Interned strings for the index. Blocks never move, so string_views stay valid.
class StringArena {
 public:
  std::string_view add(std::string_view text);

 private:
  std::deque<std::string> blocks_;  // 64 KiB blocks for small strings, never reallocated
  std::deque<std::string> large_;   // one string each for anything bigger
  std::size_t used_in_last_ = 0;
};

struct SessionIndex {
  std::string file;  // display name used in diagnostics
  std::uint64_t file_size = 0;
  std::uint64_t line_count = 0;  // physical lines
  std::uint64_t blank_lines = 0;
  bool starts_with_bom = false;
  bool ends_with_newline = true;  // false when the last line has no '\n'
  std::uint64_t crlf_lines = 0;
  std::uint64_t first_crlf_line = 0;
  std::vector<std::uint64_t> invalid_utf8_lines;  // line numbers
  std::vector<std::uint64_t> invalid_utf8_columns;
  bool entry_cap_hit = false;
  bool timestamps_kept = true;  // IndexOptions::keep_timestamps: lint rules need them

  ChunkedVector<Entry> entries;          // parsed non-blank lines, in file order
  std::vector<BadLine> bad_lines;        // the first kMaxKeptProblems of them
  std::uint64_t bad_line_count = 0;      // all of them
  std::uint64_t invalid_utf8_count = 0;  // all lines with invalid UTF-8
  // Per-line problems kept with their position; the rest are only counted,
  // so a file of a million broken lines cannot make the report huge.
  static constexpr std::size_t kMaxKeptProblems = 1000;
  LongStrings long_strings;             // with IndexOptions::record_long_strings
  std::vector<ToolCallRef> tool_calls;  // Entry::tool_calls_* index this
  std::deque<EntryDetails> details;     // Entry::details_ points here; a deque never moves them
  // Storage of a second half scanned on its own thread (build_file_index):
  // its entries point into these, which are kept as they are.
  std::vector<std::deque<EntryDetails>> merged_details;
  std::vector<std::unique_ptr<StringArena>> merged_arenas;
  std::unique_ptr<StringArena> arena = std::make_unique<StringArena>();

  const ToolCallRef* calls_begin(const Entry& e) const { return tool_calls.data() + e.tool_calls_begin; }
  const ToolCallRef* calls_end(const Entry& e) const { return calls_begin(e) + e.tool_calls_count; }
};

// Reads a whole session file in one streaming pass.
SessionIndex build_session_index(ByteSource& source, std::string display_name, const IndexOptions& options = {});

// The same for an open regular file, from its first byte. A big file is
// split at a line boundary and its halves scanned on two threads (unless
// options.two_threads is false); the index is the one build_session_index
// gives. Throws IoError.
SessionIndex build_file_index(int fd, std::string display_name, const IndexOptions& options = {});

}  // namespace pihydrate
