// The thread export converter's parts (see thread_converter.cc): what every
// phase shares. Internal to src/hydrate; the public entry point is
// convert_thread_export in pihydrate/thread_export.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/index_by_key.h"
#include "core/json_spans.h"
#include "pihydrate/chunked_vector.h"
#include "pihydrate/diagnostic.h"
#include "pihydrate/findings.h"
#include "readers/page_window.h"
#include "readers/thread_document.h"
#include "readers/thread_export.h"
#include "readers/thread_rules.h"

namespace pihydrate {
struct ReadEntry;  // thread_reading.h

// Parses a thread export's bytes into `doc` (thread_converter.cc): false,
// with a PH601 in out.diagnostics, when they are not JSON.
bool parse_export(char* bytes, std::size_t size, const std::string& file, ThreadOptions& options, ThreadDocument& doc,
                  ConvertedThread& out);

namespace thread_converter {

// ISO-8601 for epoch milliseconds, or "" when the time has no four-digit year.
std::string iso_from_ms(std::int64_t ms);
// Milliseconds of an ISO-8601 time (UTC or with an offset); -1 if it is not one.
std::int64_t ms_from_iso(const std::string& t);
// An integer that fits in 64 bits (JSON allows any length).
bool parse_int64(std::string_view s, std::int64_t& value);
// A streamKey or message.timestamp as R6 and X4 compare it; "" for any other value.
std::string stream_key_of(const ThreadDocument& doc, JsonRef value, std::string& scratch);

// The rules' vocabulary (thread_rules.h). kSkipped: an entry whose id was
// read but which gives nothing; it is kept only until every id has been
// checked for duplicates.
using thread_rules::ChatRole;
using thread_rules::Kind;
using thread_rules::kind_name;
using thread_rules::kind_of;
using thread_rules::normalize_space;
using thread_rules::RuleEntries;
using thread_rules::RuleEntry;
using thread_rules::StreamPlan;
using thread_rules::UserReplacements;

// One entry of the export. A big export has hundreds of thousands of them,
// all held until the end, so an envelope is 64 bytes: what can be derived
// (the path) is not stored, and the values inside the entry are offsets
// from its start (an entry is under 4 GiB; read_envelopes checks).
struct Envelope {
  std::uint64_t ref_begin = 0;
  std::uint64_t id_begin = 0;  // its id: ThreadConverter::ids_ from id_begin (see ThreadConverter::id_of)
  std::int64_t order_key = 0;
  std::uint32_t index = 0;  // position in the export
  std::uint32_t ref_size = 0;
  std::uint32_t id_size = 0;
  Kind kind = Kind::kChat;

  // Entry `index` of the export, at `ref` (under 4 GiB), not yet checked.
  static Envelope of_entry(std::size_t index, JsonRef ref) {
    Envelope e;
    e.index = static_cast<std::uint32_t>(index);
    e.ref_begin = ref.begin;
    e.ref_size = static_cast<std::uint32_t>(ref.end - ref.begin);
    return e;
  }
  JsonRef ref() const { return {ref_begin, ref_begin + ref_size}; }
  // A raw line's (Kind::kRawLine) index in ThreadConverter::raw_lines_, kept
  // where the order key was: raw lines are made after the entries are sorted.
  std::size_t raw_line() const { return static_cast<std::size_t>(order_key); }
  JsonRef payload() const { return inside(payload_); }  // data or payload
  JsonRef message() const { return inside(message_); }  // pi.assistant / pi.tool_result / pi.user
  JsonRef ts() const { return inside(ts_); }
  void set_payload(JsonRef value) { payload_ = part(value); }
  void set_message(JsonRef value) { message_ = part(value); }
  void set_ts(JsonRef value) { ts_ = part(value); }
  std::string path() const { return "entries[" + std::to_string(index) + "]"; }

