// Reading the export: the thread object R1 reads, and each entry checked on
// its own, then settled in entry order into envelopes (duplicates, seq order).
#include "readers/thread_converter.h"

#include <algorithm>
#include <functional>
#include <string>

#include "core/index_by_key.h"
#include "pihydrate/formats.h"

namespace pihydrate {
namespace thread_converter {

// One entry of the export, checked without touching the converter's state:
// whether it is accepted, and what to report, depend only on the entry,
// except for duplicate ids and missing seqs, which read_envelopes settles
// in entry order. docs/thread-export.md, Reading, states these checks.
void ThreadConverter::check_entry(Envelope& e, EntryCheck& c, Checker& checker, PlanFacts& facts,
                                  std::string& plan_values) const {
  auto reject = [&](const std::string& path, std::size_t offset, const std::string& message) {
    note(checker, c.after_id, Severity::kError, path, offset, message);
  };
  if (doc_.kind(e.ref()) != RefKind::kObject) {
    note(checker, c.before_id, Severity::kError, e.path(), e.ref().begin, "expected an object");
    return;
  }
  std::vector<MemberSpan>& em = checker.entry_members;  // the envelope, read once
  doc_.members_into(e.ref(), em);
  JsonRef id = ThreadDocument::find(em, "id");
  std::string& scratch = checker.scratch;
  const std::string_view id_text = doc_.string_text(id, scratch);  // empty unless a string
  if (id_text.empty()) {
    note(checker, c.before_id, Severity::kError, e.path() + ".id", id.valid() ? id.begin : e.ref().begin,
         id.valid() ? "expected a non-empty string" : "missing");
    return;
  }
  c.id_begin = checker.ids.size();
  c.id_size = static_cast<std::uint32_t>(id_text.size());
  checker.ids += id_text;
  c.has_id = true;
  c.id_at = id.begin;
  JsonRef kind = ThreadDocument::find(em, "kind");
  if (doc_.kind(kind) != RefKind::kString) {
    reject(e.path() + ".kind", kind.valid() ? kind.begin : e.ref().begin,
           kind.valid() ? "expected a string" : "missing");
    return;
  }
  const std::string kind_text(doc_.string_text(kind, scratch));
  e.kind = kind_of(kind_text);
  e.set_ts(ThreadDocument::find(em, "ts"));
  JsonRef seq = ThreadDocument::find(em, "seq");
  if (seq.valid()) {
    if (doc_.kind(seq) != RefKind::kNumber || !parse_int64(doc_.raw(seq), e.order_key)) {
      reject(e.path() + ".seq", seq.begin, "expected an integer of at most 64 bits");
      return;
    }
    c.has_seq = true;
  }
  const JsonRef data = ThreadDocument::find(em, "data");
  e.set_payload(data.valid() ? data : ThreadDocument::find(em, "payload"));
  // Messages name `data` (the documented name) unless the entry uses the `payload` alias.
  const std::string payload_path = e.path() + (data.valid() || !e.payload().valid() ? ".data" : ".payload");
  auto require_payload_object = [&] {
    if (doc_.kind(e.payload()) == RefKind::kObject) return true;
    reject(payload_path, e.payload().valid() ? e.payload().begin : e.ref().begin,
           e.payload().valid() ? "expected an object" : "missing");
    return false;
  };
  switch (e.kind) {
    case Kind::kPiAssistant:
    case Kind::kPiToolResult:
    case Kind::kPiUser:
      if (!require_payload_object() || !check_pi_message(e, c, checker, payload_path, facts, plan_values)) return;
      break;
    case Kind::kChat: {
      const std::string_view role = doc_.string_text(ThreadDocument::find(em, "role"), scratch);
      if (role != "user" && role != "assistant" && role != "system") {
        reject(e.path() + ".role", e.ref().begin, "expected \"user\", \"assistant\" or \"system\"");
        return;
      }
      if (doc_.kind(ThreadDocument::find(em, "text")) != RefKind::kString) {
        reject(e.path() + ".text", e.ref().begin, "missing (a chat entry needs its text)");
        return;
      }
      facts.role = role == "user" ? ChatRole::kUser : role == "assistant" ? ChatRole::kAssistant : ChatRole::kOther;
      take_plan_facts(e, em, {}, facts, plan_values);
      break;
    }
    case Kind::kPiChunk: {
      std::vector<MemberSpan>& pm = checker.payload_members;
      doc_.members_into(e.payload(), pm);
      if (doc_.kind(ThreadDocument::find(pm, "event")) != RefKind::kObject) {
        note(checker, c.after_id, Severity::kWarning, e.path(), e.ref().begin, "pi.chunk without data.event; skipped");
        c.repair = "skipped-chunk-without-event";
        return;
      }
      take_plan_facts(e, pm, {}, facts, plan_values);
      break;
    }
    case Kind::kPiCompaction:
      if (!require_payload_object()) return;
      break;
    case Kind::kPiEntry:
    case Kind::kPiSnapshot: {
      // Raw pi entries (X2, X1): their lines are read after the entries are
      // sorted (raw_thread.cc); here, that they carry them.
      std::vector<MemberSpan>& pm = checker.payload_members;
      pm.clear();
      if (doc_.kind(e.payload()) == RefKind::kObject) doc_.members_into(e.payload(), pm);
      if (e.kind == Kind::kPiEntry && doc_.kind(ThreadDocument::find(pm, "line")) != RefKind::kString &&
          doc_.kind(ThreadDocument::find(pm, "entry")) != RefKind::kObject) {
        reject(e.path() + ".data", e.ref().begin, "a pi.entry carries data.line (a string) or data.entry (an object)");
        return;
      }
      if (e.kind == Kind::kPiSnapshot && doc_.kind(ThreadDocument::find(pm, "jsonl")) != RefKind::kString) {
        reject(e.path() + ".data.jsonl", e.ref().begin, "missing: a pi.snapshot carries the session file as a string");
        return;
      }
      break;
    }
    default:
      note(checker, c.after_id, Severity::kWarning, e.path() + ".kind", kind.begin,
           "unknown kind " + quote_for_message(kind_text) + "; the entry is skipped");
      c.repair = "skipped-unknown-kind";
      return;
  }
  c.accepted = true;
}

// A pi.user, pi.assistant or pi.tool_result entry whose payload is an
// object: its message (the payload itself when it has a role, else its
// `message`) must be an object with the role the kind names.
bool ThreadConverter::check_pi_message(Envelope& e, EntryCheck& c, Checker& checker, const std::string& payload_path,
                                       PlanFacts& facts, std::string& plan_values) const {
  auto reject = [&](const std::string& path, std::size_t offset, const std::string& message) {
    note(checker, c.after_id, Severity::kError, path, offset, message);
    return false;
  };
  std::vector<MemberSpan>& pm = checker.payload_members;
  doc_.members_into(e.payload(), pm);
  e.set_message(ThreadDocument::find(pm, "role").valid() ? e.payload() : ThreadDocument::find(pm, "message"));
  if (doc_.kind(e.message()) != RefKind::kObject)
    return reject(payload_path + ".message", e.message().valid() ? e.message().begin : e.payload().begin,
                  e.message().valid() ? "expected an object" : "missing");
  const char* want = e.kind == Kind::kPiAssistant ? "assistant" : e.kind == Kind::kPiToolResult ? "toolResult" : "user";
  std::vector<MemberSpan>* message_members = &pm;
  if (e.message().begin != e.payload().begin) {
    message_members = &checker.message_members;
    doc_.members_into(e.message(), *message_members);
  }
  const JsonRef role_ref = ThreadDocument::find(*message_members, "role");
  const std::string_view role = doc_.string_text(role_ref, checker.scratch);
  if (role != want)
    return reject(payload_path + ".message.role", role_ref.valid() ? role_ref.begin : e.message().begin,
                  "expected \"" + std::string(want) + "\" for a " + kind_name(e.kind) + " entry, found " +
                      (role.empty() ? std::string("none") : quote_for_message(std::string(role))));
  take_plan_facts(e, pm, *message_members, facts, plan_values);
  return true;
}

std::string stream_key_of(const ThreadDocument& doc, JsonRef value, std::string& scratch) {
  std::int64_t integer = 0;
  switch (doc.kind(value)) {
    case RefKind::kString: return thread_rules::stream_key_of_string(doc.string_text(value, scratch));
    case RefKind::kNumber:
      return parse_int64(doc.raw(value), integer) ? thread_rules::stream_key_of_integer(integer) : std::string();
    default: return std::string();
  }
}

// The value the planning rules (rule_entries) read of
// an accepted entry: `entry_members` are a chat entry's own, or a pi.user's,
// pi.assistant's or pi.chunk's payload's; `message_members` its message's.
void ThreadConverter::take_plan_facts(const Envelope& e, const std::vector<MemberSpan>& entry_members,
                                      const std::vector<MemberSpan>& message_members, PlanFacts& facts,
                                      std::string& plan_values) const {
  const ThreadDocument& doc = doc_;
  facts.value_begin = plan_values.size();
  std::string scratch;  // allocated only for an escaped reference
  switch (e.kind) {
    case Kind::kChat:
      if (facts.role == ChatRole::kAssistant)
        plan_values += doc.string_text(ThreadDocument::find(entry_members, "piRef"), scratch);
      break;
    case Kind::kPiUser: plan_values += doc.string_text(ThreadDocument::find(entry_members, "chatRef"), scratch); break;
    case Kind::kPiAssistant:
      plan_values += stream_key_of(doc, ThreadDocument::find(message_members, "timestamp"), scratch);
      break;
    case Kind::kPiChunk: {
      const std::string key = stream_key_of(doc, ThreadDocument::find(entry_members, "streamKey"), scratch);
      facts.has_value = !key.empty();
      plan_values += key;
      break;
    }
    default: break;
  }
  facts.value_size = static_cast<std::uint32_t>(plan_values.size() - facts.value_begin);
}

// R1's inputs: format "thread-export", version 1, a thread object with a non-empty id.
bool ThreadConverter::read_thread_header(JsonRef root) {
  // A member of the root that must hold one value: a string's decoded text,
  // or a number's text.
  auto require = [&](const char* name, RefKind kind, const std::string& wanted) {
    const JsonRef value = doc_.member(root, name);
    const bool is_string = kind == RefKind::kString;
    if (doc_.kind(value) == kind && (is_string ? doc_.string_value(value) : std::string(doc_.raw(value))) == wanted)
      return true;
    const std::string shown = is_string ? json_quote(wanted) : wanted;
    error(name, value.valid() ? value.begin : root.begin,
          value.valid() ? "expected " + shown + ", found " + std::string(doc_.raw(value).substr(0, 40))
                        : "missing (expected " + shown + ")");
    return false;
  };
  if (!require("format", RefKind::kString, "thread-export") || !require("version", RefKind::kNumber, "1")) return false;
  thread_ = doc_.member(root, "thread");
  if (doc_.kind(thread_) != RefKind::kObject) {
    error("thread", thread_.valid() ? thread_.begin : root.begin, thread_.valid() ? "expected an object" : "missing");
    return false;
  }
  JsonRef thread_id = doc_.member(thread_, "id");
  if (doc_.kind(thread_id) != RefKind::kString || doc_.string_value(thread_id).empty()) {
    error("thread.id", thread_id.valid() ? thread_id.begin : thread_.begin,
          thread_id.valid() ? "expected a non-empty string" : "missing");
    return false;
  }
  return true;
}

bool ThreadConverter::read_envelopes() {
  pages_ = PageWindow(options_.residency, doc_.bytes().size());
  const JsonRef root = doc_.root();
  if (!read_thread_header(root)) return false;
  std::vector<JsonRef> entries;
  JsonRef array;
  if (doc_.is_jsonl()) {
    entries = doc_.jsonl_entries();
  } else {
    array = doc_.member(root, "entries");
    if (doc_.kind(array) != RefKind::kArray) {
      error("entries", array.valid() ? array.begin : root.begin, array.valid() ? "expected an array" : "missing");
      return false;
    }
    entries = doc_.top_array_elements(array, [this](std::size_t offset) { pages_.reading(offset); });
  }
  // Each entry is checked on its own, then settled in entry order:
  // duplicates, the order keys of entries without a seq, and the messages.
  // Every envelope is filled in place: envs_[i] for entry i, moved down to
  // the next kept slot when settled (never past a slot still to be settled).
  const std::size_t n = entries.size();
  if (n >= static_cast<std::size_t>(INT32_MAX)) {  // entries and lines are counted in 32 bits
    error("entries", root.begin, "more than " + std::to_string(INT32_MAX - 1) + " entries");
    return false;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (entries[i].end - entries[i].begin > UINT32_MAX) {
      error("entries[" + std::to_string(i) + "]", entries[i].begin,
            "larger than 4 GiB (entries are read as 32-bit offsets)");
      return false;
    }
  }
  envs_.resize(n);
  for (std::size_t i = 0; i < n; ++i) envs_[i] = Envelope::of_entry(i, entries[i]);
  plan_facts_.assign(n, PlanFacts{});
  out_.entry_count = n;
  std::vector<JsonRef>().swap(entries);
  // Room for typical ids and plan values, so the strings are not copied at
  // every doubling (room never written to takes no memory).
  constexpr std::size_t kTypicalIdBytes = 32, kTypicalPlanValueBytes = 16;
  ids_.reserve(n * kTypicalIdBytes);
  plan_values_.reserve(n * kTypicalPlanValueBytes);
  // The ids settled so far (kept entries, and skipped ones until the end,
  // for duplicates), found by open addressing over envs_ positions.
  std::size_t kept = 0;
  EnvelopesById seen(n, IdAtPosition{this});
  bool any_seq = false, any_skipped = false;
  std::int64_t last_order_key = 0;  // the last accepted entry's
  auto settle = [&](std::size_t i, const EntryCheck& c, const Checker& checker, std::size_t& next_diagnostic) {
    auto report = [&](std::uint32_t count) {
      for (std::size_t k = next_diagnostic; k < next_diagnostic + count; ++k) listed_.add(checker.diagnostics[k]);
      next_diagnostic += count;
    };
    report(c.before_id);
    if (!c.has_id) return;
    Envelope& slot = envs_[kept];
    if (kept != i) slot = envs_[i];
    slot.id_begin = ids_.size();
    slot.id_size = c.id_size;
    ids_.append(checker.ids, c.id_begin, c.id_size);
    if (const std::int64_t first = seen.put_if_absent(static_cast<std::uint32_t>(kept)); first >= 0) {
      const std::string id(id_of(slot));
      ids_.resize(slot.id_begin);
      next_diagnostic += c.after_id;
      error(slot.path() + ".id", c.id_at,
            "duplicate id " + quote_for_message(id) + " (first used by entries[" +
                std::to_string(envs_[static_cast<std::size_t>(first)].index) + "])");
      return;
    }
    report(c.after_id);
    if (c.repair) out_.repairs[c.repair]++;
    if (c.has_seq) any_seq = true;
    if (!c.accepted) {
      slot.kind = Kind::kSkipped;  // its id still counts for duplicates
      any_skipped = true;
    } else {
      raw_ = raw_ || thread_rules::is_raw_kind(slot.kind);
      if (!c.has_seq) slot.order_key = last_order_key;  // stays after its predecessor
      last_order_key = slot.order_key;
    }
    ++kept;
  };
  Checker checker;
  for (std::size_t i = 0; i < n; ++i) {
    EntryCheck c;
    checker.ids.clear();
    checker.diagnostics.clear();
    reading(envs_[i]);
    check_entry(envs_[i], c, checker, plan_facts_[i], plan_values_);
    std::size_t next_diagnostic = 0;
    settle(i, c, checker, next_diagnostic);
  }
  envs_.resize(kept);
  if (any_skipped)
    envs_.erase(std::remove_if(envs_.begin(), envs_.end(), [](const Envelope& e) { return e.kind == Kind::kSkipped; }),
                envs_.end());
  if (!out_.ok()) return false;
  if (any_seq) {
    std::stable_sort(envs_.begin(), envs_.end(),
                     [](const Envelope& a, const Envelope& b) { return a.order_key < b.order_key; });
  }
  return true;
}

}  // namespace thread_converter
}  // namespace pihydrate
