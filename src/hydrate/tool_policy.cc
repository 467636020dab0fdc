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
//
// plan_entries takes these decisions one after another, each in its own
// step below, in the order it calls them; the rule each applies is named
// as in docs/thread-export.md (Rn) and docs/hydrate.md.
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
// with _2, _3, ... while `taken` says the id is in use. `n`: the first
// suffix to try, then the one returned: an id once taken stays taken, so the
// next call for the same form starts there, not at _2 again (which made
// renaming k calls of one id cost k^2 tries).
template <typename Taken>
std::string portable_tool_call_id(std::string_view id, const Taken& taken, std::uint64_t& n) {
  const std::string base = portable_form(id);
  if (!taken(base)) return base;
  for (;; ++n) {
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

// The branch to write, read by position: entry i is the i-th of the path.
struct Branch {
  const SessionIndex& index;
  const PiView& view;
  const std::vector<std::uint32_t>& path;

  std::size_t size() const { return path.size(); }
  const Entry& at(std::size_t i) const { return view.entry(index, path[i]); }
};

// What becomes of each path entry.
enum class Fate : std::uint8_t {
  kInPlace,    // written at its place
  kPruned,     // hidden by the latest compaction and left out (--prune-compacted)
  kLeftOut,    // a message with nothing to send, or (pair) a result without its call
  kAfterCall,  // a result, written right after the call it answers
};

bool is_written(Fate f) { return f == Fate::kInPlace || f == Fate::kAfterCall; }

// ---- which entries are written ----

// What the latest compaction hides: pi leaves out the path entries before
// it that are not in its kept window.
struct CompactionWindow {
  std::vector<std::uint8_t> in_context_node;  // per node: in pi's context (the summary aside)
  std::int64_t compaction_pos = -1;           // path position of the latest compaction; -1: none

  bool hides(const Branch& b, std::size_t i) const {
    return compaction_pos >= 0 && static_cast<std::int64_t>(i) < compaction_pos && !in_context_node[b.path[i]];
  }
};

CompactionWindow find_compaction_window(const Branch& b) {
  CompactionWindow w;
  w.in_context_node.assign(b.view.nodes.size(), 0);
  for (const ContextItem& item : b.view.context)
    if (item.kind != ContextKind::kCompactionSummary) w.in_context_node[item.node] = 1;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (static_cast<std::int64_t>(b.path[i]) == b.view.compaction) w.compaction_pos = static_cast<std::int64_t>(i);
  return w;
}

// --prune-compacted (hydrate.md, Writing): leave out hidden entries, but
// keep the ones that set the model, thinking level or name, which pi reads
// over the whole path. Every other entry starts out written in place.
std::vector<Fate> prune_compacted(const Branch& b, const CompactionWindow& window, bool prune, HydrateReport& report) {
  std::vector<Fate> fate(b.size(), Fate::kInPlace);
  if (!prune || window.compaction_pos < 0) return fate;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!window.hides(b, i)) continue;
    const Entry& e = b.at(i);
    bool settings =
        e.root == JsonKind::kObject && (e.type == EntryType::kModelChange ||
                                        e.type == EntryType::kThinkingLevelChange || e.type == EntryType::kSessionInfo);
    if (settings) continue;
    fate[i] = Fate::kPruned;
    report.repairs["pruned-compacted"]++;
  }
  return fate;
}