 private:
  struct Part {  // [at, at + size) from ref_begin; size 0: missing
    std::uint32_t at = 0;
    std::uint32_t size = 0;
  };
  JsonRef inside(Part p) const {
    return p.size == 0 ? JsonRef{} : JsonRef{ref_begin + p.at, ref_begin + p.at + p.size};
  }
  Part part(JsonRef value) const {
    if (!value.valid()) return {};
    return {static_cast<std::uint32_t>(value.begin - ref_begin), static_cast<std::uint32_t>(value.end - value.begin)};
  }
  Part payload_, message_, ts_;
};
static_assert(sizeof(Envelope) <= 64, "an envelope per export entry: keep it small");

// What planning (R3, R6, R7) reads of an entry, taken by check_entry while
// the entry is at hand: walking the export again to plan would map its
// pages in once more. Texts are not taken: they are compared only when a
// reference does not settle the match, and read then. rule_entries() gives
// the rules these facts by name.
struct PlanFacts {
  std::uint64_t value_begin = 0;  // the value: ThreadConverter::plan_values_ from value_begin
  std::uint32_t value_size = 0;
  ChatRole role = ChatRole::kNone;  // a chat entry's
  // The value is a chat assistant's piRef, a pi.user's chatRef (both
  // decoded; "" when not a string), a pi.assistant's message timestamp or
  // a pi.chunk's streamKey (both as written; has_value: the chunk has one).
  bool has_value = false;
};

// One line of pi's own session that a raw entry carries (X2), read once
// (raw_thread.cc): what the rules, R9 and the linking read of it. Its text
// is not held: it is read again from the export when it is written
// (ThreadConverter::raw_text), so memory does not follow the export's size.
struct RawLine {
  enum class Source : std::uint8_t {
    kLine,          // data.line: the JSON string at `at`
    kEntry,         // data.entry: the JSON object at `at`, written compact
    kSnapshotLine,  // a line of data.jsonl: [at, at + size) of that string's escaped bytes
  };
  // Its strings, one after another in ThreadConverter::raw_strings_ from
  // `strings` (a 4-byte length and the bytes each), in this order; the
  // tool call ids are an assistant's calls' ids, or a result's toolCallId (R9).
  enum Text : std::uint32_t {
    kId,              // its entry id
    kParent,          // its parentId when that is a string
    kSummary,         // a compaction's
    kMessageKey,      // a message's role and timestamp, as X4 compares them
    kFinalTimestamp,  // an assistant's message.timestamp, as R6 compares it
    kTimestamp,       // its own timestamp when ISO-8601: lossy lines after it take it
    kToolIds,         // then tool_id_count of them
  };
  std::uint64_t at = 0;  // in the export
  std::uint64_t strings = 0;
  std::uint32_t size = 0;
  std::uint32_t text_size = 0;  // the text's size (a snapshot's line without its trailing \r)
  std::uint32_t tool_id_count = 0;
  Source source = Source::kLine;
  bool compact = false;  // the text has no line break: written as it is
  bool has_parent = false;
  bool compaction = false;
  ChatRole role = ChatRole::kNone;  // a message's
};
static_assert(sizeof(RawLine) <= 40, "a raw line per session line: keep it small");

// One line of the converted session after the header, as compaction anchors
// need it. There is one per message, so its tool call ids are kept in one
// string (ThreadConverter::tool_ids_), each as a 4-byte length and its bytes.
struct Item {
  std::uint64_t ids_begin = 0;
  std::uint32_t id_count = 0;  // an assistant's tool calls, or a tool result's one toolCallId
  bool is_user_turn = false;   // a chat user (or its pi.user) turn
  bool is_tool_result = false;
};

class ThreadConverter {
 public:
  ThreadConverter(const ThreadDocument& doc, const std::string& file, const ThreadOptions& options,
                  ConvertedThread& out)
      : doc_(doc), file_(file), options_(options), out_(out) {}

  void run();
  // Appends the summaries of the warnings not listed (FindingsList), once
  // run() or read_only() is done.
  void close_findings() { listed_.close(); }
  // Reads the entries and stops before planning (read_thread_fast).
  std::vector<ReadEntry> read_only();
  // The session written to out_.session instead of the spool (no spool given).
  bool in_memory() const { return !options_.spool; }

