// The thread export's planning rules (docs/thread-export.md R3, R6, R7, R9,
// X4 and the message repairs of R4/R5) as pure functions over a plain table
// of entries: no I/O, no threads, no document. The converter reads the
// export into that table (thread_entries.cc; raw pi entries become one row
// per session line they carry, raw_thread.cc), asks these functions what to
// do, and builds the lines (thread_lines.cc). The rules see every row: a raw
// message closes a stream, echoes a chat turn and anchors a compaction as a
// lossy one does.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "readers/thread_export.h"

namespace pihydrate {
namespace thread_rules {

// The entry kinds the converter reads (others are skipped with a warning).
// kSkipped: an entry whose id was read but which gives nothing.
enum class Kind : std::uint8_t {
  kUnknown,
  kChat,
  kPiUser,
  kPiAssistant,
  kPiToolResult,
  kPiChunk,
  kPiCompaction,
  kPiEntry,     // raw: one line of pi's session file (X2)
  kPiSnapshot,  // raw: the whole file at one moment (X1)
  kRawLine,     // one session line a raw entry carries: what the rules see of pi.entry and pi.snapshot
  kSkipped
};
Kind kind_of(std::string_view text);
const char* kind_name(Kind kind);
inline bool is_raw_kind(Kind kind) { return kind == Kind::kPiEntry || kind == Kind::kPiSnapshot; }

// A chat entry's data.role, or a raw line's message role.
enum class ChatRole : std::uint8_t { kNone, kUser, kAssistant, kToolResult, kOther };

// What the rules read of one accepted entry of the export.
struct RuleEntry {
  Kind kind = Kind::kUnknown;
  ChatRole role = ChatRole::kNone;  // a chat entry's data.role; a raw line's message role
  bool has_stream_key = false;      // a pi.chunk with data.streamKey
  bool compaction = false;          // a raw line that is a compaction entry
  std::string_view id;
  std::string_view ref;              // a chat assistant's data.piRef, a pi.user's data.chatRef ("" if none)
  std::string_view stream_key;       // a pi.chunk's data.streamKey (see stream_key_of_*)
  std::string_view final_timestamp;  // a pi.assistant's or raw assistant's message.timestamp, the same way
  // A pi message's or raw message's role and timestamp, "role:key" (X4
  // compares them); filled only when the export carries raw entries.
  std::string_view message_key;
};
inline bool is_assistant_message(const RuleEntry& e) {
  return e.kind == Kind::kPiAssistant || (e.kind == Kind::kRawLine && e.role == ChatRole::kAssistant);
}
inline bool is_user_turn(const RuleEntry& e) {
  return (e.kind == Kind::kChat || e.kind == Kind::kRawLine) && e.role == ChatRole::kUser;
}

// R6 compares a streamKey with a message.timestamp as values: a string by
// its text, an integer by its value. Any other streamKey is no key. These
// give each value the text that is compared.
std::string stream_key_of_string(std::string_view text);
std::string stream_key_of_integer(std::int64_t value);
using RuleEntries = std::vector<RuleEntry>;

// The position of the entry with this id, or -1 (ids are unique by then).
using PositionOfId = std::function<std::int64_t(std::string_view id)>;
// The text an entry shows: a chat entry's data.text; a pi or raw message's
// text (message_text: a string content, or its text blocks joined by "\n");
// a raw compaction's summary. Read only when a comparison needs it.
using TextOf = std::function<std::string(std::size_t position)>;

// Runs of white space become one space; leading and trailing space go.
std::string normalize_space(std::string_view s);

// R3: which chat user turn each pi.user (or raw user message) replaces. A
// pi.user replaces the chat user turn its chatRef names; without one (or one
// that names no chat user turn), the nearest earlier chat user turn that
// nothing replaces yet, if its text is the same; so does a raw user message,
// which has no chatRef. A turn is replaced once.
struct UserReplacements {
  std::vector<std::int32_t> replaced_by;  // per entry: for a chat user turn, the row that replaces it, else -1
  std::uint64_t by_pi_user = 0;           // replaced by a pi.user (it takes the turn's place)
  std::uint64_t by_raw_user = 0;          // by a raw user message (which stays at its own place)
};
UserReplacements plan_user_replacements(const RuleEntries& entries, const PositionOfId& position_of_id,
                                        const TextOf& text_of);

// R7: the chat assistant turns that echo an assistant message (a
// pi.assistant, or a raw one): their piRef names one, or their text equals
// the text of one of the same turn (the entries between the user turns
// around it: chat user turns and raw user messages), compared with white
// space normalised, with or without the line breaks between text blocks.
std::vector<std::uint8_t> find_assistant_echoes(const RuleEntries& entries, const PositionOfId& position_of_id,
                                                const TextOf& text_of);

// R6: chunk streams. A stream is the chunks with one streamKey, or a run of
// chunks without one since the previous assistant message or tool result.
// A stream closed by a final assistant message (a pi.assistant or a raw one,
// whose message.timestamp is the streamKey, or that ends the run) is
// dropped; an interrupted one is rebuilt or dropped as `partial` says.
struct StreamPlan {
  std::uint64_t chunks_of_final_messages = 0;     // dropped: their final message is there
  std::vector<std::vector<std::size_t>> rebuilt;  // interrupted streams to rebuild (--partial keep|text)
  std::vector<std::vector<std::size_t>> dropped;  // interrupted streams left out (--partial drop)
};
StreamPlan plan_chunk_streams(const RuleEntries& entries, PartialPolicy partial);

// X4: the lossy entries a raw entry already says: a pi.user, pi.assistant
// or pi.tool_result whose message has a raw message's role and timestamp
// (message_key), and a pi.compaction whose summary (text_of) a raw
// compaction has. (Chat turns a raw message duplicates are R3's and R7's;
// chunks a raw assistant closes are R6's.)
std::vector<std::uint8_t> find_covered_by_raw(const RuleEntries& entries, const TextOf& text_of);

// R9: the line a compaction keeps from, among the lines converted before
// it. In order: the line firstKeptRef's entry became (or the next line
// after it); the line of the earlier entry whose piEntryId is the result's
// firstKeptEntryId; the last user turn; none (the compaction keeps only
// what follows it). A tool result moves back to the assistant that made
// the call, so the kept window never starts with a result.
class ConvertedLines {  // what R9 reads of the lines before a compaction
 public:
  virtual ~ConvertedLines() = default;
  virtual std::size_t size() const = 0;
  virtual bool is_user_turn(std::size_t line) const = 0;
  virtual bool is_tool_result(std::size_t line) const = 0;
  // An assistant's tool call ids, or a tool result's one toolCallId.
  virtual std::vector<std::string_view> tool_call_ids(std::size_t line) const = 0;
};
struct CompactionAnchor {
  std::int64_t line = -1;              // -1: none
  const char* how = "self";            // firstKeptRef, piEntryId, last-user-turn or self
  bool first_kept_ref_unused = false;  // firstKeptRef is set but names no earlier line
};
// `by_first_kept_ref`, `by_pi_entry_id`: the lines those name, or -1;
// `has_first_kept_ref`: the compaction sets one.
CompactionAnchor anchor_compaction(bool has_first_kept_ref, std::int64_t by_first_kept_ref, std::int64_t by_pi_entry_id,
                                   const ConvertedLines& lines);

// R4/R5, at a pi message's own level (its content blocks are repaired with
// every session's, by hydrate_session): what the copy must change.
struct PiMessageShape {
  bool has_timestamp = false;
  bool stop_reason_settled = false;  // see is_settled_stop_reason
};
// A stopReason (the string's text; "" when missing or not a string) that
// pi can resume from as it is: anything but "" and "pending".
bool is_settled_stop_reason(std::string_view stop_reason);
struct MessageRepairs {
  bool settle_stop_reason = false;  // pi.assistant: "toolUse" with tool calls, else "stop"
  bool add_timestamp = false;       // message.timestamp from the entry's time
  bool any() const { return settle_stop_reason || add_timestamp; }
};
MessageRepairs message_repairs(Kind kind, const PiMessageShape& shape);

}  // namespace thread_rules
}  // namespace pihydrate
