// The order of the written entries and the tool-call repairs.
//
// Both policies first match every result to its call (the earliest earlier
// call with its id that has no result yet) and pull it forward to sit right
// after that call, in call order; a message found between a call and its
// results (a steering message) so ends up after the results.
// pair:    a call without a result gets an explicit error result; results
//          with no call (orphans, duplicates, results of error/aborted
//          assistants, which pi-ai drops) are left out.
// flatten: nothing is added or left out; calls and results become plain text
//          (entry_rewriter.cc does the bytes), so no provider can reject the
//          history.
// Whatever the policy, what is sent must be something every provider
// takes: user and assistant messages with nothing to send are left out,
// content becomes an array without blank text blocks, a conversation starts
// with a user message, and (pair) tool call ids are unique and portable.
#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/index_by_key.h"
#include "hydrate/plan.h"
#include "pihydrate/formats.h"

namespace pihydrate {
namespace {

bool is_message(const Entry& e) {
  return e.root == JsonKind::kObject && e.type == EntryType::kMessage && e.message.kind == JsonKind::kObject;
}

bool content_is_unreadable(const Entry& e) {
  return e.content_kind != JsonKind::kArray && e.content_kind != JsonKind::kString;
}

// `id` as a provider that wants ^[a-zA-Z0-9_-]{1,64}$ takes it: each byte
// outside ASCII [A-Za-z0-9_-] becomes '_' (per byte, whatever the locale), at
// most 64 of them; "call" when nothing is left.
std::string portable_form(std::string_view id) {
  std::string base;
  for (char c : id) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    base += keep ? c : '_';
  }
  if (base.size() > 64) base.resize(64);
  if (base.empty()) base = "call";
  return base;
}

// A tool call id every provider takes, made from `id`: its portable form,
// with _2, _3, ... while `taken` says the id is in use.
template <typename Taken>
std::string portable_tool_call_id(std::string_view id, const Taken& taken) {
  const std::string base = portable_form(id);
  if (!taken(base)) return base;
  for (std::uint64_t n = 2;; ++n) {
    const std::string suffix = "_" + std::to_string(n);
    std::string candidate = base.substr(0, 64 - suffix.size()) + suffix;
    if (!taken(candidate)) return candidate;
  }
}

void warn(HydrateReport& report, const SessionIndex& index, Code code, const Entry& e, std::uint64_t column,
          std::string message) {
  Diagnostic d;
  d.code = code;
  d.severity = Severity::kWarning;
  d.level = code_info(code).level;
  d.file = index.file;
  d.line = e.line;
  d.column = column ? column : 1;
  d.message = std::move(message);
  report.diagnostics.push_back(std::move(d));
}

}  // namespace

