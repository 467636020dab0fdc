// Message payloads, the context pi builds, and tool-call pairing as pi-ai
// sends it.
#include <string>
#include <unordered_map>

#include "validate/rules.h"

namespace pihydrate {
namespace {

const char* stop_reason_text(const Entry& e) { return e.stop_reason == StopReason::kError ? "error" : "aborted"; }

void check_message_presence(RuleContext& ctx) {
  const PiView& v = ctx.view;
  std::vector<std::uint8_t> on_path(v.nodes.size(), 0);
  for (std::uint32_t p : v.path) on_path[p] = 1;
  for (std::uint32_t i = 0; i < v.nodes.size(); ++i) {
    const Entry& e = ctx.node_entry(i);
    if (e.root != JsonKind::kObject || e.type != EntryType::kMessage) continue;
    if (e.message.kind == JsonKind::kMissing || e.message.kind == JsonKind::kNull) {
      std::string what = std::string("message entry ") +
                         (e.message.kind == JsonKind::kNull ? "whose message is null" : "without a message");
      if (on_path[i]) {
        ctx.report(Code::kMessageMissing, Severity::kError, e.line, e.message.present() ? e.message.column : 1,
                   what + ": pi crashes while building the context (TypeError: Cannot read properties of " +
                       (e.message.kind == JsonKind::kNull ? "null" : "undefined") + " (reading 'role'))",
                   "delete the entry (and re-link its children), or restore its message");
      } else {
        ctx.report_at_level(Code::kMessageMissing, Severity::kWarning, Level::kResume, e.line,
                            e.message.present() ? e.message.column : 1,
                            what + ": it is off the resumed branch, but pi crashes if anyone navigates to it",
                            "delete the entry, or restore its message");
      }
      continue;
    }
    if (e.message.kind != JsonKind::kObject) continue;
    // The interactive footer sums usage over every assistant in the file.
    if (e.role == Role::kAssistant) {
      if (e.usage_kind != JsonKind::kObject) {
        ctx.report(Code::kUsageMissing, Severity::kError, e.line, e.message.column,
                   "assistant message without usage: the interactive pi crashes on its first render (reading "
                   "'input')",
                   "add \"usage\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0,"
                   "\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}");
      } else if (e.usage_cost_kind != JsonKind::kObject) {
        ctx.report(Code::kUsageMissing, Severity::kError, e.line, e.message.column,
                   "assistant usage without cost: the interactive pi crashes on its first render (reading 'total')",
                   "add \"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0} to usage");
      }
    }
  }
}

void check_context_messages(RuleContext& ctx) {
  const PiView& v = ctx.view;
  for (const ContextItem& item : v.context) {
    if (item.kind != ContextKind::kMessage) continue;
    const Entry& e = ctx.node_entry(item.node);
    if (e.message.kind != JsonKind::kObject) {
      ctx.report(Code::kUnknownRole, Severity::kWarning, e.line, e.message.column,
                 std::string("message is ") + json_kind_name(e.message.kind) +
                     ", not an object: it has no role, and pi-ai drops it before sending",
                 "make message an object with a role");
      continue;
    }
    if (item.llm_role == Role::kNone && !(e.role == Role::kBashExecution && e.exclude_from_context)) {
      std::string what;
      if (e.role == Role::kHookMessage) {
        what =
            "role \"hookMessage\" in a v3 file: only v2 files are migrated to \"custom\", so pi-ai drops this "
            "message before sending";
      } else if (e.role == Role::kSystem) {
        what = "role \"system\": " + ctx.pi_name() + " drops it before sending (pi 1.x sends it)";
      } else if (e.role_field.is_string()) {
        what = "role " + quoted(e.details().unknown_role) +
               " is not one pi knows: pi-ai drops this message before sending";
      } else {
        what = std::string("message role is ") + json_kind_name(e.role_field.kind) +
               ": pi-ai drops this message before sending";
      }
      ctx.report(Code::kUnknownRole, Severity::kWarning, e.line,
                 e.role_field.present() ? e.role_field.column : e.message.column, what,
                 "use user, assistant, toolResult, custom, bashExecution, branchSummary or compactionSummary");
      continue;
    }
    // Content: string or null where pi expects an array.
    bool null_content = e.content_kind == JsonKind::kNull || e.content_kind == JsonKind::kMissing;
    if (e.role == Role::kAssistant && e.content_kind == JsonKind::kString) {
      ctx.report(Code::kContentNotArray, Severity::kError, e.line, e.message.column,
                 "assistant content is a string: pi-ai crashes building the next request "
                 "(content.flatMap is not a function) and the interactive pi crashes on start",
                 "wrap it: \"content\":[{\"type\":\"text\",\"text\":...}]");
    } else if (e.role == Role::kToolResult && e.content_kind == JsonKind::kString) {
      ctx.report(Code::kContentNotArray, Severity::kError, e.line, e.message.column,
                 "tool result content is a string: the provider converters crash building the next request "
                 "(content.some / content.filter is not a function)",
                 "wrap it: \"content\":[{\"type\":\"text\",\"text\":...}]");
    } else if ((e.role == Role::kAssistant || e.role == Role::kUser || e.role == Role::kToolResult) && null_content) {
      std::string what = std::string("message content is ") + (e.content_kind == JsonKind::kNull ? "null" : "missing");
      if (!ctx.pi().reads_missing_content_as_empty) {
        ctx.report(
            Code::kContentNotArray, Severity::kError, e.line, e.message.column,
            what + (e.role == Role::kAssistant
                        ? ": " + ctx.pi_name() + " crashes building the next request (reading 'flatMap') and in the TUI"
                        : ": " + ctx.pi_name() + " crashes on it building the next request (reading '" +
                              (e.role == Role::kUser ? "map" : "some") +
                              "') and in the interactive TUI (reading 'filter')"),
            "write \"content\":[]");
      } else {
        ctx.report(Code::kContentNotArray, Severity::kWarning, e.line, e.message.column,
                   what + ": " + ctx.pi_name() + " reads it as [] (pi 0.78 crashes on it)", "write \"content\":[]");
      }
    }
    const bool readable = e.content_kind == JsonKind::kArray || e.content_kind == JsonKind::kString;
    if ((e.role == Role::kUser || e.role == Role::kAssistant || e.role == Role::kToolResult) &&
        e.content_blank_texts > 0) {
      ctx.report(Code::kBlankTextBlock, Severity::kWarning, e.line, e.message.column,
                 "a text block has no text, or only white space: Anthropic rejects it (text content blocks must be "
                 "non-empty), and only some of pi-ai's providers leave it out",
                 "delete the block");
    }
    if (e.role == Role::kUser && readable && has_nothing_to_send(e)) {
      ctx.report(Code::kEmptyMessage, Severity::kWarning, e.line, e.message.column,
                 "the user message has nothing to send (no text, or only white space): pi-ai leaves it out for "
                 "some providers and sends it empty to others, which reject it",
                 "delete the message, or give it its text");
    } else if (e.role == Role::kAssistant && e.content_kind == JsonKind::kArray && !is_skipped_assistant(e) &&
               has_nothing_to_send(e)) {
      ctx.report(Code::kEmptyMessage, Severity::kWarning, e.line, e.message.column,
                 "the assistant message has no content: pi-ai leaves it out of the request, and providers "
                 "reject an empty message",
                 "delete the message");
    } else if (e.role == Role::kToolResult && readable && has_nothing_to_send(e)) {
      ctx.report(Code::kEmptyMessage, Severity::kWarning, e.line, e.message.column,
                 "the tool result has no content: pi-ai sends it to Anthropic as an empty text block, which is "
                 "rejected (text content blocks must be non-empty)",
                 "give it a text, such as \"(no tool output)\"");
    }
    if (e.role == Role::kAssistant && e.stop_reason == StopReason::kPending) {
      ctx.report(Code::kPendingStopReason, Severity::kWarning, e.line, e.stop_reason_field.column,
                 "stopReason \"pending\": the message was recorded while still streaming, and pi sends it as if it "
                 "were complete",
                 "drop the partial message, or set the stopReason it ended with");
    }
  }
}

// The first message pi-ai sends (messages providers drop left aside) must be
// a user message: Anthropic rejects a request that starts otherwise.
void check_first_message(RuleContext& ctx) {
  for (const ContextItem& item : ctx.view.context) {
    if (item.llm_role != Role::kUser && item.llm_role != Role::kAssistant && item.llm_role != Role::kToolResult)
      continue;  // dropped by convertToLlm, or a system message
    const Entry& e = ctx.node_entry(item.node);
    if (item.kind == ContextKind::kMessage && (e.role == Role::kUser || e.role == Role::kAssistant) &&
        (is_skipped_assistant(e) || has_nothing_to_send(e)))
      continue;  // never sent
    if (item.llm_role == Role::kUser) return;
    ctx.report(Code::kFirstMessageNotUser, Severity::kWarning, e.line, e.message.column,
               std::string("the first message sent to the model is ") +
                   (item.llm_role == Role::kAssistant ? "an assistant message" : "a tool result") +
                   ", not a user message: Anthropic rejects the request",
               "add a user message before it (pi-hydrate adds one)");
    return;
  }
}

void check_compaction_anchor(RuleContext& ctx) {
  const PiView& v = ctx.view;
  if (v.compaction < 0 || v.first_kept_found) return;
  const Entry& c = ctx.node_entry(v.compaction);
  if (v.migrates_v1) {
    const Field& idx = c.details().first_kept_entry_index;
    std::string what = idx.kind == JsonKind::kNumber ? "firstKeptEntryIndex " + std::string(idx.text()) +
                                                           " does not point at an entry before this compaction"
                                                     : "the compaction has no numeric firstKeptEntryIndex";
    ctx.report(Code::kCompactionAnchorOffPath, Severity::kWarning, c.line, idx.present() ? idx.column : 1,
               what + ": pi keeps only the summary and what follows the compaction",
               "the index counts parsed lines from 0, the header included");
    return;
  }
  const Field& kept = c.details().first_kept_entry_id;
  // A compaction that names itself keeps nothing before it, on purpose.
  if (kept.is_string() && c.id.is_string() && kept.text() == c.id.text()) return;
  ctx.report(
      Code::kCompactionAnchorOffPath, Severity::kWarning, c.line, kept.present() ? kept.column : 1,
      (kept.is_string() ? "firstKeptEntryId " + quoted(kept.text()) + " is not on the path before this compaction"
                        : std::string("the compaction has no firstKeptEntryId")) +
          ": pi keeps only the summary and what follows the compaction",
      "point firstKeptEntryId at the first entry to keep (on this branch, before the compaction)");
}

void check_labels(RuleContext& ctx) {
  const PiView& v = ctx.view;
  // The targets labels name, then which of them are ids: a set the size of
  // the labels, not of the whole session.
  std::unordered_map<std::string_view, bool> ids;  // target -> names an entry
  for (std::uint32_t i = 0; i < v.nodes.size(); ++i) {
    const Entry& e = ctx.node_entry(i);
    if (e.root == JsonKind::kObject && e.type == EntryType::kLabel && e.details().target_id.is_string())
      ids.emplace(e.details().target_id.text(), false);
  }
  if (!ids.empty()) {
    for (std::uint32_t i = 0; i < v.nodes.size(); ++i) {
      const Entry& e = ctx.node_entry(i);
      if (!e.id.is_string()) continue;
      if (auto it = ids.find(e.id.text()); it != ids.end()) it->second = true;
    }
  }
  for (std::uint32_t i = 0; i < v.nodes.size(); ++i) {
    const Entry& e = ctx.node_entry(i);
    if (e.root != JsonKind::kObject || e.type != EntryType::kLabel) continue;
    if (e.details().target_id.is_string() && ids.at(e.details().target_id.text())) continue;
    ctx.report(
        Code::kLabelTargetMissing, Severity::kWarning, e.line,
        e.details().target_id.present() ? e.details().target_id.column : 1,
        (e.details().target_id.is_string() ? "label target " + quoted(e.details().target_id.text()) + " names no entry"
                                           : std::string("label without a string targetId")) +
            ": the label is attached to nothing",
        "point targetId at an entry, or delete the label");
  }
}

void check_tool_pairing(RuleContext& ctx) {
  for (const PairingFinding& f : find_pairing_issues(ctx.index, ctx.view)) {
    const Entry& e = ctx.node_entry(f.node);
    const std::string id = quoted(f.tool_call_id);
    switch (f.issue) {
      case PairingIssue::kOrphanResult:
        ctx.report(Code::kOrphanToolResult, Severity::kError, e.line, f.column,
                   "tool result for " + id +
                       " has no matching tool call in the turn before it: pi-ai sends it anyway, and the provider "
                       "rejects the request (HTTP 400)",
                   "delete the result, or restore the assistant message that made the call");
        break;
      case PairingIssue::kMissingResult:
        ctx.report(Code::kMissingToolResult, Severity::kWarning, e.line, f.column,
                   "tool call " + id + " has no result: pi-ai inserts \"No result provided\" (isError) when it " +
                       "sends the history",
                   "add the toolResult right after this message, or let pi-hydrate --tools pair add one");
        break;
      case PairingIssue::kResultOfSkipped: {
        const Entry& a = ctx.node_entry(f.call_node);
        ctx.report(Code::kResultOfSkippedAssistant, Severity::kError, e.line, f.column,
                   "tool result for " + id + " answers the assistant message on line " + std::to_string(a.line) +
                       ", which stopped with \"" + stop_reason_text(a) +
                       "\": pi-ai drops that message, so this result is sent without its call (HTTP 400)",
                   "delete this result together with the failed assistant message");
        break;
      }
      case PairingIssue::kInterleaved: {
        const Entry& call = ctx.node_entry(f.call_node);
        const Entry& result = ctx.node_entry(f.result_node);
        ctx.report(Code::kMessageBetweenCallAndResult, Severity::kError, e.line, 1,
                   "this message comes between tool call " + id + " (line " + std::to_string(call.line) +
                       ") and its result (line " + std::to_string(result.line) +
                       "): pi-ai answers the call with \"No result provided\" here, then sends the real result "
                       "without its call (HTTP 400)",
                   "move this message after the tool results");
        break;
      }
      case PairingIssue::kDuplicateResult: {
        const Entry& first = ctx.node_entry(f.result_node);
        ctx.report(Code::kDuplicateToolResult, Severity::kError, e.line, f.column,
                   "second result for tool call " + id + " (the first is on line " + std::to_string(first.line) +
                       "): providers reject a call with two results",
                   "delete the later result");
        break;
      }
      case PairingIssue::kRepeatedToolCallId:
        ctx.report(Code::kBadToolCallId, Severity::kWarning, e.line, f.column,
                   "tool call id " + id + " was already used by the call on line " +
                       std::to_string(ctx.node_line(f.call_node)) +
                       ": pi pairs each result with the call of its own turn, but some providers reject repeated ids",
                   "give the later call and its result a fresh id");
        break;
      case PairingIssue::kBadToolCallId:
        ctx.report(Code::kBadToolCallId, Severity::kWarning, e.line, f.column,
                   "tool call id " + id +
                       " does not match ^[a-zA-Z0-9_-]{1,64}$: Anthropic rejects it, and pi renames ids only when "
                       "it switches models",
                   "use letters, digits, '_' and '-' only, at most 64 of them");
        break;
    }
  }
}

}  // namespace

void check_message_rules(RuleContext& ctx) {
  if (ctx.view.header < 0) return;
  if (ctx.view.migrates_v1 && ctx.view.outcome == LoadOutcome::kCrash) return;
  check_message_presence(ctx);
  if (!ctx.view.migrates_v1) check_labels(ctx);  // v1 ids are regenerated
  if (!ctx.view.loads()) return;
  check_context_messages(ctx);
  check_first_message(ctx);
  check_compaction_anchor(ctx);
  check_tool_pairing(ctx);
}

}  // namespace pihydrate
