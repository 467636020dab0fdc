// Planning the converted session before any line is built: the rules of
// thread_rules.h applied to the envelopes (R3, R6, R7), what compactions
// name (R9), and dropping the envelopes that give no line.
#include "readers/thread_converter.h"

#include <algorithm>
#include <functional>
#include <string>

#include "core/index_by_key.h"

namespace pihydrate {
namespace thread_converter {

// Envelope positions by id (ids are unique by now). The lines a raw entry
// carries share its id: the first of them is found by it.
ThreadConverter::EnvelopesById ThreadConverter::envelopes_by_id() const {
  EnvelopesById by_id(envs_.size(), IdAtPosition{this});
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    const bool later_line_of_same_entry = i > 0 && envs_[i].kind == Kind::kRawLine &&
                                          envs_[i - 1].kind == Kind::kRawLine && envs_[i - 1].index == envs_[i].index;
    if (!later_line_of_same_entry) by_id.put(static_cast<std::uint32_t>(i));
  }
  return by_id;
}

// The rules' table (thread_rules.h): each envelope's kind, id and plan facts, by name.
RuleEntries ThreadConverter::rule_entries() const {
  RuleEntries table(envs_.size());
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    const Envelope& e = envs_[i];
    RuleEntry& r = table[i];
    r.kind = e.kind;
    r.id = id_of(e);
    const std::string_view value = plan_value(e);
    switch (e.kind) {
      case Kind::kChat:
        r.role = facts_of(e).role;
        r.ref = value;
        break;
      case Kind::kPiUser: r.ref = value; break;
      case Kind::kPiAssistant: r.final_timestamp = value; break;
      case Kind::kPiChunk:
        r.has_stream_key = facts_of(e).has_value;
        r.stream_key = value;
        break;
      case Kind::kRawLine: {
        const RawLine& raw = raw_lines_[e.raw_line()];
        r.role = raw.role;
        r.compaction = raw.compaction;
        r.final_timestamp = raw_string(raw, RawLine::kFinalTimestamp);
        break;
      }
      default: break;
    }
  }
  return table;
}

std::vector<std::string> ThreadConverter::message_keys() const {
  std::vector<std::string> keys(envs_.size());
  std::string scratch;
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    const Envelope& e = envs_[i];
    if (e.kind == Kind::kRawLine) {
      keys[i] = std::string(raw_string(raw_lines_[e.raw_line()], RawLine::kMessageKey));
    } else if (e.kind == Kind::kPiUser || e.kind == Kind::kPiAssistant || e.kind == Kind::kPiToolResult) {
      keys[i] = doc_.string_value(doc_.member(e.message(), "role")) + ":" +
                stream_key_of(doc_, doc_.member(e.message(), "timestamp"), scratch);
    }
  }
  return keys;
}

void ThreadConverter::count_repair(const char* kind, std::uint64_t count) {
  if (count > 0) out_.repairs[kind] += count;
}