 private:
  void error(const std::string& path, std::size_t offset, const std::string& message) {
    add(Severity::kError, path, offset, message);
  }
  void warn(const std::string& path, std::size_t offset, const std::string& message) {
    add(Severity::kWarning, path, offset, message);
  }
  void add(Severity severity, const std::string& path, std::size_t offset, const std::string& message) {
    listed_.add(diagnostic(severity, path, offset, message));
  }
  Diagnostic diagnostic(Severity severity, const std::string& path, std::size_t offset,
                        const std::string& message) const {
    std::uint64_t line = 0, column = 0;
    doc_.position(offset, line, column);
    return thread_export_diagnostic(severity, file_, line, column, path, message);
  }

  // What checking one entry gives besides its envelope (see check_entry):
  // the id and the messages are in the checker's lists.
  struct EntryCheck {
    std::uint64_t id_begin = 0;  // the id: Checker::ids from id_begin
    std::uint32_t id_size = 0;
    std::uint32_t before_id = 0;  // the next this many Checker::diagnostics: the entry has no usable id
    std::uint32_t after_id = 0;   // then this many, reported unless the id turns out to be a duplicate
    bool has_id = false;
    bool has_seq = false;
    bool accepted = false;
    const char* repair = nullptr;  // counted with after_id
    std::size_t id_at = 0;         // where its id is, for a duplicate's message
  };
  // What the checks refer to, refilled for each entry.
  struct Checker {
    std::string ids;
    Diagnostics diagnostics;
    // An entry's members, its payload's and its message's, refilled for
    // each entry in place: nothing allocated per entry.
    std::vector<MemberSpan> entry_members, payload_members, message_members;
    std::string scratch;  // an escaped string's text (ThreadDocument::string_text)
  };
  // Fills `e` (its index and ref set), except its id, and its plan facts
  // (their values go to `plan_values`).
  void check_entry(Envelope& e, EntryCheck& c, Checker& checker, PlanFacts& facts, std::string& plan_values) const;
  bool check_pi_message(Envelope& e, EntryCheck& c, Checker& checker, const std::string& payload_path, PlanFacts& facts,
                        std::string& plan_values) const;
  void take_plan_facts(const Envelope& e, const std::vector<MemberSpan>& entry_members,
                       const std::vector<MemberSpan>& message_members, PlanFacts& facts,
                       std::string& plan_values) const;
  // A message about the entry being checked, counted in `count` (EntryCheck::before_id or after_id).
  void note(Checker& checker, std::uint32_t& count, Severity severity, const std::string& path, std::size_t offset,
            const std::string& message) const {
    checker.diagnostics.push_back(diagnostic(severity, path, offset, message));
    ++count;
  }
  bool read_thread_header(JsonRef root);
  bool read_envelopes();
  // Envelope positions by id; positions change when envelopes are sorted
  // or dropped, so an index holds only between those.
  struct IdAtPosition {
    const ThreadConverter* converter;
    std::string_view operator()(std::uint32_t pos) const { return converter->id_of(converter->envs_[pos]); }
  };
  using EnvelopesById = IndexByKey<IdAtPosition, std::hash<std::string_view>>;
  EnvelopesById envelopes_by_id() const;  // every envelope's, ids unique by then
  RuleEntries rule_entries() const;
  // Each entry's message role and timestamp (RuleEntry::message_key), for X4.
  std::vector<std::string> message_keys() const;
  void plan(const EnvelopesById& by_id);
  void count_repair(const char* kind, std::uint64_t count);
  void emit_all();
  std::string entry_timestamp(const Envelope& e, JsonRef message);
  std::string message_ms(const Envelope& e, JsonRef message);
  // The message lines of envelope `env`, emitted: the message's bytes with
  // `edits` applied. A compact message is written straight into the session
  // text (its bytes copied once), naming the runs it copies unchanged from
  // the export when the spool borrows them.
  void emit_assistant(std::size_t env);
  // An assistant message's line, with `edits`, and its item's call ids; its
  // model is read only if a later line asks for it (read_last_model).
  void settle_assistant(std::size_t env, const ByteEdits& edits, std::string_view msg,
                        const std::vector<std::string>& call_ids);
  void emit_tool_result(std::size_t env);
  void emit_message(std::size_t env, const ByteEdits& edits, std::string_view msg);
  static std::string message_line(std::string_view timestamp, std::string_view message);
  std::string chat_user_line(const Envelope& e);
  std::string chat_assistant_line(const Envelope& e);
  std::string partial_line(const std::vector<std::size_t>& group);
  void resume_model(std::string& api, std::string& provider, std::string& model);
  std::string compaction_line(std::size_t env_pos, std::size_t item_pos, bool& skipped);
  // The first `count` items, as R9 reads them.
  struct LinesSoFar final : thread_rules::ConvertedLines {
    LinesSoFar(const ThreadConverter& c, std::size_t n) : converter(c), count(n) {}
    std::size_t size() const override { return count; }
    bool is_user_turn(std::size_t line) const override { return converter.items_[line].is_user_turn; }
    bool is_tool_result(std::size_t line) const override { return converter.items_[line].is_tool_result; }
    std::vector<std::string_view> tool_call_ids(std::size_t line) const override {
      return converter.tool_ids_of(converter.items_[line]);
    }
    const ThreadConverter& converter;
    std::size_t count;
  };
  std::string text_of(std::size_t env) const;  // thread_rules::TextOf
  // Members and elements of the value at `at` inside a message whose bytes
  // start at document offset `base`, with offsets relative to the message:
  // walked through the document, so tool output and images are stepped over.
  std::vector<MemberSpan> members_at(std::size_t base, std::size_t at) const;
  // The same into `out`, reusing its memory.
  void members_at_into(std::size_t base, std::size_t at, std::vector<MemberSpan>& out) const;
  std::vector<ElementSpan> elements_at(std::size_t base, std::size_t at) const;
  void model_of(JsonRef message, std::string& api, std::string& provider, std::string& model);
  // `compact`: the line is known to have no whitespace outside strings.
  void push(std::size_t env, std::string line, bool compact = false);
  void emit_line(std::string_view line, bool compact = false);
  // Where the next line goes (the spool's block, or the session text),
  // after handing over a block that `size_hint` more bytes would overfill;
  // close_line ends the line begun at `start` there.
  std::string& open_line(std::size_t size_hint);
  void close_line(std::size_t start);
  // The item of envelope `env`, whose line was just emitted.
  void record_item(std::size_t env);
  ThreadOrigin origin_of(const Envelope& e) const;
  void flush_spool();