// R3, R4 (hydrate.md, Content every provider takes): user and assistant
// messages with nothing to send are left out. pi 0.78 crashes on null
// content, pi-ai drops such a message for some providers (a conversation can
// then start with an assistant) and sends it empty to others, which reject
// it. An error/aborted assistant stays: pi-ai never sends it, and pi shows
// its error. R13: with --thinking drop, thinking is not something to send.
void leave_out_empty_messages(const Branch& b, ThinkingPolicy thinking, std::vector<Fate>& fate,
                              HydrateReport& report) {
  const bool drop_thinking = thinking == ThinkingPolicy::kDrop;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (fate[i] == Fate::kPruned) continue;
    const Entry& e = b.at(i);
    const bool user = e.role == Role::kUser;
    if (!is_message(e) || !(user || (e.role == Role::kAssistant && !is_skipped_assistant(e))) ||
        !has_nothing_to_send(e, drop_thinking))
      continue;
    fate[i] = Fate::kLeftOut;
    report.repairs[user ? "dropped-empty-user-message" : "dropped-empty-assistant-message"]++;
    const bool not_array = content_is_unreadable(e) || (!user && e.content_kind == JsonKind::kString);
    warn(report, b.index, not_array ? Code::kContentNotArray : Code::kEmptyMessage, e, e.message.column,
         std::string("left out the ") + (user ? "user" : "assistant") + " message: " +
             (content_is_unreadable(e) ? std::string("its content is ") + json_kind_name(e.content_kind)
                                       : std::string("it has no text (or only white space) to send")));
  }
}

// R4, --prune-compacted: the model is the last model_change or assistant on
// the path. The node of that assistant when it is not written (a
// model_change in its place keeps the model), else -1.
std::int64_t model_of_unwritten_assistant(const Branch& b, const std::vector<Fate>& fate) {
  for (std::size_t i = b.size(); i-- > 0;) {
    const Entry& e = b.at(i);
    bool sets_model = e.root == JsonKind::kObject &&
                      (e.type == EntryType::kModelChange || (is_message(e) && e.role == Role::kAssistant));
    if (!sets_model) continue;
    return fate[i] == Fate::kPruned || fate[i] == Fate::kLeftOut ? static_cast<std::int64_t>(b.path[i]) : -1;
  }
  return -1;
}

// ---- R10 pairing: which call each result answers, and the ids written ----

constexpr std::uint32_t kNone = UINT32_MAX;

// One tool call of a written assistant.
struct CallSlot {
  std::uint32_t pos;           // path position of the assistant
  std::uint32_t next = kNone;  // the next unanswered call with the same id
  std::int64_t result = -1;    // path position of its result
};

// What the pairing learned of one tool call id.
struct IdState {
  std::string_view id;
  std::uint32_t head = kNone, tail = kNone;  // unanswered calls with this id
  bool skipped = false;                      // an error/aborted assistant made a call with it
  bool answered = false;                     // a result was matched to a call with it
  bool kept = false;                         // a written call keeps it (a later call with it is renamed)
};

// The state of every tool call id on the branch. Ids are views into the
// index's arena and the table is flat (IndexByKey): no string copies, and no
// hash nodes to allocate and free, which on a big session cost more than the
// matching itself.
class IdStates {
 public:
  // At most `calls` ids: the states are never reallocated.
  explicit IdStates(std::size_t calls) : by_id_(calls, IdOf{&states_}) { states_.reserve(calls); }
  IdStates(const IdStates&) = delete;  // by_id_ reads states_ through a pointer
  IdStates& operator=(const IdStates&) = delete;

  // The state of `id`, or nullptr.
  IdState* find(std::string_view id) {
    const std::int64_t k = by_id_.find(id);
    return k < 0 ? nullptr : &states_[static_cast<std::size_t>(k)];
  }
  bool contains(std::string_view id) const { return by_id_.find(id) >= 0; }
  // The state of `id`, a new one when it has none.
  IdState& get(std::string_view id) {
    if (IdState* q = find(id)) return *q;
    states_.push_back(IdState{id});
    by_id_.put(static_cast<std::uint32_t>(states_.size() - 1));
    return states_.back();
  }

 private:
  struct IdOf {
    const std::vector<IdState>* states;
    std::string_view operator()(std::uint32_t k) const { return (*states)[k].id; }
  };
  std::vector<IdState> states_;
  IndexByKey<IdOf, std::hash<std::string_view>> by_id_;
};

// Which call each result answers. Every call gets a slot in `calls`, an
// assistant's calls one after another; the unanswered calls of one id form a
// queue linked through them.
struct Pairing {
  std::vector<CallSlot> calls;
  std::vector<std::uint32_t> first_call;  // per path position: an assistant's first slot (not a skipped one's)
  std::vector<std::string> renamed;       // per slot, the id written instead ("": its own); empty: none renamed