// X4, R3, R7 and R6 decide which envelopes give no line of their own,
// which chat turn a pi.user stands in for and which streams are rebuilt.
void ThreadConverter::plan(const EnvelopesById& by_id) {
  const std::size_t n = envs_.size();
  {
    RuleEntries table = rule_entries();
    auto position_of_id = [&by_id](std::string_view id) { return by_id.find(id); };
    auto text_of = [this](std::size_t i) {
      reading(envs_[i]);
      return this->text_of(i);
    };
    dropped_.assign(n, 0);
    // X4: what a raw entry already says is left out first; the other rules then do not see it.
    std::vector<std::string> keys;
    std::vector<std::uint8_t> covered(n, 0);
    if (raw_) {
      keys = message_keys();
      for (std::size_t i = 0; i < n; ++i) table[i].message_key = keys[i];
      covered = thread_rules::find_covered_by_raw(table, text_of);
      for (std::size_t i = 0; i < n; ++i)
        if (covered[i]) dropped_[i] = 1, table[i].kind = Kind::kSkipped;
    }
    const UserReplacements users = thread_rules::plan_user_replacements(table, position_of_id, text_of);
    const std::vector<std::uint8_t> echoes = thread_rules::find_assistant_echoes(table, position_of_id, text_of);
    StreamPlan streams = thread_rules::plan_chunk_streams(table, options_.partial);

    replaced_by_ = users.replaced_by;
    for (std::size_t turn = 0; turn < n; ++turn) {
      const std::int32_t by = replaced_by_[turn];
      if (by < 0) continue;
      if (envs_[static_cast<std::size_t>(by)].kind == Kind::kRawLine) {
        // A raw user message stays at its own place; the chat turn it says again goes.
        dropped_[turn] = covered[turn] = 1;
        replaced_by_[turn] = -1;
      } else {
        dropped_[static_cast<std::size_t>(by)] = 1;  // emitted at the chat turn's place
      }
    }
    count_repair("chat-user-replaced-by-pi-user", users.by_pi_user);
    std::uint64_t covered_count = 0;
    for (std::uint8_t c : covered) covered_count += c;
    count_repair("lossy-entries-covered-by-raw", covered_count);
    // X5: the trailer only when a lossy entry no raw one covers comes after the last raw line.
    lossy_at_end_ = false;
    for (std::size_t i = n; raw_ && i-- > 0;) {
      if (envs_[i].kind == Kind::kRawLine) break;
      if (!covered[i]) {
        lossy_at_end_ = true;
        break;
      }
    }
    std::uint64_t echo_count = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (echoes[i]) dropped_[i] = 1;
      echo_count += echoes[i];
    }
    count_repair("dropped-assistant-echo", echo_count);
    for (std::size_t i = 0; i < n; ++i)
      if (envs_[i].kind == Kind::kPiChunk) dropped_[i] = 1;  // a stream gives one line at most, rebuilt below
    count_repair("dropped-chunks-of-final-message", streams.chunks_of_final_messages);
    for (const std::vector<std::size_t>& stream : streams.dropped) {
      const Envelope& last = envs_[stream.back()];
      warn(last.path(), last.ref().begin,
           "an interrupted stream of " + std::to_string(stream.size()) +
               " pi.chunk entries has no final pi.assistant; dropped (--partial keep|text rebuilds it)");
    }
    count_repair("dropped-interrupted-stream", streams.dropped.size());
    for (std::vector<std::size_t>& stream : streams.rebuilt) {
      partial_at_[stream.back()] = partial_groups_.size();
      partial_groups_.push_back(std::move(stream));
    }
  }
  // Planning is done with the facts.
  std::vector<PlanFacts>().swap(plan_facts_);
  std::string().swap(plan_values_);
}

// R9's lookups: the envelope each compaction's firstKeptRef names (an
// earlier one; ids are unique by now) and the last one whose piEntryId is
// its result.firstKeptEntryId. Found before envelopes are dropped, since
// either may name an entry that gives no line.
void ThreadConverter::resolve_compaction_refs(const EnvelopesById& pos_of_id) {
  std::vector<std::size_t> compactions;
  bool any_pi_id = false;
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    if (envs_[i].kind != Kind::kPiCompaction || dropped_[i]) continue;
    reading(envs_[i]);
    compactions.push_back(i);
    any_pi_id = any_pi_id ||
                !doc_.string_value(doc_.member(doc_.member(envs_[i].payload(), "result"), "firstKeptEntryId")).empty();
  }
  if (compactions.empty()) return;
  // Every payload's piEntryId, read once for all compactions, in one string.
  std::string pi_ids;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> pi_id_spans;
  auto pi_id_at = [&](std::uint32_t pos) {
    return std::string_view(pi_ids).substr(pi_id_spans[pos].first, pi_id_spans[pos].second);
  };
  IndexByKey<decltype(pi_id_at), std::hash<std::string_view>> pos_of_pi_id(any_pi_id ? envs_.size() : 0, pi_id_at);
  if (any_pi_id) {
    pi_id_spans.resize(envs_.size());
    for (std::size_t j = 0; j < envs_.size(); ++j) {
      reading(envs_[j]);
      // A raw line is pi's own entry: its id is the one a compaction names.
      const std::string id = envs_[j].kind == Kind::kRawLine
                                 ? std::string(raw_id(raw_lines_[envs_[j].raw_line()]))
                                 : doc_.string_value(doc_.member(envs_[j].payload(), "piEntryId"));
      pi_id_spans[j] = {pi_ids.size(), static_cast<std::uint32_t>(id.size())};
      pi_ids += id;
      if (!id.empty()) pos_of_pi_id.put(static_cast<std::uint32_t>(j));  // the last one wins
    }
  }
  for (std::size_t c : compactions) {
    reading(envs_[c]);
    const JsonRef payload = envs_[c].payload();
    CompactionRefs refs;
    const std::string ref = doc_.string_value(doc_.member(payload, "firstKeptRef"));
    if (!ref.empty()) {
      const std::int64_t j = pos_of_id.find(ref);
      if (j >= 0 && static_cast<std::size_t>(j) < c) refs.first_kept_ref = j;
    }
    const std::string pi_id = doc_.string_value(doc_.member(doc_.member(payload, "result"), "firstKeptEntryId"));
    if (!pi_id.empty()) refs.pi_entry = pos_of_pi_id.find(pi_id);
    compaction_refs_[c] = refs;
  }
}

