// Planning the converted session before any line is built: pi.user
// replacements and echoes (R3, R7), chunk streams (R6), what compactions
// name (R9), and dropping the envelopes that give no line.
#include "hydrate/thread_mapper.h"

#include <algorithm>
#include <functional>
#include <string>

#include "core/index_by_key.h"

namespace pihydrate {
namespace thread_mapping {

// R3 (pi.user replaces the chat turn it duplicates) and R7 (echoes).
Mapper::EnvelopesById Mapper::envelopes_by_id() const {
  EnvelopesById by_id(envs_.size(), IdAtPosition{this});
  for (std::size_t i = 0; i < envs_.size(); ++i) by_id.put(static_cast<std::uint32_t>(i));
  return by_id;
}

void Mapper::plan_echoes_and_user_replacements(const EnvelopesById& pos_of_id) {
  const std::size_t n = envs_.size();
  // Roles are those check_entry took (kNone but for chat entries): the turn
  // scans below look at many envelopes per chat turn, and reading a member
  // walks the whole entry.
  auto role_of = [&](std::size_t i) { return facts_of(envs_[i]).role; };
  auto is_chat_user = [&](std::size_t i) { return role_of(i) == ChatRole::kUser; };
  // previous_user[i]: the nearest chat user turn before envelope i, or -1.
  std::vector<std::int32_t> previous_user(n, -1);
  for (std::size_t i = 1; i < n; ++i) previous_user[i] = is_chat_user(i - 1) ? static_cast<std::int32_t>(i - 1) : previous_user[i - 1];
  for (std::size_t i = 0; i < n; ++i) {
    if (envs_[i].kind != Kind::kPiUser) continue;
    std::int64_t target = -1;
    const std::string_view chat_ref = plan_value(envs_[i]);
    if (!chat_ref.empty()) {
      const std::int64_t named = pos_of_id.find(chat_ref);
      if (named >= 0 && is_chat_user(static_cast<std::size_t>(named))) target = named;
    }
    if (target < 0) {
      // Only the nearest earlier chat user turn that no pi.user replaces yet.
      std::int64_t j = previous_user[i];
      while (j >= 0 && replaced_by_[static_cast<std::size_t>(j)] >= 0) j = previous_user[static_cast<std::size_t>(j)];
      if (j >= 0 && normalize_space(doc_.string_value(doc_.member(envs_[static_cast<std::size_t>(j)].ref(), "text"))) ==
                        normalize_space(text_of_message(envs_[i].message())))
        target = j;
    }
    if (target >= 0 && replaced_by_[static_cast<std::size_t>(target)] < 0) {
      replaced_by_[static_cast<std::size_t>(target)] = static_cast<std::int32_t>(i);
      dropped_[i] = 1;  // emitted at the chat turn's place
      out_.repairs["chat-user-replaced-by-pi-user"]++;
    }
  }
  // Turn boundaries, in two linear passes.
  std::vector<std::uint32_t> turn_start(n), turn_end(n);
  for (std::size_t i = 0; i < n; ++i) turn_start[i] = (i > 0 && !is_chat_user(i - 1)) ? turn_start[i - 1] : static_cast<std::uint32_t>(i);
  for (std::size_t i = n; i-- > 0;) turn_end[i] = (i + 1 < n && !is_chat_user(i + 1)) ? turn_end[i + 1] : static_cast<std::uint32_t>(i);
  // Each pi.assistant's text, normalised, computed once (a turn may hold
  // many chat echoes and many assistants).
  std::unordered_map<std::size_t, std::pair<std::string, std::string>> text_cache;
  auto assistant_texts = [&](std::size_t j) -> const std::pair<std::string, std::string>& {
    auto it = text_cache.find(j);
    if (it != text_cache.end()) return it->second;
    std::string joined = text_of_message(envs_[j].message()), glued;
    for (char c : joined)
      if (c != '\n') glued += c;
    return text_cache.emplace(j, std::make_pair(normalize_space(joined), normalize_space(glued))).first->second;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (role_of(i) != ChatRole::kAssistant) continue;
    const std::string_view ref = plan_value(envs_[i]);
    if (!ref.empty()) {
      const std::int64_t named = pos_of_id.find(ref);
      if (named >= 0 && envs_[static_cast<std::size_t>(named)].kind == Kind::kPiAssistant) {
        dropped_[i] = 1;
        out_.repairs["dropped-assistant-echo"]++;
        continue;
      }
    }
    // The same turn: between the chat user turns around it.
    const std::size_t lo = turn_start[i], hi = turn_end[i];
    std::string text = normalize_space(doc_.string_value(doc_.member(envs_[i].ref(), "text")));
    for (std::size_t j = lo; j <= hi; ++j) {
      if (envs_[j].kind != Kind::kPiAssistant) continue;
      const auto& [spaced, glued] = assistant_texts(j);
      if (spaced == text || glued == text) {
        dropped_[i] = 1;
        out_.repairs["dropped-assistant-echo"]++;
        break;
      }
    }
  }
}

// R6: chunk streams. Closed streams are dropped; interrupted ones follow --partial.
// It reads only the plan facts, and writes only the chunks' flags,
// partial_at_, partial_groups_ and `found`.
void Mapper::plan_chunk_groups(ChunkFindings& found) {
  const std::size_t n = envs_.size();
  std::unordered_map<std::string_view, std::vector<std::size_t>> by_key;
  std::vector<std::string_view> key_order;
  std::vector<std::size_t> run;
  std::vector<std::vector<std::size_t>> open_runs;
  auto close_run = [&](bool closed_by_assistant) {
    if (run.empty()) return;
    if (closed_by_assistant) {
      found.repairs["dropped-chunks-of-final-message"] += run.size();
    } else {
      open_runs.push_back(run);
    }
    run.clear();
  };
  std::unordered_map<std::string_view, bool> final_timestamps;
  for (std::size_t i = 0; i < n; ++i)
    if (envs_[i].kind == Kind::kPiAssistant) final_timestamps[plan_value(envs_[i])] = true;
  for (std::size_t i = 0; i < n; ++i) {
    const Envelope& e = envs_[i];
    if (e.kind == Kind::kPiChunk) {
      dropped_[i] = 1;
      if (facts_of(e).has_value) {
        const std::string_view k = plan_value(e);
        if (!by_key.count(k)) key_order.push_back(k);
        by_key[k].push_back(i);
      } else {
        run.push_back(i);
      }
    } else if (e.kind == Kind::kPiAssistant) {
      close_run(true);
    } else if (e.kind == Kind::kPiToolResult) {
      close_run(false);
    }
  }
  close_run(false);
  for (const std::string_view k : key_order) {
    if (final_timestamps.count(k)) found.repairs["dropped-chunks-of-final-message"] += by_key[k].size();
    else open_runs.push_back(by_key[k]);
  }
  std::sort(open_runs.begin(), open_runs.end(),
            [](const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) { return a.back() < b.back(); });
  for (auto& group : open_runs) {
    const Envelope& last = envs_[group.back()];
    if (options_.partial == PartialPolicy::kDrop) {
      found.diagnostics.push_back(diagnostic(doc_, Severity::kWarning, last.path(), last.ref().begin,
                                             "an interrupted stream of " + std::to_string(group.size()) +
                                                 " pi.chunk entries has no final pi.assistant; dropped (--partial keep|text rebuilds it)"));
      found.repairs["dropped-interrupted-stream"]++;
      continue;
    }
    partial_at_[group.back()] = partial_groups_.size();
    partial_groups_.push_back(group);
  }
}

// R3/R7 and R6 set different flags, so the chunk plan runs on the second
// core (it reads only plan facts, not the document, whose caches are not
// shared); its findings follow the echo plan's.
void Mapper::plan_echoes_and_chunks(const EnvelopesById& by_id) {
  dropped_.assign(envs_.size(), 0);
  replaced_by_.assign(envs_.size(), -1);
  ChunkFindings chunks;
  if (envs_.size() < options_.two_threads_from) {
    plan_echoes_and_user_replacements(by_id);
    plan_chunk_groups(chunks);
  } else {
    run_beside([&] { plan_chunk_groups(chunks); }, [&] { plan_echoes_and_user_replacements(by_id); });
  }
  for (const auto& [kind, count] : chunks.repairs) out_.repairs[kind] += count;
  out_.diagnostics.insert(out_.diagnostics.end(), chunks.diagnostics.begin(), chunks.diagnostics.end());
  // Planning is done with the facts. Their memory goes back to the system
  // now: trimmed later, after the envelopes are compacted above it, it
  // stayed (7 MiB more at the peak of a 1 GiB export's conversion).
  std::vector<PlanFacts>().swap(plan_facts_);
  std::string().swap(plan_values_);
  return_freed_heap();
}

// R9's lookups: the envelope each compaction's firstKeptRef names (an
// earlier one; ids are unique by now) and the last one whose piEntryId is
// its result.firstKeptEntryId. Found before envelopes are dropped, since
// either may name an entry that gives no line.
void Mapper::resolve_compaction_refs(const EnvelopesById& pos_of_id) {
  std::vector<std::size_t> compactions;
  bool any_pi_id = false;
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    if (envs_[i].kind != Kind::kPiCompaction || dropped_[i]) continue;
    compactions.push_back(i);
    any_pi_id = any_pi_id || !doc_.string_value(doc_.member(doc_.member(envs_[i].payload(), "result"), "firstKeptEntryId")).empty();
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
      const std::string id = doc_.string_value(doc_.member(envs_[j].payload(), "piEntryId"));
      pi_id_spans[j] = {pi_ids.size(), static_cast<std::uint32_t>(id.size())};
      pi_ids += id;
      if (!id.empty()) pos_of_pi_id.put(static_cast<std::uint32_t>(j));  // the last one wins
    }
  }
  for (std::size_t c : compactions) {
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
void Mapper::drop_envelopes_that_give_nothing() {
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
    if (r.pi_entry >= 0) r.pi_entry = keep[static_cast<std::size_t>(r.pi_entry)] ? new_pos[static_cast<std::size_t>(r.pi_entry)] : -1;
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
    replaced_by_[to] = replaced_by_[i] >= 0 ? static_cast<std::int32_t>(new_pos[static_cast<std::size_t>(replaced_by_[i])]) : -1;
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

}  // namespace thread_mapping
}  // namespace pihydrate