  // The id written for the call in `slot` when it is renamed, else nullptr.
  const std::string* renamed_id(std::size_t slot) const {
    return slot < renamed.size() && !renamed[slot].empty() ? &renamed[slot] : nullptr;
  }
};

std::size_t count_written_calls(const Branch& b, const std::vector<Fate>& fate) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const Entry& e = b.at(i);
    if (fate[i] == Fate::kInPlace && is_message(e) && e.role == Role::kAssistant) count += e.tool_calls_count;
  }
  return count;
}

// An assistant's calls join the queues of their ids. A skipped (error or
// aborted) assistant's calls only mark their ids: pi-ai drops its results.
void queue_calls(const Branch& b, std::size_t i, IdStates& ids, Pairing& pairing) {
  const Entry& e = b.at(i);
  if (is_skipped_assistant(e)) {
    for (const ToolCallRef* c = b.index.calls_begin(e); c != b.index.calls_end(e); ++c) ids.get(c->id).skipped = true;
    return;
  }
  std::vector<CallSlot>& calls = pairing.calls;
  pairing.first_call[i] = static_cast<std::uint32_t>(calls.size());
  for (std::uint32_t k = 0; k < e.tool_calls_count; ++k) {
    IdState& q = ids.get(b.index.calls_begin(e)[k].id);
    const auto added = static_cast<std::uint32_t>(calls.size());
    calls.push_back({static_cast<std::uint32_t>(i)});
    if (q.tail == kNone)
      q.head = added;
    else
      calls[q.tail].next = added;
    q.tail = added;
  }
}

// The result `e` at path position i answers the earliest unanswered call
// with its id (`q`'s), if any: true then.
bool answer_call(const Entry& e, std::size_t i, IdState* q, Pairing& pairing) {
  if (!e.tool_call_id.is_string() || !q || q->head == kNone) return false;
  CallSlot& call = pairing.calls[q->head];
  q->head = call.next;
  if (q->head == kNone) q->tail = kNone;
  call.result = static_cast<std::int64_t>(i);
  q->answered = true;
  return true;
}

// Pair mode: a result no call is waiting for is left out, with why.
void leave_out_unanswering_result(const Branch& b, const Entry& e, const IdState* q, HydrateReport& report) {
  const std::string_view id = e.tool_call_id.text();
  if (q && q->skipped) {
    report.repairs["dropped-result-of-aborted-assistant"]++;
    warn(report, b.index, Code::kResultOfSkippedAssistant, e, e.tool_call_id.column,
         "dropped the tool result for " + quote_for_message(id) +
             ": its assistant message stopped with error/aborted, so pi-ai would send it without its call");
  } else if (q && q->answered) {
    report.repairs["dropped-duplicate-result"]++;
    warn(report, b.index, Code::kDuplicateToolResult, e, e.tool_call_id.column,
         "dropped a second result for tool call " + quote_for_message(id) + "; the first one is kept");
  } else {
    report.repairs["dropped-orphan-result"]++;
    warn(report, b.index, Code::kOrphanToolResult, e, e.tool_call_id.column,
         "dropped the tool result for " + quote_for_message(id) + ": no tool call before it has that id");
  }
}

// R10, R11: match each result to the earliest unanswered call with its id;
// a matched result is written after its call. Pair mode leaves the others out.
void match_results_to_calls(const Branch& b, bool pair, IdStates& ids, Pairing& pairing, std::vector<Fate>& fate,
                            HydrateReport& report) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (fate[i] != Fate::kInPlace) continue;
    const Entry& e = b.at(i);
    if (!is_message(e)) continue;
    if (e.role == Role::kAssistant) {
      queue_calls(b, i, ids, pairing);
    } else if (e.role == Role::kToolResult) {
      IdState* q = ids.find(e.tool_call_id.text());
      if (answer_call(e, i, q, pairing)) {
        fate[i] = Fate::kAfterCall;
      } else if (pair) {  // flatten keeps it, as text
        fate[i] = Fate::kLeftOut;
        leave_out_unanswering_result(b, e, q, report);
      }
    }
  }
}