Plan plan_entries(const SessionIndex& index, const PiView& view, const std::vector<std::uint32_t>& path,
                  const HydrateOptions& options, HydrateReport& report) {
  Plan plan;
  const std::size_t n = path.size();
  const std::size_t diagnostics_before = report.diagnostics.size();  // this step's are sorted by line

  // Which path entries are in the context (pi hides those before the latest
  // compaction's first kept entry).
  std::vector<std::uint8_t> in_context_node(view.nodes.size(), 0);
  for (const ContextItem& item : view.context)
    if (item.kind != ContextKind::kCompactionSummary) in_context_node[item.node] = 1;
  std::int64_t compaction_pos = -1;
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<std::int64_t>(path[i]) == view.compaction) compaction_pos = static_cast<std::int64_t>(i);
  auto hidden = [&](std::size_t i) {
    return compaction_pos >= 0 && static_cast<std::int64_t>(i) < compaction_pos && !in_context_node[path[i]];
  };

  // --prune-compacted: leave out hidden entries, but keep the ones that set
  // the model, thinking level or name, which pi reads over the whole path.
  std::vector<std::uint8_t> keep(n, 1);
  if (options.prune_compacted && compaction_pos >= 0) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!hidden(i)) continue;
      const Entry& e = view.entry(index, path[i]);
      bool settings = e.root == JsonKind::kObject &&
                      (e.type == EntryType::kModelChange || e.type == EntryType::kThinkingLevelChange ||
                       e.type == EntryType::kSessionInfo);
      if (settings) continue;
      keep[i] = 0;
      report.repairs["pruned-compacted"]++;
    }
  }

  // User and assistant messages with nothing to send are left out: pi 0.78
  // crashes on null content, pi-ai drops such a message for some providers
  // (a conversation can then start with an assistant) and sends it empty to
  // others, which reject it. An error/aborted assistant stays: pi-ai never
  // sends it, and pi shows its error.
  std::vector<std::uint8_t> claimed(n, 0), dropped(n, 0);
  const bool drop_thinking = options.thinking == ThinkingPolicy::kDrop;
  for (std::size_t i = 0; i < n; ++i) {
    if (!keep[i]) continue;
    const Entry& e = view.entry(index, path[i]);
    const bool user = e.role == Role::kUser;
    if (!is_message(e) || !(user || (e.role == Role::kAssistant && !is_skipped_assistant(e))) ||
        !has_nothing_to_send(e, drop_thinking))
      continue;
    dropped[i] = 1;
    report.repairs[user ? "dropped-empty-user-message" : "dropped-empty-assistant-message"]++;
    const bool not_array = content_is_unreadable(e) || (!user && e.content_kind == JsonKind::kString);
    warn(report, index, not_array ? Code::kContentNotArray : Code::kEmptyMessage, e, e.message.column,
         std::string("left out the ") + (user ? "user" : "assistant") + " message: " +
             (content_is_unreadable(e) ? std::string("its content is ") + json_kind_name(e.content_kind)
                                       : std::string("it has no text (or only white space) to send")));
  }

  // The model is the last model_change or assistant on the path: when that
  // assistant is not written, a model_change in its place keeps it.
  std::int64_t model_from_unwritten = -1;  // node
  for (std::size_t i = n; i-- > 0;) {
    const Entry& e = view.entry(index, path[i]);
    bool sets_model = e.root == JsonKind::kObject &&
                      (e.type == EntryType::kModelChange || (is_message(e) && e.role == Role::kAssistant));
    if (!sets_model) continue;
    if (!keep[i] || dropped[i]) model_from_unwritten = path[i];
    break;
  }

  // Pair mode: match each result to the earliest unanswered call with its id.
  // Every call gets a slot in `calls`, an assistant's calls one after
  // another; the unanswered calls of one id form a queue linked through
  // them. Ids are views into the index's arena and the tables are flat
  // (IndexByKey): no string copies, and no hash nodes to allocate and free,
  // which on a big session cost more than the matching itself.
  constexpr std::uint32_t kNone = UINT32_MAX;
  struct CallSlot {
    std::uint32_t pos;           // path position of the assistant
    std::uint32_t next = kNone;  // the next unanswered call with the same id
    std::int64_t result = -1;    // path position of its result
  };
  struct IdState {
    std::string_view id;
    std::uint32_t head = kNone, tail = kNone;  // unanswered calls with this id
    bool skipped = false;                      // an error/aborted assistant made a call with it
    bool answered = false;                     // a result was matched to a call with it
    bool kept = false;                         // a written call keeps it (a later call with it is renamed)
  };
  std::vector<CallSlot> calls;
  std::vector<std::uint32_t> first_call(n, kNone);  // each assistant's first slot (not a skipped one's)
  std::vector<std::string> renamed;  // per slot, the id written instead ("": its own); empty: none renamed
  const bool pair = options.tools == ToolPolicy::kPair;
  {
    std::size_t call_count = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Entry& e = view.entry(index, path[i]);
      if (keep[i] && !dropped[i] && is_message(e) && e.role == Role::kAssistant) call_count += e.tool_calls_count;
    }
    calls.reserve(call_count);
    std::vector<IdState> states;  // at most one per call: never reallocated
    states.reserve(call_count);
    auto id_of = [&states](std::uint32_t k) { return states[k].id; };
    IndexByKey<decltype(id_of), std::hash<std::string_view>> state_of_id(call_count, id_of);
    // The state of `id`. When it has none: a new one if `make`, else nullptr.
    auto state = [&](std::string_view id, bool make) -> IdState* {
      std::int64_t k = state_of_id.find(id);
      if (k < 0 && make) {
        states.push_back(IdState{id});
        k = static_cast<std::int64_t>(states.size() - 1);
        state_of_id.put(static_cast<std::uint32_t>(k));
      }
      return k < 0 ? nullptr : &states[static_cast<std::size_t>(k)];
    };
    for (std::size_t i = 0; i < n; ++i) {
      if (!keep[i] || dropped[i]) continue;
      const Entry& e = view.entry(index, path[i]);
      if (!is_message(e)) continue;
      if (e.role == Role::kAssistant) {
        if (is_skipped_assistant(e)) {
          for (const ToolCallRef* c = index.calls_begin(e); c != index.calls_end(e); ++c)
            state(c->id, true)->skipped = true;
          continue;
        }
        first_call[i] = static_cast<std::uint32_t>(calls.size());
        for (std::uint32_t k = 0; k < e.tool_calls_count; ++k) {
          IdState& q = *state(index.calls_begin(e)[k].id, true);
          const auto added = static_cast<std::uint32_t>(calls.size());
          calls.push_back({static_cast<std::uint32_t>(i)});
          if (q.tail == kNone)
            q.head = added;
          else
            calls[q.tail].next = added;
          q.tail = added;
        }
      } else if (e.role == Role::kToolResult) {
        const std::string_view id = e.tool_call_id.text();
        IdState* q = state(id, false);
        if (e.tool_call_id.is_string() && q && q->head != kNone) {
          CallSlot& call = calls[q->head];
          q->head = call.next;
          if (q->head == kNone) q->tail = kNone;
          call.result = static_cast<std::int64_t>(i);
          claimed[i] = 1;
          q->answered = true;
          continue;
        }
        if (!pair) continue;  // flatten keeps it, as text
        dropped[i] = 1;
        if (q && q->skipped) {
          report.repairs["dropped-result-of-aborted-assistant"]++;
          warn(report, index, Code::kResultOfSkippedAssistant, e, e.tool_call_id.column,
               "dropped the tool result for " + quote_for_message(id) +
                   ": its assistant message stopped with error/aborted, so pi-ai would send it without its call");
        } else if (q && q->answered) {
          report.repairs["dropped-duplicate-result"]++;
          warn(report, index, Code::kDuplicateToolResult, e, e.tool_call_id.column,
               "dropped a second result for tool call " + quote_for_message(id) + "; the first one is kept");
        } else {
          report.repairs["dropped-orphan-result"]++;
          warn(report, index, Code::kOrphanToolResult, e, e.tool_call_id.column,
               "dropped the tool result for " + quote_for_message(id) + ": no tool call before it has that id");
        }
      }
    }

    // Pair mode: the ids providers see must each name one call, and those
    // pi-ai may send to Anthropic unchanged must match ^[a-zA-Z0-9_-]{1,64}$
    // (tool_call_id_problem). A call that breaks either gets a new id, and
    // its results with it; the first call whose id is fine keeps it.
    if (pair) {
      std::unordered_set<std::string> given;  // new ids so far (rare: a set is fine)
      // How many calls have each portable form: when pi-ai replays the history
      // for another model it sends every id in that form, so a new id must
      // not be the form of another call's id either (made on the first rename).
      std::unordered_map<std::string, std::uint32_t> forms;
      auto note_forms = [&] {
        for (std::size_t i = 0; i < n; ++i) {
          if (first_call[i] == kNone) continue;
          const Entry& a = view.entry(index, path[i]);
          for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) forms[portable_form(index.calls_begin(a)[k].id)]++;
        }
      };
      for (std::size_t i = 0; i < n; ++i) {
        if (first_call[i] == kNone) continue;
        const Entry& a = view.entry(index, path[i]);
        for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) {
          const ToolCallRef& c = index.calls_begin(a)[k];
          IdState& q = *state(c.id, false);
          if (tool_call_id_problem(a, c, q.kept) == ToolCallIdProblem::kNone) {
            q.kept = true;
            continue;
          }
          if (forms.empty()) note_forms();
          const std::string own_form = portable_form(c.id);
          auto taken = [&](const std::string& id) {
            auto f = forms.find(id);
            const std::uint32_t others = f == forms.end() ? 0 : f->second - (id == own_form ? 1 : 0);
            return state_of_id.find(id) >= 0 || given.count(id) > 0 || others > 0;
          };
          std::string fresh = portable_tool_call_id(c.id, taken);
          given.insert(fresh);
          if (renamed.empty()) renamed.resize(calls.size());
          renamed[first_call[i] + k] = std::move(fresh);
        }
      }
    }
  }
  auto renamed_id = [&renamed](std::size_t slot) -> const std::string* {
    return slot < renamed.size() && !renamed[slot].empty() ? &renamed[slot] : nullptr;
  };

  if (compaction_pos >= 0) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(compaction_pos); ++i) {
      if (!in_context_node[path[i]] || dropped[i]) continue;
      if (claimed[i]) {
        for (const CallSlot& call : calls)
          if (call.result == static_cast<std::int64_t>(i)) plan.first_kept_override = path[call.pos];
        report.repairs["compaction-kept-window-starts-at-call"]++;
      }
      break;
    }
  }

  // A written source entry, with the repairs its message needs counted.
  auto push_source = [&](std::size_t i) {
    PlannedEntry p;
    p.node = path[i];
    const Entry& e = view.entry(index, path[i]);
    const bool message = is_message(e);
    p.rename_hook_role = view.migrates_v2 && message && e.role == Role::kHookMessage;
    if (p.rename_hook_role) report.repairs["migrated-hook-message-role"]++;
    p.flatten =
        !pair && message && ((e.role == Role::kAssistant && e.tool_calls_count > 0) || e.role == Role::kToolResult);
    if (p.flatten)
      report.repairs[e.role == Role::kToolResult ? "flattened-tool-result" : "flattened-tool-call-message"]++;
    if (message) {
      const char* role = e.role == Role::kAssistant ? "assistant" : e.role == Role::kUser ? "user" : "tool result";
      switch (content_repair(p, e)) {
        case ContentRepair::kNone: break;
        case ContentRepair::kFill:
          report.repairs["filled-missing-content"]++;
          warn(report, index, Code::kContentNotArray, e, e.message.column,
               std::string(role) + " content is " + json_kind_name(e.content_kind) +
                   ": wrote [] (pi 0.78 crashes on it)");
          break;
        case ContentRepair::kWrap:
          report.repairs["wrapped-string-content"]++;
          warn(report, index, Code::kContentNotArray, e, e.message.column,
               std::string(role) + " content is a string: wrote it as a text block (pi-ai crashes on a string)");
          break;
        case ContentRepair::kNoToolOutput:
          report.repairs["filled-empty-tool-result"]++;
          warn(report, index, content_is_unreadable(e) ? Code::kContentNotArray : Code::kEmptyMessage, e,
               e.message.column,
               (content_is_unreadable(e) ? std::string("tool result content is ") + json_kind_name(e.content_kind)
                                         : std::string("the tool result has nothing to send")) +
                   ": wrote the text \"" + kNoToolOutputText +
                   "\" (pi-ai sends an empty text block to Anthropic, which rejects it)");
          break;
        case ContentRepair::kDropBlankText:
          report.repairs["dropped-empty-text-block"] += e.content_blank_texts;
          warn(report, index, Code::kBlankTextBlock, e, e.message.column,
               "left out " + std::to_string(e.content_blank_texts) +
                   " text block(s) without text or with white space only (Anthropic rejects them)");
          break;
      }
      if (e.role == Role::kAssistant && e.stop_reason == StopReason::kPending) {
        report.repairs["settled-pending-stop-reason"]++;
        warn(report, index, Code::kPendingStopReason, e, e.stop_reason_field.column,
             std::string("stopReason \"pending\" written as \"") + (e.tool_calls_count ? "toolUse" : "stop") + "\"");
      }
      if (needs_usage(e)) {
        report.repairs["filled-missing-usage"]++;
        warn(report, index, Code::kUsageMissing, e, e.message.column,
             "assistant message without usage (or its cost): wrote zeros (the interactive pi crashes without)");
      }
    }
    plan.entries.push_back(std::move(p));
  };
  // The ids written for `a`'s calls, when one is renamed.
  auto note_renamed_calls = [&](PlannedEntry& p, const Entry& a, std::uint32_t first) {
    bool any = false;
    for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) any = any || renamed_id(first + k);
    if (!any) return;
    p.renamed_ids = static_cast<std::uint32_t>(plan.renamed_call_ids.size());
    for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) {
      const std::string* id = renamed_id(first + k);
      plan.renamed_call_ids.push_back(id ? *id : std::string());
      if (!id) continue;
      const ToolCallRef& c = index.calls_begin(a)[k];
      // Its first problem once an earlier call is known to keep its id: kRepeated when it has no other.
      const bool portable = tool_call_id_problem(a, c, true) == ToolCallIdProblem::kRepeated;
      report.repairs["renamed-tool-call-id"]++;
      warn(report, index, Code::kBadToolCallId, a, c.column ? c.column : a.message.column,
           "renamed tool call id " +
               (c.id_kind == JsonKind::kString ? quote_for_message(c.id) : std::string("(none)")) + " to " +
               quote_for_message(*id) + " in the call and its result: " +
               (portable ? "an earlier call uses it" : "it does not match ^[a-zA-Z0-9_-]{1,64}$"));
    }
  };
  auto note_renamed_result = [&](PlannedEntry& p, std::size_t slot) {
    if (const std::string* id = renamed_id(slot)) {
      p.renamed_ids = static_cast<std::uint32_t>(plan.renamed_call_ids.size());
      plan.renamed_call_ids.push_back(*id);
    }
  };

  // visible_before[j]: entries before position j that are written in place
  // (kept, not dropped, not a result moved to its call).
  std::vector<std::size_t> visible_before(n + 1, 0);
  for (std::size_t j = 0; j < n; ++j)
    visible_before[j + 1] = visible_before[j] + ((keep[j] && !dropped[j] && !claimed[j]) ? 1 : 0);
  // The plan's exact size, so its vector is allocated once: written entries
  // (results claimed by a call among them), synthetic results, a model_change
  // and a user message at the start.
  std::size_t planned = 2;
  for (std::size_t j = 0; j < n; ++j) planned += keep[j] && !dropped[j];
  if (pair)
    for (const CallSlot& call : calls) planned += call.result < 0;
  plan.entries.reserve(planned);
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<std::int64_t>(path[i]) == model_from_unwritten) {
      // Not written, but it decides the model: a model_change in its place keeps it.
      PlannedEntry m;
      m.synthetic = Synthetic::kModelChange;
      m.call_node = model_from_unwritten;
      plan.entries.push_back(std::move(m));
      report.repairs[keep[i] ? "model-change-for-dropped-assistant" : "model-change-for-pruned-assistant"]++;
    }
    if (!keep[i] || claimed[i] || dropped[i]) continue;
    push_source(i);
    if (first_call[i] == kNone) continue;
    const Entry& a = view.entry(index, path[i]);
    note_renamed_calls(plan.entries.back(), a, first_call[i]);
    for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) {
      const std::int64_t r = calls[first_call[i] + k].result;
      if (r >= 0) {
        // Did anything written (other than results) sit between call and result?
        const bool moved = visible_before[static_cast<std::size_t>(r)] > visible_before[i + 1];
        if (moved) {
          report.repairs["moved-result-to-its-call"]++;
          warn(report, index, Code::kMessageBetweenCallAndResult, view.entry(index, path[static_cast<std::size_t>(r)]),
               1,
               "moved the result of tool call " + quote_for_message(index.calls_begin(a)[k].id) +
                   " right after its call; the entries between now follow the results");
        }
        push_source(static_cast<std::size_t>(r));
        note_renamed_result(plan.entries.back(), first_call[i] + k);
      } else if (pair) {
        PlannedEntry s;
        s.synthetic = Synthetic::kMissingResult;
        s.call_node = path[i];
        s.call = k;
        note_renamed_result(s, first_call[i] + k);
        plan.entries.push_back(std::move(s));
        report.repairs["synthetic-result-for-missing"]++;
        warn(report, index, Code::kMissingToolResult, a, index.calls_begin(a)[k].column,
             "tool call " + quote_for_message(index.calls_begin(a)[k].id) +
                 " has no result; wrote an error result saying none was recorded");
      }
    }
  }

  // The first message sent must be a user message (Anthropic rejects a
  // request that starts otherwise). With a compaction its summary comes
  // first, and is one; without, a user message goes before the first
  // message sent when that is an assistant message or a tool result.
  if (compaction_pos < 0) {
    std::vector<Role> llm_role(view.nodes.size(), Role::kNone);
    for (const ContextItem& item : view.context) llm_role[item.node] = item.llm_role;
    for (std::size_t j = 0; j < plan.entries.size(); ++j) {
      const PlannedEntry& p = plan.entries[j];
      if (p.node < 0) continue;
      const Entry& e = view.entry(index, static_cast<std::uint32_t>(p.node));
      Role role = llm_role[static_cast<std::size_t>(p.node)];
      if (p.flatten && role == Role::kToolResult) role = Role::kUser;
      if (role != Role::kUser && role != Role::kAssistant && role != Role::kToolResult) continue;
      if (is_skipped_assistant(e)) continue;  // never sent
      if (role == Role::kUser) break;
      PlannedEntry u;
      u.synthetic = Synthetic::kUserMessage;
      u.call_node = p.node;
      plan.entries.insert(plan.entries.begin() + static_cast<std::ptrdiff_t>(j), std::move(u));
      report.repairs["added-user-message-at-start"]++;
      warn(report, index, Code::kFirstMessageNotUser, e, e.message.column,
           std::string("the conversation starts with ") +
               (role == Role::kAssistant ? "an assistant message" : "a tool result") +
               ": added a user message before it (Anthropic rejects a request that does not start with one)");
      break;
    }
  }
  const auto first_of_this_step = report.diagnostics.begin() + static_cast<std::ptrdiff_t>(diagnostics_before);
  std::stable_sort(first_of_this_step, report.diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
  return plan;
}

}  // namespace pihydrate
