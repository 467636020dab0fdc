// The thread export's planning rules, as docs/thread-export.md states them
// (see thread_rules.h).
#include "readers/thread_rules.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace pihydrate {
namespace thread_rules {

Kind kind_of(std::string_view text) {
  if (text == "chat") return Kind::kChat;
  if (text == "pi.user") return Kind::kPiUser;
  if (text == "pi.assistant") return Kind::kPiAssistant;
  if (text == "pi.tool_result" || text == "pi.tool-result") return Kind::kPiToolResult;
  if (text == "pi.chunk") return Kind::kPiChunk;
  if (text == "pi.compaction") return Kind::kPiCompaction;
  if (text == "pi.entry") return Kind::kPiEntry;
  if (text == "pi.snapshot") return Kind::kPiSnapshot;
  return Kind::kUnknown;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kChat: return "chat";
    case Kind::kPiUser: return "pi.user";
    case Kind::kPiAssistant: return "pi.assistant";
    case Kind::kPiToolResult: return "pi.tool_result";
    case Kind::kPiChunk: return "pi.chunk";
    case Kind::kPiCompaction: return "pi.compaction";
    case Kind::kPiEntry: return "pi.entry";
    case Kind::kPiSnapshot: return "pi.snapshot";
    case Kind::kRawLine: return "raw session line";
    case Kind::kUnknown:
    case Kind::kSkipped: break;
  }
  return "unknown";
}

std::string normalize_space(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string stream_key_of_string(std::string_view text) { return "s" + std::string(text); }
std::string stream_key_of_integer(std::int64_t value) { return "n" + std::to_string(value); }

namespace {

bool is_chat_user(const RuleEntry& e) { return e.kind == Kind::kChat && e.role == ChatRole::kUser; }

// The entry `ref` names, if it is one `wanted` accepts; else -1.
template <typename Wanted>
std::int64_t named_entry(const RuleEntries& entries, std::string_view ref, const PositionOfId& position_of_id,
                         Wanted wanted) {
  if (ref.empty()) return -1;
  const std::int64_t named = position_of_id(ref);
  return named >= 0 && wanted(entries[static_cast<std::size_t>(named)]) ? named : -1;
}

}  // namespace

UserReplacements plan_user_replacements(const RuleEntries& entries, const PositionOfId& position_of_id,
                                        const TextOf& text_of) {
  const std::size_t n = entries.size();
  UserReplacements plan;
  plan.replaced_by.assign(n, -1);
  // previous_user[i]: the nearest chat user turn before entry i, or -1.
  std::vector<std::int32_t> previous_user(n, -1);
  for (std::size_t i = 1; i < n; ++i)
    previous_user[i] = is_chat_user(entries[i - 1]) ? static_cast<std::int32_t>(i - 1) : previous_user[i - 1];
  auto is_replaced = [&](std::int64_t turn) { return plan.replaced_by[static_cast<std::size_t>(turn)] >= 0; };
  for (std::size_t i = 0; i < n; ++i) {
    const bool raw_user = entries[i].kind == Kind::kRawLine && entries[i].role == ChatRole::kUser;
    if (entries[i].kind != Kind::kPiUser && !raw_user) continue;
    std::int64_t turn = named_entry(entries, entries[i].ref, position_of_id, is_chat_user);
    if (turn < 0) {
      std::int64_t nearest = previous_user[i];
      while (nearest >= 0 && is_replaced(nearest)) nearest = previous_user[static_cast<std::size_t>(nearest)];
      if (nearest >= 0 && normalize_space(text_of(static_cast<std::size_t>(nearest))) == normalize_space(text_of(i)))
        turn = nearest;
    }
    if (turn >= 0 && !is_replaced(turn)) {
      plan.replaced_by[static_cast<std::size_t>(turn)] = static_cast<std::int32_t>(i);
      ++(raw_user ? plan.by_raw_user : plan.by_pi_user);
    }
  }
  return plan;
}

std::vector<std::uint8_t> find_assistant_echoes(const RuleEntries& entries, const PositionOfId& position_of_id,
                                                const TextOf& text_of) {
  const std::size_t n = entries.size();
  std::vector<std::uint8_t> echo(n, 0);
  // The turn of entry i: [turn_start[i], turn_end[i]], between the user turns around it.
  std::vector<std::uint32_t> turn_start(n), turn_end(n);
  for (std::size_t i = 0; i < n; ++i)
    turn_start[i] = i > 0 && !is_user_turn(entries[i - 1]) ? turn_start[i - 1] : static_cast<std::uint32_t>(i);
  for (std::size_t i = n; i-- > 0;)
    turn_end[i] = i + 1 < n && !is_user_turn(entries[i + 1]) ? turn_end[i + 1] : static_cast<std::uint32_t>(i);
  // Each assistant message's text, normalised with and without its line breaks,
  // computed once: a turn may hold many chat echoes and many assistants.
  std::unordered_map<std::size_t, std::pair<std::string, std::string>> assistant_texts;
  auto texts_of_assistant = [&](std::size_t j) -> const std::pair<std::string, std::string>& {
    auto it = assistant_texts.find(j);
    if (it != assistant_texts.end()) return it->second;
    const std::string joined = text_of(j);
    std::string glued;
    for (char c : joined)
      if (c != '\n') glued += c;
    return assistant_texts.emplace(j, std::make_pair(normalize_space(joined), normalize_space(glued))).first->second;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (entries[i].kind != Kind::kChat || entries[i].role != ChatRole::kAssistant) continue;
    if (named_entry(entries, entries[i].ref, position_of_id, is_assistant_message) >= 0) {
      echo[i] = 1;
      continue;
    }
    const std::string text = normalize_space(text_of(i));
    for (std::size_t j = turn_start[i]; j <= turn_end[i] && !echo[i]; ++j) {
      if (!is_assistant_message(entries[j])) continue;
      const auto& [spaced, glued] = texts_of_assistant(j);
      echo[i] = spaced == text || glued == text;
    }
  }
  return echo;
}

StreamPlan plan_chunk_streams(const RuleEntries& entries, PartialPolicy partial) {
  StreamPlan plan;
  std::vector<std::vector<std::size_t>> interrupted;
  // Keyed streams, in the order their first chunk comes.
  std::unordered_map<std::string_view, std::vector<std::size_t>> keyed;
  std::vector<std::string_view> key_order;
  // The unkeyed run since the last assistant message or tool result.
  std::vector<std::size_t> run;
  auto end_run = [&](bool by_final_message) {
    if (run.empty()) return;
    if (by_final_message)
      plan.chunks_of_final_messages += run.size();
    else
      interrupted.push_back(run);
    run.clear();
  };
  std::unordered_map<std::string_view, bool> final_timestamps;
  for (const RuleEntry& e : entries)
    if (is_assistant_message(e)) final_timestamps[e.final_timestamp] = true;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const RuleEntry& e = entries[i];
    if (e.kind == Kind::kPiChunk) {
      if (!e.has_stream_key) {
        run.push_back(i);
        continue;
      }
      auto [stream, first] = keyed.try_emplace(e.stream_key);
      if (first) key_order.push_back(e.stream_key);
      stream->second.push_back(i);
    } else if (is_assistant_message(e)) {
      end_run(true);
    } else if (e.kind == Kind::kPiToolResult || (e.kind == Kind::kRawLine && e.role == ChatRole::kToolResult)) {
      end_run(false);
    }
  }
  end_run(false);
  for (const std::string_view key : key_order) {
    std::vector<std::size_t>& stream = keyed[key];
    if (final_timestamps.count(key))
      plan.chunks_of_final_messages += stream.size();
    else
      interrupted.push_back(std::move(stream));
  }
  // In the order their last chunks come: where a rebuilt message stands.
  std::sort(interrupted.begin(), interrupted.end(),
            [](const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) { return a.back() < b.back(); });
  (partial == PartialPolicy::kDrop ? plan.dropped : plan.rebuilt) = std::move(interrupted);
  return plan;
}