// R10 ids, pair mode: the ids providers see must each name one call, and
// those pi-ai may send to Anthropic unchanged must match
// ^[a-zA-Z0-9_-]{1,64}$ (tool_call_id_problem). A call that breaks either
// gets a new id, and its results with it; the first call whose id is fine
// keeps it.
void rename_tool_call_ids(const Branch& b, IdStates& ids, Pairing& pairing) {
  std::unordered_set<std::string> given;  // new ids so far (rare: a set is fine)
  // How many calls have each portable form: when pi-ai replays the history
  // for another model it sends every id in that form, so a new id must
  // not be the form of another call's id either (made on the first rename).
  std::unordered_map<std::string, std::uint32_t> forms;
  std::unordered_map<std::string, std::uint64_t> next_suffix;  // per portable form: where its next search starts
  auto note_forms = [&] {
    for (std::size_t i = 0; i < b.size(); ++i) {
      if (pairing.first_call[i] == kNone) continue;
      const Entry& a = b.at(i);
      for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) forms[portable_form(b.index.calls_begin(a)[k].id)]++;
    }
  };
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (pairing.first_call[i] == kNone) continue;
    const Entry& a = b.at(i);
    for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) {
      const ToolCallRef& c = b.index.calls_begin(a)[k];
      IdState& q = *ids.find(c.id);
      if (tool_call_id_problem(a, c, q.kept) == ToolCallIdProblem::kNone) {
        q.kept = true;
        continue;
      }
      if (forms.empty()) note_forms();
      const std::string own_form = portable_form(c.id);
      auto taken = [&](const std::string& id) {
        auto f = forms.find(id);
        const std::uint32_t others = f == forms.end() ? 0 : f->second - (id == own_form ? 1 : 0);
        return ids.contains(id) || given.count(id) > 0 || others > 0;
      };
      std::string fresh = portable_tool_call_id(c.id, taken, next_suffix.try_emplace(own_form, 2).first->second);
      given.insert(fresh);
      if (pairing.renamed.empty()) pairing.renamed.resize(pairing.calls.size());
      pairing.renamed[pairing.first_call[i] + k] = std::move(fresh);
    }
  }
}

Pairing pair_results_with_calls(const Branch& b, bool pair, std::vector<Fate>& fate, HydrateReport& report) {
  Pairing pairing;
  pairing.first_call.assign(b.size(), kNone);
  const std::size_t call_count = count_written_calls(b, fate);
  pairing.calls.reserve(call_count);
  IdStates ids(call_count);  // at most one per call
  match_results_to_calls(b, pair, ids, pairing, fate, report);
  if (pair) rename_tool_call_ids(b, ids, pairing);
  return pairing;
}

// R9: when the latest compaction's kept window starts at a result that
// moved to its call, it starts at that call's assistant instead. The node
// it starts at then, else -1.
std::int64_t kept_window_start_at_call(const Branch& b, const CompactionWindow& window, const std::vector<Fate>& fate,
                                       const Pairing& pairing, HydrateReport& report) {
  // The first entry of the kept window that is written.
  for (std::int64_t i = 0; i < window.compaction_pos; ++i) {
    const auto at = static_cast<std::size_t>(i);
    if (!window.in_context_node[b.path[at]] || fate[at] == Fate::kLeftOut) continue;
    if (fate[at] != Fate::kAfterCall) return -1;
    std::int64_t start = -1;
    for (const CallSlot& call : pairing.calls)
      if (call.result == i) start = b.path[call.pos];
    report.repairs["compaction-kept-window-starts-at-call"]++;
    return start;
  }
  return -1;
}

// ---- the written entries, in order ----

