// What pi sends when a session is resumed: the conversation after the
// compaction (buildSessionContext), pi's conversion (convertToLlm) and
// pi-ai's repairs (transformMessages), per pi version, with where each
// message comes from and what pi dropped on the way. `pi-hydrate context`
// prints it (docs/context.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pihydrate/pi_view.h"
#include "pihydrate/session_index.h"

namespace pihydrate {

// What built a sent message.
enum class SentSource : std::uint8_t {
  kMessage,                  // a message entry (user, assistant, toolResult, system)
  kCustomMessage,            // a custom_message entry, or a message whose role is "custom"
  kBranchSummary,            // a branch_summary entry, wrapped in pi's <summary> text
  kCompactionSummary,        // the latest compaction's summary, wrapped in pi's <summary> text
  kCompactionSystemMessage,  // pi 1.5: the compaction's systemMessage
  kBashExecution,            // a bashExecution message, as pi's "Ran `…`" text
  kSynthesized,              // pi-ai's "No result provided" for a call without a result
};
const char* sent_source_name(SentSource source);  // "message", "custom_message", ...

// A JSON value as pi reads it: a string's text, or the JSON text of any
// other value (kind tells which; kMissing for an absent member).
struct SentValue {
  JsonKind kind = JsonKind::kMissing;
  std::string text;
  bool operator==(const SentValue& other) const { return kind == other.kind && text == other.text; }
};

struct SentToolCall {
  SentValue id;           // as sent (pi-ai keeps ids; a provider's normaliser may rename them)
  SentValue name;         // the tool
  std::string arguments;  // the JSON text of `arguments`, "" when absent
};

// One message of the request, in order.
struct SentMessage {
  std::string role;  // "user", "assistant", "toolResult" or "system"
  SentSource source = SentSource::kMessage;
  std::uint64_t line = 0;  // the entry's line; 0 for a synthesized result
  SentValue entry_id;      // the entry's id
  // Text blocks, as pi-ai reads them (a string content is one text; a text
  // block whose text is not a string is its JSON text, "" when absent).
  std::vector<std::string> texts;
  std::vector<SentToolCall> tool_calls;  // assistant
  SentValue tool_call_id;                // toolResult: the call it answers
  bool is_error = false;                 // toolResult: isError is true
  // toolResult: no call of the turn before it has its id. pi-ai sends it
  // anyway, and providers reject the request (validate: PH401, PH403, PH404).
  bool orphan = false;
  std::size_t images = 0;    // image blocks
  std::size_t thinking = 0;  // thinking blocks sent as thinking
  // Thinking of another model: pi 1.5 drops it, pi 0.78 sends it as text
  // (then it is also in `texts`); empty thinking is always dropped.
  std::size_t thinking_dropped = 0;
  std::size_t thinking_as_text = 0;
  bool edited = false;          // pi 1.5: a context_edit replaced its content
  std::uint64_t call_line = 0;  // synthesized: the line of the assistant that made the call
};

enum class DropReason : std::uint8_t {
  kBeforeFirstKept,         // on the path before the latest compaction's first kept entry
  kEmptyBranchSummary,      // a branch_summary whose summary is falsy
  kBashExcluded,            // bashExecution with excludeFromContext (pi's `!!` commands)
  kUnknownRole,             // convertToLlm knows no such role (or message is not an object)
  kSystemRole,              // pi 0.78: convertToLlm drops system messages
  kSystemBeforeCompaction,  // pi 1.5: a system message kept by a compaction is left out
  kContextEditRemoved,      // pi 1.5: a context_edit with replacement null
  kErrorAssistant,          // pi-ai skips an assistant whose stopReason is "error"
  kAbortedAssistant,        // ... or "aborted"
};
const char* drop_reason_name(DropReason reason);  // "before-first-kept", ...

struct DroppedEntry {
  std::uint64_t line = 0;
  SentValue entry_id;
  std::string what;  // "message (assistant)", "custom_message", "branch_summary", ...
  DropReason reason = DropReason::kUnknownRole;
  std::uint64_t by_line = 0;  // the compaction or context_edit responsible, when one is
};

// The model pi-ai compares assistant messages with (pi_load.mjs's choice):
// the session's model (the last model_change or assistant message on the
// path), with the api of the last assistant message of that model.
struct SentModel {
  std::string provider;  // "unknown" when the session names none
  std::string id;
  std::string api;  // "unknown" when no assistant message of that model has one
};

struct ResumeContext {
  PiVersion version = newest_pi_version();
  bool loads = false;                  // false: pi does not load the file; see the view's failure
  std::int64_t leaf = -1;              // node the path ends at
  std::uint64_t leaf_line = 0;         // its line
  std::optional<std::string> leaf_id;  // its id, when a string
  SentModel model;
  // pi loads the file, but pi-ai throws building every request (nothing is
  // sent): the reason and the line of the message it throws on.
  std::string request_error;
  std::uint64_t request_error_line = 0;
  std::vector<SentMessage> messages;  // empty when they went to a SentMessageSink
  std::size_t message_count = 0;      // how many messages are sent (0 on a request error)
  std::vector<DroppedEntry> dropped;
};

// The text of an entry's line (without its '\n'); the builder re-reads the
// lines on the path, since the index keeps only positions.
using LineText = std::function<std::string(const Entry&)>;

// From `view` (build_pi_view; with view.path already set to another branch
// and rebuild_context called, for --leaf). Nothing is sent when the view
// does not load.
ResumeContext build_resume_context(const SessionIndex& index, const PiView& view, const LineText& line_text);

// Each message of the request, in order.
using SentMessageSink = std::function<void(SentMessage&&)>;

// The same, with the messages handed to `sink` one at a time instead of
// kept in `messages` (left empty), so memory does not grow with them. When
// pi-ai throws (request_error), the messages before the one it throws on
// have gone to the sink already: a caller that shows them only when the
// request builds runs a first pass with a sink that discards them.
ResumeContext build_resume_context(const SessionIndex& index, const PiView& view, const LineText& line_text,
                                   const SentMessageSink& sink);

}  // namespace pihydrate