std::vector<std::uint8_t> find_covered_by_raw(const RuleEntries& entries, const TextOf& text_of) {
  std::vector<std::uint8_t> covered(entries.size(), 0);
  std::unordered_map<std::string_view, bool> raw_messages;
  std::unordered_map<std::string, bool> raw_summaries;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const RuleEntry& e = entries[i];
    if (e.kind != Kind::kRawLine) continue;
    if (!e.message_key.empty()) raw_messages[e.message_key] = true;
    if (e.compaction) raw_summaries[text_of(i)] = true;
  }
  if (raw_messages.empty() && raw_summaries.empty()) return covered;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const RuleEntry& e = entries[i];
    if (e.kind == Kind::kPiUser || e.kind == Kind::kPiAssistant || e.kind == Kind::kPiToolResult)
      covered[i] = !e.message_key.empty() && raw_messages.count(e.message_key) > 0;
    else if (e.kind == Kind::kPiCompaction && !raw_summaries.empty())
      covered[i] = raw_summaries.count(text_of(i)) > 0;
  }
  return covered;
}

CompactionAnchor anchor_compaction(bool has_first_kept_ref, std::int64_t by_first_kept_ref, std::int64_t by_pi_entry_id,
                                   const ConvertedLines& lines) {
  CompactionAnchor anchor;
  if (has_first_kept_ref) {
    if (by_first_kept_ref >= 0)
      anchor.line = by_first_kept_ref, anchor.how = "firstKeptRef";
    else
      anchor.first_kept_ref_unused = true;
  }
  if (anchor.line < 0 && by_pi_entry_id >= 0) anchor.line = by_pi_entry_id, anchor.how = "piEntryId";
  for (std::size_t k = lines.size(); anchor.line < 0 && k-- > 0;)
    if (lines.is_user_turn(k)) anchor.line = static_cast<std::int64_t>(k), anchor.how = "last-user-turn";
  if (anchor.line < 0 || !lines.is_tool_result(static_cast<std::size_t>(anchor.line))) return anchor;
  const std::vector<std::string_view> result = lines.tool_call_ids(static_cast<std::size_t>(anchor.line));
  if (result.empty() || result.front().empty()) return anchor;
  for (std::int64_t k = anchor.line; k-- > 0;) {
    if (lines.is_tool_result(static_cast<std::size_t>(k))) continue;
    const std::vector<std::string_view> calls = lines.tool_call_ids(static_cast<std::size_t>(k));
    if (std::find(calls.begin(), calls.end(), result.front()) != calls.end()) {
      anchor.line = k;
      break;
    }
  }
  return anchor;
}

bool is_settled_stop_reason(std::string_view stop_reason) { return !stop_reason.empty() && stop_reason != "pending"; }

MessageRepairs message_repairs(Kind kind, const PiMessageShape& shape) {
  MessageRepairs repairs;
  repairs.settle_stop_reason = kind == Kind::kPiAssistant && !shape.stop_reason_settled;
  repairs.add_timestamp = (kind == Kind::kPiAssistant || kind == Kind::kPiToolResult) && !shape.has_timestamp;
  return repairs;
}

}  // namespace thread_rules
}  // namespace pihydrate