// R4, R5: the content repair of a message, counted and reported.
void note_content_repair(const Branch& b, const PlannedEntry& p, const Entry& e, HydrateReport& report) {
  const char* role = e.role == Role::kAssistant ? "assistant" : e.role == Role::kUser ? "user" : "tool result";
  switch (content_repair(p, e)) {
    case ContentRepair::kNone: break;
    case ContentRepair::kFill:
      report.repairs["filled-missing-content"]++;
      warn(report, b.index, Code::kContentNotArray, e, e.message.column,
           std::string(role) + " content is " + json_kind_name(e.content_kind) + ": wrote [] (pi 0.78 crashes on it)");
      break;
    case ContentRepair::kWrap:
      report.repairs["wrapped-string-content"]++;
      warn(report, b.index, Code::kContentNotArray, e, e.message.column,
           std::string(role) + " content is a string: wrote it as a text block (pi-ai crashes on a string)");
      break;
    case ContentRepair::kNoToolOutput:
      report.repairs["filled-empty-tool-result"]++;
      warn(report, b.index, content_is_unreadable(e) ? Code::kContentNotArray : Code::kEmptyMessage, e,
           e.message.column,
           (content_is_unreadable(e) ? std::string("tool result content is ") + json_kind_name(e.content_kind)
                                     : std::string("the tool result has nothing to send")) +
               ": wrote the text \"" + kNoToolOutputText +
               "\" (pi-ai sends an empty text block to Anthropic, which rejects it)");
      break;
    case ContentRepair::kDropBlankText:
      report.repairs["dropped-empty-text-block"] += e.content_blank_texts;
      warn(report, b.index, Code::kBlankTextBlock, e, e.message.column,
           "left out " + std::to_string(e.content_blank_texts) +
               " text block(s) without text or with white space only (Anthropic rejects them)");
      break;
  }
}

// R4: an assistant's stopReason and usage, as pi needs them.
void note_assistant_repairs(const Branch& b, const Entry& e, HydrateReport& report) {
  if (e.role == Role::kAssistant && e.stop_reason == StopReason::kPending) {
    report.repairs["settled-pending-stop-reason"]++;
    warn(report, b.index, Code::kPendingStopReason, e, e.stop_reason_field.column,
         std::string("stopReason \"pending\" written as \"") + (e.tool_calls_count ? "toolUse" : "stop") + "\"");
  }
  if (needs_usage(e)) {
    report.repairs["filled-missing-usage"]++;
    warn(report, b.index, Code::kUsageMissing, e, e.message.column,
         "assistant message without usage (or its cost): wrote zeros (the interactive pi crashes without)");
  }
}

// A written source entry, with the repairs its message needs counted: the
// v2 migration's role, R11 flattening, R4 and R5 content.
PlannedEntry source_entry(const Branch& b, std::size_t i, bool pair, HydrateReport& report) {
  PlannedEntry p;
  p.node = b.path[i];
  const Entry& e = b.at(i);
  const bool message = is_message(e);
  p.rename_hook_role = b.view.migrates_v2 && message && e.role == Role::kHookMessage;
  if (p.rename_hook_role) report.repairs["migrated-hook-message-role"]++;
  p.flatten =
      !pair && message && ((e.role == Role::kAssistant && e.tool_calls_count > 0) || e.role == Role::kToolResult);
  if (p.flatten)
    report.repairs[e.role == Role::kToolResult ? "flattened-tool-result" : "flattened-tool-call-message"]++;
  if (message) {
    note_content_repair(b, p, e, report);
    note_assistant_repairs(b, e, report);
  }
  return p;
}

