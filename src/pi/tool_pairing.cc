// pi-ai's transformMessages, second pass, replayed over the context to find
// where the history it sends breaks the call/result pairing that providers
// require. pi-ai itself only repairs one direction (missing results).
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pihydrate/formats.h"
#include "pihydrate/pi_view.h"

namespace pihydrate {

bool is_valid_tool_call_id(std::string_view id) { return is_portable_id(id); }

ToolCallIdProblem tool_call_id_problem(const Entry& assistant, const ToolCallRef& call, bool used_before) {
  if (call.id_kind != JsonKind::kString) return ToolCallIdProblem::kNotString;
  if (call.id.empty()) return ToolCallIdProblem::kEmpty;
  const bool sent_as_is_to_anthropic =
      assistant.api == MessageApi::kAnthropicMessages || assistant.api == MessageApi::kNone;
  if (sent_as_is_to_anthropic && !is_valid_tool_call_id(call.id)) return ToolCallIdProblem::kRejected;
  return used_before ? ToolCallIdProblem::kRepeated : ToolCallIdProblem::kNone;
}

bool has_nothing_to_send(const Entry& e, bool without_thinking) {
  const bool readable = e.content_kind == JsonKind::kArray || e.content_kind == JsonKind::kString;
  return !readable || !(e.content_has_other || (e.content_has_thinking && !without_thinking));
}

bool is_skipped_assistant(const Entry& e) {
  return e.role == Role::kAssistant && (e.stop_reason == StopReason::kError || e.stop_reason == StopReason::kAborted);
}

std::vector<PairingFinding> find_pairing_issues(const SessionIndex& index, const PiView& view) {
  std::vector<PairingFinding> out;
  struct Call {
    std::uint32_t node;
    const ToolCallRef* ref;
  };
  struct Unanswered {
    std::uint32_t call_node;
    std::uint32_t column;
    std::int64_t closer;  // node that closed the turn, -1 at the end
    std::int64_t late_result = -1;
  };
  std::vector<Call> pending;
  std::unordered_map<std::string_view, std::uint32_t> pending_ids;  // ids of this turn's calls
  // Ids are views into the index's arena: no copies for a big session.
  std::unordered_set<std::string_view> answered_in_turn;
  std::unordered_map<std::string_view, std::uint32_t> first_result;     // any turn
  std::unordered_map<std::string_view, std::uint32_t> skipped_calls;    // id -> error/aborted assistant
  std::unordered_map<std::string_view, std::uint32_t> call_node_of_id;  // first assistant keeping a call id
  std::unordered_map<std::string_view, std::size_t> unanswered_by_id;
  std::vector<std::pair<std::string, Unanswered>> unanswered;

  auto close_turn = [&](std::int64_t closer) {
    for (const Call& c : pending) {
      const std::string_view id = c.ref->id;
      if (answered_in_turn.count(id)) continue;
      unanswered_by_id[id] = unanswered.size();
      unanswered.push_back({std::string(id), Unanswered{c.node, c.ref->column, closer}});
    }
    pending.clear();
    pending_ids.clear();
    answered_in_turn.clear();
  };

  for (const ContextItem& item : view.context) {
    if (item.llm_role == Role::kNone) continue;
    const Entry& e = view.entry(index, item.node);
    if (item.llm_role == Role::kAssistant) {
      close_turn(item.node);
      if (is_skipped_assistant(e)) {
        for (const ToolCallRef* c = index.calls_begin(e); c != index.calls_end(e); ++c)
          skipped_calls[c->id] = item.node;
        continue;
      }
      for (const ToolCallRef* c = index.calls_begin(e); c != index.calls_end(e); ++c) {
        pending.push_back({item.node, c});
        ++pending_ids[c->id];
        // As the hydrator renames: only a call that keeps its id takes it.
        const auto earlier = call_node_of_id.find(c->id);
        switch (tool_call_id_problem(e, *c, earlier != call_node_of_id.end())) {
          case ToolCallIdProblem::kNone: call_node_of_id.emplace(c->id, item.node); break;
          case ToolCallIdProblem::kRepeated:
            out.push_back(
                {PairingIssue::kRepeatedToolCallId, item.node, std::string(c->id), c->column, earlier->second, -1, -1});
            break;
          default:
            out.push_back({PairingIssue::kBadToolCallId, item.node, std::string(c->id), c->column, item.node, -1, -1});
            break;
        }
      }
    } else if (item.llm_role == Role::kToolResult) {
      const std::string_view id = e.tool_call_id.text();
      const bool in_turn = pending_ids.count(e.tool_call_id.text()) > 0;
      auto first = first_result.find(id);
      if (in_turn && !answered_in_turn.count(id)) {
        answered_in_turn.insert(id);  // a call of this turn (its id may repeat an older call's)
        first_result[id] = item.node;
      } else if (first != first_result.end()) {
        out.push_back(
            {PairingIssue::kDuplicateResult, item.node, std::string(id), e.tool_call_id.column, -1, first->second, -1});
      } else if (auto s = skipped_calls.find(id); s != skipped_calls.end()) {
        out.push_back(
            {PairingIssue::kResultOfSkipped, item.node, std::string(id), e.tool_call_id.column, s->second, -1, -1});
      } else if (auto u = unanswered_by_id.find(id);
                 u != unanswered_by_id.end() && unanswered[u->second].second.late_result < 0) {
        unanswered[u->second].second.late_result = item.node;
        first_result[id] = item.node;
      } else {
        out.push_back({PairingIssue::kOrphanResult, item.node, std::string(id), e.tool_call_id.column, -1, -1, -1});
      }
    } else if (item.llm_role == Role::kUser) {
      close_turn(item.node);
    }
  }
  close_turn(-1);

  for (const auto& [id, u] : unanswered) {
    if (u.late_result >= 0 && u.closer >= 0) {
      // pi-ai sends "No result provided" at the closer, then the real
      // result later as an orphan: one cause, reported once where it is.
      out.push_back({PairingIssue::kInterleaved, static_cast<std::uint32_t>(u.closer), id, 0, u.call_node,
                     u.late_result, u.closer});
    } else {
      out.push_back({PairingIssue::kMissingResult, u.call_node, id, u.column, u.call_node, -1, u.closer});
    }
  }
  return out;
}

}  // namespace pihydrate
