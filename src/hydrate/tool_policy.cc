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
#include <string_view>
#include <string>
#include <unordered_map>
#include <unordered_set>

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
  // The unanswered calls of one id form a queue, linked through `calls`; ids
  // are views into the index's arena, so a big session costs no string copies.
  struct CallRef {
    std::size_t pos;
    std::uint32_t call;
    std::uint32_t next;  // the next unanswered call with the same id, or kNoCall
  };
  constexpr std::uint32_t kNoCall = UINT32_MAX;
  struct Queue {
    std::uint32_t head = kNoCall, tail = kNoCall;
  };
  std::unordered_map<std::size_t, std::vector<std::int64_t>> results_for;  // assistant pos -> per call
  std::vector<std::uint8_t> claimed(n, 0), dropped(n, 0);
  const bool pair = options.tools == ToolPolicy::kPair;
  {
    std::vector<CallRef> calls;
    std::unordered_map<std::string_view, Queue> waiting;
    std::unordered_set<std::string_view> skipped_ids, answered_ids;
    for (std::size_t i = 0; i < n; ++i) {
      if (!keep[i]) continue;
      const Entry& e = view.entry(index, path[i]);
      if (!is_message(e)) continue;
      if (e.role == Role::kAssistant) {
        if (is_skipped_assistant(e)) {
          for (const ToolCallRef* c = index.calls_begin(e); c != index.calls_end(e); ++c) skipped_ids.insert(c->id);
          continue;
        }
        auto& slots = results_for[i];
        slots.assign(e.tool_calls_count, -1);
        for (std::uint32_t k = 0; k < e.tool_calls_count; ++k) {
          Queue& q = waiting[index.calls_begin(e)[k].id];
          const auto added = static_cast<std::uint32_t>(calls.size());
          calls.push_back({i, k, kNoCall});
          if (q.tail == kNoCall) q.head = added;
          else calls[q.tail].next = added;
          q.tail = added;
        }
      } else if (e.role == Role::kToolResult) {
        const std::string_view id = e.tool_call_id.text();
        auto it = waiting.find(id);
        if (e.tool_call_id.is_string() && it != waiting.end() && it->second.head != kNoCall) {
          Queue& q = it->second;
          const CallRef ref = calls[q.head];
          q.head = ref.next;
          if (q.head == kNoCall) q.tail = kNoCall;
          results_for[ref.pos][ref.call] = static_cast<std::int64_t>(i);
          claimed[i] = 1;
          answered_ids.insert(id);
          continue;
        }
        if (!pair) continue;  // flatten keeps it, as text
        dropped[i] = 1;
        if (skipped_ids.count(id)) {
          report.repairs["dropped-result-of-aborted-assistant"]++;
          warn(report, index, Code::kResultOfSkippedAssistant, e, e.tool_call_id.column,
               "dropped the tool result for " + quote_for_message(id) +
                   ": its assistant message stopped with error/aborted, so pi-ai would send it without its call");
        } else if (answered_ids.count(id)) {
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
        for (const auto& [assistant_pos, results] : results_for)
          for (std::int64_t r : results)
            if (r == static_cast<std::int64_t>(i)) plan.first_kept_override = path[assistant_pos];
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
    for (const auto& [pos, results] : results_for)
      for (std::int64_t r : results) planned += r < 0;
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
    auto it = results_for.find(i);
    if (it == results_for.end()) continue;
    const Entry& a = view.entry(index, path[i]);
    for (std::uint32_t k = 0; k < it->second.size(); ++k) {
      std::int64_t r = it->second[k];
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