  const ThreadDocument& doc_;
  const std::string& file_;
  const ThreadOptions& options_;
  ConvertedThread& out_;
  FindingsList listed_{out_.diagnostics};  // an export of a million skipped entries lists a hundred
  // Each phase says which entry it reads, so the pages behind can go (fast path).
  PageWindow pages_;
  void reading(const Envelope& e) {
    pages_.reading(e.kind == Kind::kRawLine ? raw_lines_[e.raw_line()].at : e.ref().begin);
  }
  SpoolBlock spool_block_;                    // lines not yet handed to options_.spool
  std::vector<ByteEdits::CopiedRun> copied_;  // a message line's, reused
  std::vector<MemberSpan> block_members_;     // a content block's, reused
  std::string ids_;  // the envelopes' ids, one after another (a string each would cost 64 bytes)
  std::string_view id_of(const Envelope& e) const { return std::string_view(ids_).substr(e.id_begin, e.id_size); }
  JsonRef thread_;
  std::vector<Envelope> envs_;
  std::vector<Item> items_;
  // Each entry's plan facts, by its position in the export (Envelope::index),
  // from read_envelopes until planning is done.
  std::vector<PlanFacts> plan_facts_;
  std::string plan_values_;
  const PlanFacts& facts_of(const Envelope& e) const { return plan_facts_[e.index]; }
  std::string_view plan_value(const Envelope& e) const {
    const PlanFacts& f = facts_of(e);
    return std::string_view(plan_values_).substr(f.value_begin, f.value_size);
  }
  std::string tool_ids_;  // see Item
  void add_tool_id(std::string_view id);
  std::vector<std::string_view> tool_ids_of(const Item& item) const;
  std::vector<std::int32_t> item_of_env_;
  std::vector<std::uint8_t> dropped_;      // per envelope: produces nothing
  std::vector<std::int32_t> replaced_by_;  // chat user -> pi.user envelope
  std::vector<std::vector<std::size_t>> partial_groups_;
  std::unordered_map<std::size_t, std::size_t> partial_at_;  // envelope pos -> group
  std::string last_ts_;
  // The last pi.assistant emitted so far, whose model a chat assistant
  // turn, a rebuilt stream and the trailer take: read when asked for.
  std::int64_t last_assistant_ = -1;
  bool last_model_read_ = true;
  void read_last_model();
  std::string last_api_, last_provider_, last_model_;
  // What a compaction's anchor names, found while every envelope is there
  // (see drop_envelopes_that_give_nothing), by the compaction's position.
  struct CompactionRefs {
    std::int64_t first_kept_ref = -1;  // the earlier envelope firstKeptRef names, or -1
    bool ref_kept = true;              // false: it was dropped, and first_kept_ref is the next kept one
    std::int64_t pi_entry = -1;        // the last envelope whose piEntryId is result.firstKeptEntryId, or -1
  };
  std::unordered_map<std::size_t, CompactionRefs> compaction_refs_;
  void resolve_compaction_refs(const EnvelopesById& by_id);
  void drop_envelopes_that_give_nothing();