// R10: the ids written for `a`'s calls, when one is renamed.
void note_renamed_calls(const Branch& b, const Pairing& pairing, const Entry& a, std::uint32_t first, PlannedEntry& p,
                        Plan& plan, HydrateReport& report) {
  bool any = false;
  for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) any = any || pairing.renamed_id(first + k);
  if (!any) return;
  p.renamed_ids = static_cast<std::uint32_t>(plan.renamed_call_ids.size());
  for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) {
    const std::string* id = pairing.renamed_id(first + k);
    plan.renamed_call_ids.push_back(id ? *id : std::string());
    if (!id) continue;
    const ToolCallRef& c = b.index.calls_begin(a)[k];
    // Its first problem once an earlier call is known to keep its id: kRepeated when it has no other.
    const bool portable = tool_call_id_problem(a, c, true) == ToolCallIdProblem::kRepeated;
    report.repairs["renamed-tool-call-id"]++;
    warn(report, b.index, Code::kBadToolCallId, a, c.column ? c.column : a.message.column,
         "renamed tool call id " + (c.id_kind == JsonKind::kString ? quote_for_message(c.id) : std::string("(none)")) +
             " to " + quote_for_message(*id) + " in the call and its result: " +
             (portable ? "an earlier call uses it" : "it does not match ^[a-zA-Z0-9_-]{1,64}$"));
  }
}

// R10: the id written for a result, when its call's is renamed.
void note_renamed_result(const Pairing& pairing, std::size_t slot, PlannedEntry& p, Plan& plan) {
  if (const std::string* id = pairing.renamed_id(slot)) {
    p.renamed_ids = static_cast<std::uint32_t>(plan.renamed_call_ids.size());
    plan.renamed_call_ids.push_back(*id);
  }
}

// What plan_entries has decided when it writes the entries out.
struct Decisions {
  std::vector<Fate> fate;  // per path position
  Pairing pairing;
  std::int64_t model_node = -1;  // see model_of_unwritten_assistant
  bool pair = true;              // --tools pair
};

// R10, R11: the results of the assistant at path position i, right after
// it in call order; (pair) an error result for a call without one.
// `in_place_before[j]`: how many entries before position j are written in place.
void write_results_after_calls(const Branch& b, const Decisions& d, std::size_t i,
                               const std::vector<std::size_t>& in_place_before, Plan& plan, HydrateReport& report) {
  const Entry& a = b.at(i);
  const std::uint32_t first = d.pairing.first_call[i];
  for (std::uint32_t k = 0; k < a.tool_calls_count; ++k) {
    const std::int64_t r = d.pairing.calls[first + k].result;
    if (r >= 0) {
      // Did anything written (other than results) sit between call and result?
      const bool moved = in_place_before[static_cast<std::size_t>(r)] > in_place_before[i + 1];
      if (moved) {
        report.repairs["moved-result-to-its-call"]++;
        warn(report, b.index, Code::kMessageBetweenCallAndResult, b.at(static_cast<std::size_t>(r)), 1,
             "moved the result of tool call " + quote_for_message(b.index.calls_begin(a)[k].id) +
                 " right after its call; the entries between now follow the results");
      }
      plan.entries.push_back(source_entry(b, static_cast<std::size_t>(r), d.pair, report));
      note_renamed_result(d.pairing, first + k, plan.entries.back(), plan);
    } else if (d.pair) {
      PlannedEntry s;
      s.synthetic = Synthetic::kMissingResult;
      s.call_node = b.path[i];
      s.call = k;
      note_renamed_result(d.pairing, first + k, s, plan);
      plan.entries.push_back(std::move(s));
      report.repairs["synthetic-result-for-missing"]++;
      warn(report, b.index, Code::kMissingToolResult, a, b.index.calls_begin(a)[k].column,
           "tool call " + quote_for_message(b.index.calls_begin(a)[k].id) +
               " has no result; wrote an error result saying none was recorded");
    }
  }
}