// Envelopes that give no line of their own (chunks, echoes) are most of a
// big export's; once planned, only those a kept line reads stay: a pi.user
// emitted at its chat turn's place and the chunks of a stream rebuilt by
// --partial. Positions are renumbered, so every plan's index follows.
void ThreadConverter::drop_envelopes_that_give_nothing() {
  const std::size_t n = envs_.size();
  std::vector<std::uint8_t> keep(n);
  for (std::size_t i = 0; i < n; ++i) keep[i] = !dropped_[i];
  for (std::size_t i = 0; i < n; ++i)
    if (replaced_by_[i] >= 0) keep[static_cast<std::size_t>(replaced_by_[i])] = 1;
  for (const auto& group : partial_groups_)
    for (std::size_t member : group) keep[member] = 1;
  // new_pos[i]: how many are kept before i: a kept envelope's new position,
  // and a dropped one's next kept envelope's.
  std::vector<std::uint32_t> new_pos(n);
  std::uint32_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    new_pos[i] = kept;
    kept += keep[i];
  }
  if (kept == n) return;
  std::unordered_map<std::size_t, CompactionRefs> refs;
  for (auto [c, r] : compaction_refs_) {
    if (r.first_kept_ref >= 0) {
      r.ref_kept = keep[static_cast<std::size_t>(r.first_kept_ref)] != 0;
      r.first_kept_ref = new_pos[static_cast<std::size_t>(r.first_kept_ref)];
    }
    if (r.pi_entry >= 0)
      r.pi_entry = keep[static_cast<std::size_t>(r.pi_entry)] ? new_pos[static_cast<std::size_t>(r.pi_entry)] : -1;
    refs[new_pos[c]] = r;
  }
  compaction_refs_ = std::move(refs);
  for (auto& group : partial_groups_)
    for (std::size_t& member : group) member = new_pos[member];
  std::unordered_map<std::size_t, std::size_t> partial_at;
  for (const auto& [at, group] : partial_at_) partial_at[new_pos[at]] = group;
  partial_at_ = std::move(partial_at);
  std::string ids;
  ids.reserve(ids_.size());  // at most all of them: grown once, not doubled
  for (std::size_t i = 0, to = 0; i < n; ++i) {
    if (!keep[i]) continue;
    Envelope e = envs_[i];
    const std::string_view id = id_of(e);
    e.id_begin = ids.size();
    ids += id;
    envs_[to] = e;
    dropped_[to] = dropped_[i];
    replaced_by_[to] =
        replaced_by_[i] >= 0 ? static_cast<std::int32_t>(new_pos[static_cast<std::size_t>(replaced_by_[i])]) : -1;
    ++to;
  }
  ids_ = std::move(ids);
  envs_.resize(kept);
  envs_.shrink_to_fit();
  dropped_.resize(kept);
  dropped_.shrink_to_fit();
  replaced_by_.resize(kept);
  replaced_by_.shrink_to_fit();
}

}  // namespace thread_converter
}  // namespace pihydrate