  // Raw pi entries (raw_thread.cc, X1-X7): each pi.entry and pi.snapshot
  // becomes one kRawLine envelope per session line it carries, which the
  // rules see beside the lossy entries; the lines are written at their
  // place, and each line is linked as it is written (X5, X6).
  bool raw_ = false;                // the export carries raw entries
  std::vector<RawLine> raw_lines_;  // by Envelope::raw_line()
  std::string raw_strings_;         // see RawLine::Text
  std::string_view raw_string(const RawLine& r, std::uint32_t k) const;
  std::string_view raw_id(const RawLine& r) const { return raw_string(r, RawLine::kId); }
  std::string raw_header_;  // the session header a raw entry carried (X2), or ""
  ThreadOrigin raw_header_origin_;
  std::unordered_map<std::string, std::size_t> raw_line_of_id_;  // X3: the raw lines carried so far, by id
  bool lossy_at_end_ = false;  // a lossy entry no raw one covers comes after the last raw line (X5)
  bool expand_raw_entries();
  bool expand_snapshot(const Envelope& e, std::vector<Envelope>& rows);
  bool take_raw_line(const Envelope& e, std::size_t at, std::string line, const std::string& where, RawLine r,
                     std::vector<Envelope>& into);
  std::string raw_payload_line(const Envelope& e, std::size_t& at, std::string& where, RawLine& r);
  // The text of a raw line, read again from the export.
  void raw_text(const RawLine& r, std::string& out) const;
  std::string raw_scratch_;    // emit_raw_line's, reused
  std::string parse_scratch_;  // take_raw_line's, reused
  void emit_raw_line(std::size_t env);
  // Whether the trailer (R12) is written: always for a lossy export; for
  // one with raw entries, only when a lossy entry comes after the last of them.
  bool wants_trailer() const;
  // Linking as the lines are written (X5, X6): the session header first,
  // then each lossy line gets a fresh id and the one before it as parent
  // (link_lossy_line); each raw line keeps its own, reattached when its
  // parent is not in the export.
  bool linking_ = false;
  bool raw_line_open_ = false;         // the line being closed is a raw line: linked by emit_raw_line
  std::vector<std::string> line_ids_;  // each line's id so far (the header's is "")
  // The parents no raw line has as id, and the fresh ids so far: a fresh
  // id is none of them, nor a raw line's (raw_line_of_id_).
  std::unordered_set<std::string> taken_ids_;
  std::uint64_t link_seed_ = 0;   // fresh ids are drawn from the thread's id
  std::size_t run_start_ = 0;     // the first line of the lossy run being linked, or 0
  std::uint64_t rebuilt_ = 0;     // lines rebuilt by the lossy rules (X5)
  Diagnostics link_diagnostics_;  // reported after the conversion's own, in line order
  FindingsList link_listed_{link_diagnostics_};
  void start_linking();
  void link_lossy_line(std::string& target, std::size_t start);
  void end_lossy_run();
  void finish_linking();
};

}  // namespace thread_converter
}  // namespace pihydrate