// The written entries in path order, each assistant's results right after
// it, and a model_change where an unwritten assistant decided the model.
void write_entries(const Branch& b, const Decisions& d, Plan& plan, HydrateReport& report) {
  const std::size_t n = b.size();
  std::vector<std::size_t> in_place_before(n + 1, 0);
  for (std::size_t j = 0; j < n; ++j) in_place_before[j + 1] = in_place_before[j] + (d.fate[j] == Fate::kInPlace);
  // The plan's exact size, so its vector is allocated once: written entries
  // (results claimed by a call among them), synthetic results, a model_change
  // and a user message at the start.
  std::size_t planned = 2;
  for (std::size_t j = 0; j < n; ++j) planned += is_written(d.fate[j]);
  if (d.pair)
    for (const CallSlot& call : d.pairing.calls) planned += call.result < 0;
  plan.entries.reserve(planned);
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<std::int64_t>(b.path[i]) == d.model_node) {
      // Not written, but it decides the model: a model_change in its place keeps it.
      PlannedEntry m;
      m.synthetic = Synthetic::kModelChange;
      m.call_node = d.model_node;
      plan.entries.push_back(std::move(m));
      report.repairs[d.fate[i] != Fate::kPruned ? "model-change-for-dropped-assistant"
                                                : "model-change-for-pruned-assistant"]++;
    }
    if (d.fate[i] != Fate::kInPlace) continue;
    plan.entries.push_back(source_entry(b, i, d.pair, report));
    if (d.pairing.first_call[i] == kNone) continue;
    note_renamed_calls(b, d.pairing, b.at(i), d.pairing.first_call[i], plan.entries.back(), plan, report);
    write_results_after_calls(b, d, i, in_place_before, plan, report);
  }
}

// R3 (hydrate.md, PH310): the first message sent must be a user message
// (Anthropic rejects a request that starts otherwise). With a compaction
// its summary comes first, and is one; without, a user message goes before
// the first message sent when that is an assistant message or a tool result.
void add_user_message_at_start(const Branch& b, Plan& plan, HydrateReport& report) {
  std::vector<Role> llm_role(b.view.nodes.size(), Role::kNone);
  for (const ContextItem& item : b.view.context) llm_role[item.node] = item.llm_role;
  for (std::size_t j = 0; j < plan.entries.size(); ++j) {
    const PlannedEntry& p = plan.entries[j];
    if (p.node < 0) continue;
    const Entry& e = b.view.entry(b.index, static_cast<std::uint32_t>(p.node));
    Role role = llm_role[static_cast<std::size_t>(p.node)];
    if (p.flatten && role == Role::kToolResult) role = Role::kUser;
    if (role != Role::kUser && role != Role::kAssistant && role != Role::kToolResult) continue;
    if (is_skipped_assistant(e)) continue;  // never sent
    if (role == Role::kUser) return;
    PlannedEntry u;
    u.synthetic = Synthetic::kUserMessage;
    u.call_node = p.node;
    plan.entries.insert(plan.entries.begin() + static_cast<std::ptrdiff_t>(j), std::move(u));
    report.repairs["added-user-message-at-start"]++;
    warn(report, b.index, Code::kFirstMessageNotUser, e, e.message.column,
         std::string("the conversation starts with ") +
             (role == Role::kAssistant ? "an assistant message" : "a tool result") +
             ": added a user message before it (Anthropic rejects a request that does not start with one)");
    return;
  }
}

}  // namespace

Plan plan_entries(const SessionIndex& index, const PiView& view, const std::vector<std::uint32_t>& path,
                  const HydrateOptions& options, HydrateReport& report) {
  const Branch branch{index, view, path};
  const std::size_t diagnostics_before = report.diagnostics.size();  // this step's are sorted by line

  const CompactionWindow window = find_compaction_window(branch);
  Decisions d;
  d.pair = options.tools == ToolPolicy::kPair;
  d.fate = prune_compacted(branch, window, options.prune_compacted, report);
  leave_out_empty_messages(branch, options.thinking, d.fate, report);
  d.model_node = model_of_unwritten_assistant(branch, d.fate);
  d.pairing = pair_results_with_calls(branch, d.pair, d.fate, report);

  Plan plan;
  plan.first_kept_override = kept_window_start_at_call(branch, window, d.fate, d.pairing, report);
  write_entries(branch, d, plan, report);
  if (window.compaction_pos < 0) add_user_message_at_start(branch, plan, report);

  const auto first_of_this_step = report.diagnostics.begin() + static_cast<std::ptrdiff_t>(diagnostics_before);
  std::stable_sort(first_of_this_step, report.diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
  return plan;
}

}  // namespace pihydrate
