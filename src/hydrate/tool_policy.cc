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
#include <functional>
#include <string>
#include <string_view>

#include "core/index_by_key.h"
#include "hydrate/plan.h"

namespace pihydrate {
namespace {

bool is_message(const Entry& e) { return e.root == JsonKind::kObject && e.type == EntryType::kMessage && e.message.kind == JsonKind::kObject; }
bool is_skipped_assistant(const Entry& e) {
  return e.role == Role::kAssistant && (e.stop_reason == StopReason::kError || e.stop_reason == StopReason::kAborted);
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
  std::int64_t model_from_pruned = -1;  // node of a pruned assistant that still decides the model
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
    // The model is the last model_change or assistant on the path.
    for (std::size_t i = n; i-- > 0;) {
      const Entry& e = view.entry(index, path[i]);
      bool sets_model = e.root == JsonKind::kObject &&
                        (e.type == EntryType::kModelChange || (is_message(e) && e.role == Role::kAssistant));
      if (!sets_model) continue;
      if (!keep[i]) model_from_pruned = path[i];
      break;
    }
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
    bool skipped = false;   // an error/aborted assistant made a call with it
    bool answered = false;  // a result was matched to a call with it
  };
  std::vector<CallSlot> calls;
  std::vector<std::uint32_t> first_call(n, kNone);  // each assistant's first slot (not a skipped one's)
  std::vector<std::uint8_t> claimed(n, 0), dropped(n, 0);
  const bool pair = options.tools == ToolPolicy::kPair;
  {
    std::size_t call_count = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Entry& e = view.entry(index, path[i]);
      if (keep[i] && is_message(e) && e.role == Role::kAssistant) call_count += e.tool_calls_count;
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
      if (!keep[i]) continue;
      const Entry& e = view.entry(index, path[i]);
      if (!is_message(e)) continue;
      if (e.role == Role::kAssistant) {
        if (is_skipped_assistant(e)) {
          for (const ToolCallRef* c = index.calls_begin(e); c != index.calls_end(e); ++c) state(c->id, true)->skipped = true;
          continue;
        }
        first_call[i] = static_cast<std::uint32_t>(calls.size());
        for (std::uint32_t k = 0; k < e.tool_calls_count; ++k) {
          IdState& q = *state(index.calls_begin(e)[k].id, true);
          const auto added = static_cast<std::uint32_t>(calls.size());
          calls.push_back({static_cast<std::uint32_t>(i)});
          if (q.tail == kNone) q.head = added;
          else calls[q.tail].next = added;
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
  }

  if (compaction_pos >= 0) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(compaction_pos); ++i) {
      if (!in_context_node[path[i]]) continue;
      if (claimed[i]) {
        for (const CallSlot& call : calls)
          if (call.result == static_cast<std::int64_t>(i)) plan.first_kept_override = path[call.pos];
        report.repairs["compaction-kept-window-starts-at-call"]++;
      }
      break;
    }
  }

  auto push_source = [&](std::size_t i) {
    PlannedEntry p;
    p.node = path[i];
    const Entry& e = view.entry(index, path[i]);
    p.rename_hook_role = view.migrates_v2 && is_message(e) && e.role == Role::kHookMessage;
    if (p.rename_hook_role) report.repairs["migrated-hook-message-role"]++;
    p.flatten = !pair && is_message(e) &&
                ((e.role == Role::kAssistant && e.tool_calls_count > 0) || e.role == Role::kToolResult);
    if (p.flatten) report.repairs[e.role == Role::kToolResult ? "flattened-tool-result" : "flattened-tool-call-message"]++;
    plan.entries.push_back(std::move(p));
  };

  // visible_before[j]: entries before position j that are written in place
  // (kept, not dropped, not a result moved to its call).
  std::vector<std::size_t> visible_before(n + 1, 0);
  for (std::size_t j = 0; j < n; ++j)
    visible_before[j + 1] = visible_before[j] + ((keep[j] && !dropped[j] && !claimed[j]) ? 1 : 0);
  // The plan's exact size, so its vector is allocated once: written entries
  // (results claimed by a call among them), synthetic results, a model_change.
  std::size_t planned = 1;
  for (std::size_t j = 0; j < n; ++j) planned += keep[j] && !dropped[j];
  if (pair)
    for (const CallSlot& call : calls) planned += call.result < 0;
  plan.entries.reserve(planned);
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<std::int64_t>(path[i]) == model_from_pruned) {
      // Pruned, but it decides the model: a model_change in its place keeps it.
      PlannedEntry m;
      m.synthetic = Synthetic::kModelChange;
      m.call_node = model_from_pruned;
      plan.entries.push_back(std::move(m));
      report.repairs["model-change-for-pruned-assistant"]++;
    }
    if (!keep[i] || claimed[i] || dropped[i]) continue;
    push_source(i);
    if (first_call[i] == kNone) continue;
    const Entry& a = view.entry(index, path[i]);
    for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) {
      const std::int64_t r = calls[first_call[i] + k].result;
      if (r >= 0) {
        // Did anything written (other than results) sit between call and result?
        const bool moved = visible_before[static_cast<std::size_t>(r)] > visible_before[i + 1];
        if (moved) {
          report.repairs["moved-result-to-its-call"]++;
          warn(report, index, Code::kMessageBetweenCallAndResult, view.entry(index, path[static_cast<std::size_t>(r)]), 1,
               "moved the result of tool call " + quote_for_message(index.calls_begin(a)[k].id) +
                   " right after its call; the entries between now follow the results");
        }
        push_source(static_cast<std::size_t>(r));
      } else if (pair) {
        PlannedEntry s;
        s.synthetic = Synthetic::kMissingResult;
        s.call_node = path[i];
        s.call = k;
        plan.entries.push_back(std::move(s));
        report.repairs["synthetic-result-for-missing"]++;
        warn(report, index, Code::kMissingToolResult, a, index.calls_begin(a)[k].column,
             "tool call " + quote_for_message(index.calls_begin(a)[k].id) +
                 " has no result; wrote an error result saying none was recorded");
      }
    }
  }
  return plan;
}

}  // namespace pihydrate
