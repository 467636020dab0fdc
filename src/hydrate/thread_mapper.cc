// convert_thread_export: the mapping rules of docs/thread-export.md (R1-R15)
// from a thread export to a linear session in pi's line format. Tool-call
// pairing, ids and writing are left to hydrate_session, which treats the
// result like any other session (a v1-shaped file: no ids, one chain).
#include <algorithm>
#include <charconv>
#include <cstring>
#include <cctype>
#include <functional>
#include <map>
#include <cstdio>
#include <ctime>
#include <exception>
#include <thread>
#include <unordered_map>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "core/index_by_key.h"
#include "hydrate/thread_document.h"
#include "pihydrate/errors.h"
#include "pihydrate/formats.h"
#include "pihydrate/thread_export.h"

namespace pihydrate {
namespace {

constexpr const char* kZeroUsage =
    "{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0,"
    "\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}";

// ISO-8601 for epoch milliseconds, or "" when the time has no four-digit year.
std::string iso_from_ms(std::int64_t ms) {
  constexpr std::int64_t kMaxMs = 253402300799999;  // 9999-12-31T23:59:59.999Z
  if (ms < -62167219200000 || ms > kMaxMs) return {};  // before year 0 or after 9999
  std::int64_t secs64 = ms / 1000, rem = ms % 1000;
  if (rem < 0) rem += 1000, secs64 -= 1;  // floor division
  std::time_t secs = static_cast<std::time_t>(secs64);
  std::tm tm{};
  if (!gmtime_r(&secs, &tm)) return {};
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(rem));
  return buf;
}

// Milliseconds of an ISO-8601 time (UTC or with an offset); -1 if it is not one.
std::int64_t ms_from_iso(const std::string& t) {
  if (!is_iso8601(t)) return -1;
  std::tm tm{};
  tm.tm_year = std::stoi(t.substr(0, 4)) - 1900;
  tm.tm_mon = std::stoi(t.substr(5, 2)) - 1;
  tm.tm_mday = std::stoi(t.substr(8, 2));
  tm.tm_hour = std::stoi(t.substr(11, 2));
  tm.tm_min = std::stoi(t.substr(14, 2));
  tm.tm_sec = std::stoi(t.substr(17, 2));
  std::int64_t ms = static_cast<std::int64_t>(timegm(&tm)) * 1000;
  std::size_t i = 19;
  if (i < t.size() && t[i] == '.') {
    std::string frac;
    for (++i; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i) frac += t[i];
    frac = (frac + "000").substr(0, 3);
    ms += std::stoi(frac);
  }
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) {
    int offset = (std::stoi(t.substr(i + 1, 2)) * 60 + std::stoi(t.substr(i + 4, 2))) * 60000;
    ms -= t[i] == '+' ? offset : -offset;
  }
  return ms;
}

// An integer that fits in 64 bits (JSON allows any length).
bool parse_int64(std::string_view s, std::int64_t& value) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size();
}


std::string normalize_space(const std::string& s) {
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

// The entry kinds the mapper reads (others are skipped with a warning).
// kSkipped: an entry whose id was read but which gives nothing; it is kept
// only until every id has been checked for duplicates.
enum class Kind : std::uint8_t { kUnknown, kChat, kPiUser, kPiAssistant, kPiToolResult, kPiChunk, kPiCompaction, kSkipped };

Kind kind_of(std::string_view text) {
  if (text == "chat") return Kind::kChat;
  if (text == "pi.user") return Kind::kPiUser;
  if (text == "pi.assistant") return Kind::kPiAssistant;
  if (text == "pi.tool_result" || text == "pi.tool-result") return Kind::kPiToolResult;
  if (text == "pi.chunk") return Kind::kPiChunk;
  if (text == "pi.compaction") return Kind::kPiCompaction;
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
    case Kind::kUnknown:
    case Kind::kSkipped: break;
  }
  return "unknown";
}

// Runs `beside` on a second thread while `here` runs on this one, and
// returns once both are done; an exception from either is rethrown (this
// thread's first). `beside` must touch nothing `here` writes.
template <typename Beside, typename Here>
void run_beside(Beside beside, Here here) {
  std::exception_ptr beside_error;
  std::thread helper([&] {
    try {
      beside();
    } catch (...) {
      beside_error = std::current_exception();
    }
  });
  try {
    here();
  } catch (...) {
    helper.join();  // it uses this frame
    throw;
  }
  helper.join();
  if (beside_error) std::rethrow_exception(beside_error);
}

// Hands the heap memory freed so far back to the system. glibc keeps what a
// thread's arena freed mapped (the planning helpers', tens of MiB on a big
// export), and the next phase grows on the main thread: without this, the
// two would add up in the peak RSS.
void return_freed_heap() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

// One entry of the export. A big export has hundreds of thousands of them,
// all held until the end, so an envelope is 64 bytes: what can be derived
// (the path) is not stored, and the values inside the entry are offsets
// from its start (an entry is under 4 GiB; read_envelopes checks).
struct Envelope {
  std::uint64_t ref_begin = 0;
  std::uint64_t id_begin = 0;  // its id: Mapper::ids_ from id_begin (see Mapper::id_of)
  std::int64_t order_key = 0;
  std::uint32_t index = 0;     // position in the export
  std::uint32_t ref_size = 0;
  std::uint32_t id_size = 0;
  Kind kind = Kind::kChat;

  JsonRef ref() const { return {ref_begin, ref_begin + ref_size}; }
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
  JsonRef inside(Part p) const { return p.size == 0 ? JsonRef{} : JsonRef{ref_begin + p.at, ref_begin + p.at + p.size}; }
  Part part(JsonRef value) const {
    if (!value.valid()) return {};
    return {static_cast<std::uint32_t>(value.begin - ref_begin), static_cast<std::uint32_t>(value.end - value.begin)};
  }
  Part payload_, message_, ts_;
};
static_assert(sizeof(Envelope) == 64, "an envelope per export entry: keep it small");

// One line of the converted session after the header, as compaction anchors
// need it. There is one per message, so its tool call ids are kept in one
// string (Mapper::tool_ids_), each as a 4-byte length and its bytes.
struct Item {
  std::uint64_t ids_begin = 0;
  std::uint32_t id_count = 0;   // an assistant's tool calls, or a tool result's one toolCallId
  bool is_user_turn = false;    // a chat user (or its pi.user) turn
  bool is_tool_result = false;
};

class Mapper {
 public:
  Mapper(const ThreadDocument& doc, const std::string& file, const ThreadOptions& options, ConvertedThread& out)
      : doc_(doc), file_(file), options_(options), out_(out) {}

  void run();

 private:
  void error(const std::string& path, std::size_t offset, const std::string& message) {
    add(Severity::kError, path, offset, message);
  }
  void warn(const std::string& path, std::size_t offset, const std::string& message) {
    add(Severity::kWarning, path, offset, message);
  }
  void add(Severity severity, const std::string& path, std::size_t offset, const std::string& message) {
    out_.diagnostics.push_back(diagnostic(doc_, severity, path, offset, message));
  }
  Diagnostic diagnostic(const ThreadDocument& doc, Severity severity, const std::string& path, std::size_t offset,
                        const std::string& message) const {
    Diagnostic d;
    d.code = severity == Severity::kError ? Code::kThreadExportInvalid : Code::kThreadEntrySkipped;
    d.severity = severity;
    d.level = Level::kLoad;
    d.file = file_;
    doc.position(offset, d.line, d.column);
    d.message = path.empty() ? message : path + ": " + message;
    return d;
  }

  // What checking one entry gives besides its envelope (see check_entry).
  // The second half's checks wait for the first half's, so they are small:
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
  // What one thread's checks refer to, in entry order.
  struct Checker {
    std::string ids;
    Diagnostics diagnostics;
  };
  // Fills `e` (its index and ref set), except its id.
  void check_entry(const ThreadDocument& doc, Envelope& e, EntryCheck& c, Checker& checker) const;
  bool read_envelopes();
  void plan_echoes_and_user_replacements();
  // What plan_chunk_groups found, kept apart while it runs beside the echo plan.
  struct ChunkFindings {
    std::map<std::string, std::uint64_t> repairs;
    Diagnostics diagnostics;
  };
  void plan_chunk_groups(const ThreadDocument& doc, ChunkFindings& found);
  void plan_echoes_and_chunks();
  void emit_all();
  std::string entry_timestamp(const Envelope& e, JsonRef message);
  std::string message_ms(const Envelope& e, JsonRef message);
  std::string assistant_line(const Envelope& e);
  std::string tool_result_line(const Envelope& e);
  std::string chat_user_line(const Envelope& e);
  std::string chat_assistant_line(const Envelope& e);
  std::string partial_line(const std::vector<std::size_t>& group);
  void resume_model(std::string& api, std::string& provider, std::string& model);
  std::string compaction_line(std::size_t env_pos, std::size_t item_pos, bool& skipped);
  std::string text_of_message(JsonRef message);
  // Members and elements of the value at `at` inside a message whose bytes
  // start at document offset `base`, with offsets relative to the message:
  // walked through the document, so tool output and images are stepped over.
  std::vector<MemberSpan> members_at(std::size_t base, std::size_t at) const;
  std::vector<ElementSpan> elements_at(std::size_t base, std::size_t at) const;
  void model_of(JsonRef message, std::string& api, std::string& provider, std::string& model);
  // `compact`: the line is known to have no whitespace outside strings.
  void push(std::size_t env, std::string line, bool compact = false);
  void emit_line(std::string_view line, bool compact = false);
  void flush_spool();

  const ThreadDocument& doc_;
  const std::string& file_;
  const ThreadOptions& options_;
  ConvertedThread& out_;
  std::string spool_buffer_;  // lines not yet handed to options_.spool
  std::string ids_;           // the envelopes' ids, one after another (a string each would cost 64 bytes)
  std::string_view id_of(const Envelope& e) const { return std::string_view(ids_).substr(e.id_begin, e.id_size); }
  JsonRef thread_;
  std::vector<Envelope> envs_;
  std::vector<Item> items_;
  std::string tool_ids_;  // see Item
  void add_tool_id(std::string_view id);
  std::vector<std::string_view> tool_ids_of(const Item& item) const;
  std::vector<std::int32_t> item_of_env_;
  std::vector<std::uint8_t> dropped_;           // per envelope: produces nothing
  std::vector<std::int32_t> replaced_by_;       // chat user -> pi.user envelope
  std::vector<std::vector<std::size_t>> partial_groups_;
  std::unordered_map<std::size_t, std::size_t> partial_at_;  // envelope pos -> group
  std::string last_ts_;
  std::string last_api_, last_provider_, last_model_;
  // What a compaction's anchor names, found while every envelope is there
  // (see drop_envelopes_that_give_nothing), by the compaction's position.
  struct CompactionRefs {
    std::int64_t first_kept_ref = -1;  // the earlier envelope firstKeptRef names, or -1
    bool ref_kept = true;              // false: it was dropped, and first_kept_ref is the next kept one
    std::int64_t pi_entry = -1;        // the last envelope whose piEntryId is result.firstKeptEntryId, or -1
  };
  std::unordered_map<std::size_t, CompactionRefs> compaction_refs_;
  void resolve_compaction_refs();
  void drop_envelopes_that_give_nothing();
};

// One entry of the export, checked through `doc` without touching the
// mapper's state: whether it is accepted, and what to report, depend only on
// the entry, except for duplicate ids and missing seqs, which read_envelopes
// settles in entry order.
void Mapper::check_entry(const ThreadDocument& doc, Envelope& e, EntryCheck& c, Checker& checker) const {
  auto fail = [&](std::uint32_t& count, Severity severity, const std::string& path, std::size_t offset,
                  const std::string& message) {
    checker.diagnostics.push_back(diagnostic(doc, severity, path, offset, message));
    ++count;
  };
  if (doc.kind(e.ref()) != RefKind::kObject) {
    fail(c.before_id, Severity::kError, e.path(), e.ref().begin, "expected an object");
    return;
  }
  const auto em = doc.members(e.ref());  // read the envelope once
  JsonRef id = ThreadDocument::find(em, "id");
  if (doc.kind(id) != RefKind::kString || doc.string_value(id).empty()) {
    fail(c.before_id, Severity::kError, e.path() + ".id", id.valid() ? id.begin : e.ref().begin,
         id.valid() ? "expected a non-empty string" : "missing");
    return;
  }
  const std::string id_text = doc.string_value(id);
  c.id_begin = checker.ids.size();
  c.id_size = static_cast<std::uint32_t>(id_text.size());
  checker.ids += id_text;
  c.has_id = true;
  c.id_at = id.begin;
  auto reject = [&](const std::string& path, std::size_t offset, const std::string& message) {
    fail(c.after_id, Severity::kError, path, offset, message);
  };
  JsonRef kind = ThreadDocument::find(em, "kind");
  if (doc.kind(kind) != RefKind::kString) {
    reject(e.path() + ".kind", kind.valid() ? kind.begin : e.ref().begin, kind.valid() ? "expected a string" : "missing");
    return;
  }
  const std::string kind_text = doc.string_value(kind);
  e.kind = kind_of(kind_text);
  e.set_ts(ThreadDocument::find(em, "ts"));
  JsonRef seq = ThreadDocument::find(em, "seq");
  if (seq.valid()) {
    if (doc.kind(seq) != RefKind::kNumber || !parse_int64(doc.raw(seq), e.order_key)) {
      reject(e.path() + ".seq", seq.begin, "expected an integer of at most 64 bits");
      return;
    }
    c.has_seq = true;
  }
  e.set_payload(ThreadDocument::find(em, "data"));
  if (!e.payload().valid()) e.set_payload(ThreadDocument::find(em, "payload"));
  // Messages name `data` (the documented name) unless the entry uses the `payload` alias.
  const std::string payload_path = e.path() + "." + (ThreadDocument::find(em, "payload").valid() && !ThreadDocument::find(em, "data").valid() ? "payload" : "data");
  if (e.kind == Kind::kPiAssistant || e.kind == Kind::kPiToolResult || e.kind == Kind::kPiUser) {
    if (doc.kind(e.payload()) != RefKind::kObject) {
      reject(payload_path, e.payload().valid() ? e.payload().begin : e.ref().begin,
            e.payload().valid() ? "expected an object" : "missing");
      return;
    }
    // A payload whose role is set is itself the message.
    const auto pm = doc.members(e.payload());
    e.set_message(ThreadDocument::find(pm, "role").valid() ? e.payload() : ThreadDocument::find(pm, "message"));
    if (doc.kind(e.message()) != RefKind::kObject) {
      reject(payload_path + ".message", e.message().valid() ? e.message().begin : e.payload().begin,
            e.message().valid() ? "expected an object" : "missing");
      return;
    }
    const char* want = e.kind == Kind::kPiAssistant ? "assistant" : e.kind == Kind::kPiToolResult ? "toolResult" : "user";
    const JsonRef role_ref = ThreadDocument::find(e.message().begin == e.payload().begin ? pm : doc.members(e.message()), "role");
    std::string role = doc.string_value(role_ref);
    if (role != want) {
      reject(payload_path + ".message.role", role_ref.valid() ? role_ref.begin : e.message().begin,
            "expected \"" + std::string(want) + "\" for a " + kind_name(e.kind) + " entry, found " +
                (role.empty() ? std::string("none") : quote_for_message(role)));
      return;
    }
  } else if (e.kind == Kind::kChat) {
    std::string role = doc.string_value(ThreadDocument::find(em, "role"));
    if (role != "user" && role != "assistant" && role != "system") {
      reject(e.path() + ".role", e.ref().begin, "expected \"user\", \"assistant\" or \"system\"");
      return;
    }
    if (doc.kind(ThreadDocument::find(em, "text")) != RefKind::kString) {
      reject(e.path() + ".text", e.ref().begin, "missing (a chat entry needs its text)");
      return;
    }
  } else if (e.kind == Kind::kPiChunk) {
    if (doc.kind(doc.member(e.payload(), "event")) != RefKind::kObject) {
      fail(c.after_id, Severity::kWarning, e.path(), e.ref().begin, "pi.chunk without data.event; skipped");
      c.repair = "skipped-chunk-without-event";
      return;
    }
  } else if (e.kind == Kind::kPiCompaction) {
    if (doc.kind(e.payload()) != RefKind::kObject) {
      reject(payload_path, e.payload().valid() ? e.payload().begin : e.ref().begin,
            e.payload().valid() ? "expected an object" : "missing");
      return;
    }
  } else {
    fail(c.after_id, Severity::kWarning, e.path() + ".kind", kind.begin,
         "unknown kind " + quote_for_message(kind_text) + "; the entry is skipped");
    c.repair = "skipped-unknown-kind";
    return;
  }
  c.accepted = true;
}

bool Mapper::read_envelopes() {
  JsonRef root = doc_.root();
  JsonRef format = doc_.member(root, "format");
  if (doc_.kind(format) != RefKind::kString || doc_.string_value(format) != "thread-export") {
    error("format", format.valid() ? format.begin : root.begin,
          format.valid() ? "expected \"thread-export\", found " + std::string(doc_.raw(format).substr(0, 40))
                         : "missing (expected \"thread-export\")");
    return false;
  }
  JsonRef version = doc_.member(root, "version");
  if (doc_.kind(version) != RefKind::kNumber || doc_.raw(version) != "1") {
    error("version", version.valid() ? version.begin : root.begin,
          version.valid() ? "expected 1, found " + std::string(doc_.raw(version).substr(0, 40))
                          : "missing (expected 1)");
    return false;
  }
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
  std::vector<JsonRef> entries;
  if (doc_.is_jsonl()) {
    entries = doc_.jsonl_entries();
  } else {
    JsonRef array = doc_.member(root, "entries");
    if (doc_.kind(array) != RefKind::kArray) {
      error("entries", array.valid() ? array.begin : root.begin, array.valid() ? "expected an array" : "missing");
      return false;
    }
    entries = doc_.elements(array);
  }
  // Each entry is checked on its own, the second half on the second core
  // through a reader of its own; duplicates, the order keys of entries
  // without a seq and every message are then settled in entry order. Every
  // envelope is filled in place: envs_[i] for entry i, moved down to the
  // next kept slot when settled (never past a slot still to be settled).
  const std::size_t n = entries.size();
  if (n >= static_cast<std::size_t>(INT32_MAX)) {  // entries and lines are counted in 32 bits
    error("entries", root.begin, "more than " + std::to_string(INT32_MAX - 1) + " entries");
    return false;
  }
  envs_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (entries[i].end - entries[i].begin > UINT32_MAX) {
      error("entries[" + std::to_string(i) + "]", entries[i].begin, "larger than 4 GiB (entries are read as 32-bit offsets)");
      return false;
    }
    envs_[i].index = static_cast<std::uint32_t>(i);
    envs_[i].ref_begin = entries[i].begin;
    envs_[i].ref_size = static_cast<std::uint32_t>(entries[i].end - entries[i].begin);
  }
  out_.entry_count = n;
  std::vector<JsonRef>().swap(entries);
  // The ids settled so far (kept entries, and skipped ones until the end,
  // for duplicates), found by open addressing over envs_ positions.
  std::size_t kept = 0;
  auto id_at_slot = [this](std::uint32_t slot) { return id_of(envs_[slot]); };
  IndexByKey<decltype(id_at_slot), std::hash<std::string_view>> seen(n, id_at_slot);
  bool any_seq = false, any_skipped = false;
  std::int64_t last_order_key = 0;  // the last accepted entry's
  auto settle = [&](std::size_t i, const EntryCheck& c, const Checker& checker, std::size_t& next_diagnostic) {
    auto report = [&](std::uint32_t count) {
      out_.diagnostics.insert(out_.diagnostics.end(), checker.diagnostics.begin() + static_cast<std::ptrdiff_t>(next_diagnostic),
                              checker.diagnostics.begin() + static_cast<std::ptrdiff_t>(next_diagnostic + count));
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
      error(slot.path() + ".id", c.id_at, "duplicate id " + quote_for_message(id) + " (first used by entries[" +
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
      if (!c.has_seq) slot.order_key = last_order_key;  // stays after its predecessor
      last_order_key = slot.order_key;
    }
    ++kept;
  };
  auto check_and_settle = [&](std::size_t from, std::size_t to) {
    Checker checker;
    for (std::size_t i = from; i < to; ++i) {
      EntryCheck c;
      checker.ids.clear();
      checker.diagnostics.clear();
      check_entry(doc_, envs_[i], c, checker);
      std::size_t next_diagnostic = 0;
      settle(i, c, checker, next_diagnostic);
    }
  };
  if (n < options_.two_threads_from) {
    check_and_settle(0, n);
  } else {
    const std::size_t half = n / 2;
    std::vector<EntryCheck> second_half(n - half);
    Checker second_checker;
    const ThreadDocument second_reader = doc_.second_reader();
    run_beside(
        [&] {
          for (std::size_t i = half; i < n; ++i) check_entry(second_reader, envs_[i], second_half[i - half], second_checker);
        },
        [&] { check_and_settle(0, half); });
    std::size_t next_diagnostic = 0;
    for (std::size_t i = half; i < n; ++i) settle(i, second_half[i - half], second_checker, next_diagnostic);
  }
  envs_.resize(kept);
  if (any_skipped) envs_.erase(std::remove_if(envs_.begin(), envs_.end(), [](const Envelope& e) { return e.kind == Kind::kSkipped; }), envs_.end());
  if (!out_.ok()) return false;
  if (any_seq) {
    std::stable_sort(envs_.begin(), envs_.end(),
                     [](const Envelope& a, const Envelope& b) { return a.order_key < b.order_key; });
  }
  return true;
}

std::string Mapper::text_of_message(JsonRef message) {
  JsonRef content = doc_.member(message, "content");
  if (doc_.kind(content) == RefKind::kString) return doc_.string_value(content);
  std::string text;
  for (JsonRef block : doc_.elements(content)) {
    if (doc_.string_value(doc_.member(block, "type")) != "text") continue;
    text += doc_.string_value(doc_.member(block, "text"));
    text += "\n";
  }
  return text;
}

void Mapper::model_of(JsonRef message, std::string& api, std::string& provider, std::string& model) {
  api = doc_.string_value(doc_.member(message, "api"));
  provider = doc_.string_value(doc_.member(message, "provider"));
  model = doc_.string_value(doc_.member(message, "model"));
}

// R3 (pi.user replaces the chat turn it duplicates) and R7 (echoes).
void Mapper::plan_echoes_and_user_replacements() {
  const std::size_t n = envs_.size();
  // Envelope positions by id (ids are unique by now).
  auto id_at = [this](std::uint32_t pos) { return id_of(envs_[pos]); };
  IndexByKey<decltype(id_at), std::hash<std::string_view>> pos_of_id(n, id_at);
  for (std::size_t i = 0; i < n; ++i) pos_of_id.put(static_cast<std::uint32_t>(i));
  // Each envelope's chat role, read once: the turn scans below look at many
  // envelopes per chat turn, and reading a member walks the whole entry.
  enum class ChatRole : std::uint8_t { kNone, kUser, kAssistant, kOther };
  std::vector<ChatRole> roles(n, ChatRole::kNone);
  for (std::size_t i = 0; i < n; ++i) {
    if (envs_[i].kind != Kind::kChat) continue;
    const std::string role = doc_.string_value(doc_.member(envs_[i].ref(), "role"));
    roles[i] = role == "user" ? ChatRole::kUser : role == "assistant" ? ChatRole::kAssistant : ChatRole::kOther;
  }
  auto is_chat_user = [&](std::size_t i) { return roles[i] == ChatRole::kUser; };
  // previous_user[i]: the nearest chat user turn before envelope i, or -1.
  std::vector<std::int32_t> previous_user(n, -1);
  for (std::size_t i = 1; i < n; ++i) previous_user[i] = is_chat_user(i - 1) ? static_cast<std::int32_t>(i - 1) : previous_user[i - 1];
  for (std::size_t i = 0; i < n; ++i) {
    if (envs_[i].kind != Kind::kPiUser) continue;
    std::int64_t target = -1;
    std::string chat_ref = doc_.string_value(doc_.member(envs_[i].payload(), "chatRef"));
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
    if (roles[i] != ChatRole::kAssistant) continue;
    std::string ref = doc_.string_value(doc_.member(envs_[i].ref(), "piRef"));
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
// It reads the export through `doc` (a reader of its own) and writes only
// the chunks' flags, partial_at_, partial_groups_ and `found`.
void Mapper::plan_chunk_groups(const ThreadDocument& doc, ChunkFindings& found) {
  const std::size_t n = envs_.size();
  std::unordered_map<std::string, std::vector<std::size_t>> by_key;
  std::vector<std::string> key_order;
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
  std::unordered_map<std::string, bool> final_timestamps;
  for (std::size_t i = 0; i < n; ++i)
    if (envs_[i].kind == Kind::kPiAssistant)
      final_timestamps[std::string(doc.raw(doc.member(envs_[i].message(), "timestamp")))] = true;
  for (std::size_t i = 0; i < n; ++i) {
    const Envelope& e = envs_[i];
    if (e.kind == Kind::kPiChunk) {
      dropped_[i] = 1;
      JsonRef key = doc.member(e.payload(), "streamKey");
      if (key.valid()) {
        std::string k(doc.raw(key));
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
  for (const std::string& k : key_order) {
    if (final_timestamps.count(k)) found.repairs["dropped-chunks-of-final-message"] += by_key[k].size();
    else open_runs.push_back(by_key[k]);
  }
  std::sort(open_runs.begin(), open_runs.end(),
            [](const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) { return a.back() < b.back(); });
  for (auto& group : open_runs) {
    const Envelope& last = envs_[group.back()];
    if (options_.partial == PartialPolicy::kDrop) {
      found.diagnostics.push_back(diagnostic(doc, Severity::kWarning, last.path(), last.ref().begin,
                                             "an interrupted stream of " + std::to_string(group.size()) +
                                                 " pi.chunk entries has no final pi.assistant; dropped (--partial keep|text rebuilds it)"));
      found.repairs["dropped-interrupted-stream"]++;
      continue;
    }
    partial_at_[group.back()] = partial_groups_.size();
    partial_groups_.push_back(group);
  }
}

// R3/R7 and R6 read different entries and set different flags, so the
// chunk plan runs on the second core, through a reader of its own (the
// document's caches are not shared); its findings follow the echo plan's.
void Mapper::plan_echoes_and_chunks() {
  dropped_.assign(envs_.size(), 0);
  replaced_by_.assign(envs_.size(), -1);
  ChunkFindings chunks;
  if (envs_.size() < options_.two_threads_from) {
    plan_echoes_and_user_replacements();
    plan_chunk_groups(doc_, chunks);
  } else {
    const ThreadDocument second_reader = doc_.second_reader();
    run_beside([&] { plan_chunk_groups(second_reader, chunks); }, [&] { plan_echoes_and_user_replacements(); });
  }
  for (const auto& [kind, count] : chunks.repairs) out_.repairs[kind] += count;
  out_.diagnostics.insert(out_.diagnostics.end(), chunks.diagnostics.begin(), chunks.diagnostics.end());
}

std::string Mapper::message_ms(const Envelope& e, JsonRef message) {
  JsonRef ms = doc_.member(message, "timestamp");
  if (doc_.kind(ms) == RefKind::kNumber) return std::string(doc_.raw(ms));
  if (doc_.kind(e.ts()) == RefKind::kNumber) return std::string(doc_.raw(e.ts()));
  std::int64_t from_iso = ms_from_iso(doc_.string_value(e.ts()));
  if (from_iso >= 0) return std::to_string(from_iso);
  from_iso = ms_from_iso(last_ts_);
  return std::to_string(from_iso >= 0 ? from_iso : 0);
}

std::string Mapper::entry_timestamp(const Envelope& e, JsonRef message) {
  std::string ts;
  std::int64_t ms = 0;
  if (doc_.kind(e.ts()) == RefKind::kString && is_iso8601(doc_.string_value(e.ts()))) {
    ts = doc_.string_value(e.ts());
  } else if (doc_.kind(e.ts()) == RefKind::kNumber && parse_int64(doc_.raw(e.ts()), ms)) {
    ts = iso_from_ms(ms);
  }
  if (ts.empty() && message.valid()) {
    JsonRef own = doc_.member(message, "timestamp");
    if (doc_.kind(own) == RefKind::kNumber && parse_int64(doc_.raw(own), ms)) ts = iso_from_ms(ms);
  }
  if (ts.empty()) ts = last_ts_.empty() ? out_.timestamp : last_ts_;
  last_ts_ = ts;
  return ts;
}

// R4: the verbatim AssistantMessage, with usage filled, a pending or missing
// stopReason settled, empty text blocks dropped and string content wrapped.
std::vector<MemberSpan> Mapper::members_at(std::size_t base, std::size_t at) const {
  std::vector<MemberSpan> members = doc_.members(JsonRef{base + at, base + at + 1});
  for (MemberSpan& m : members) {
    m.begin -= base;
    m.value_begin -= base;
    m.value_end -= base;
  }
  return members;
}

std::vector<ElementSpan> Mapper::elements_at(std::size_t base, std::size_t at) const {
  std::vector<ElementSpan> out;
  for (const JsonRef& el : doc_.elements(JsonRef{base + at, base + at + 1})) out.push_back({el.begin - base, el.end - base});
  return out;
}

// A message entry around `msg` with `edits` applied, built in one string
// (the message is most of the line: it is copied once).
std::string message_line(const std::string& timestamp, const ByteEdits& edits, std::string_view msg) {
  std::string line;
  line.reserve(msg.size() + timestamp.size() + 64);
  line += "{\"type\":\"message\",\"timestamp\":";
  line += json_quote(timestamp);
  line += ",\"message\":";
  edits.append_applied(line, msg);
  line += '}';
  return line;
}

std::string Mapper::assistant_line(const Envelope& e) {
  // Work on the message's own bytes so edits stay local to it.
  const std::string_view msg = doc_.raw(e.message());
  const std::size_t base = e.message().begin;
  auto members = members_at(base, 0);
  ByteEdits edits;
  auto append_member = [&](const std::string& member) {
    if (members.empty()) edits.insert(1, member);
    else edits.insert(members.back().value_end, "," + member);
  };
  const MemberSpan* content = find_member(members, "content");
  bool has_calls = false;
  if (content && msg[content->value_begin] == '[') {
    std::string rebuilt = "[";
    bool changed = false, first = true;
    for (const ElementSpan& el : elements_at(base, content->value_begin)) {
      std::string type;
      bool has_text = false, empty_text = false;
      if (msg[el.begin] == '{') {
        auto block = members_at(base, el.begin);
        if (const MemberSpan* t = find_member(block, "type"); t && msg[t->value_begin] == '"') type = json_string_value(msg, t->value_begin);
        if (const MemberSpan* t = find_member(block, "text"); t && msg[t->value_begin] == '"') {
          has_text = true;
          empty_text = t->value_end - t->value_begin == 2;  // "" (any escape is at least one character)
        }
      }
      if (type == "toolCall") has_calls = true;
      if (type == "text" && (!has_text || empty_text)) {
        changed = true;
        out_.repairs["dropped-empty-text-block"]++;
        continue;
      }
      if (!first) rebuilt += ",";
      rebuilt.append(msg.substr(el.begin, el.end - el.begin));
      first = false;
    }
    rebuilt += "]";
    if (changed) edits.replace(content->value_begin, content->value_end, rebuilt);
  } else if (content && msg[content->value_begin] == '"') {
    edits.replace(content->value_begin, content->value_end,
                  "[{\"type\":\"text\",\"text\":" + std::string(msg.substr(content->value_begin, content->value_end - content->value_begin)) + "}]");
    out_.repairs["wrapped-string-content"]++;
  } else {
    if (content) edits.replace(content->value_begin, content->value_end, "[]");
    else append_member("\"content\":[]");
    out_.repairs["wrapped-string-content"]++;
  }
  const MemberSpan* usage = find_member(members, "usage");
  if (!usage || msg[usage->value_begin] != '{') {
    if (usage) edits.replace(usage->value_begin, usage->value_end, kZeroUsage);
    else append_member(std::string("\"usage\":") + kZeroUsage);
    out_.repairs["filled-missing-usage"]++;
  } else if (!find_member(members_at(base, usage->value_begin), "cost")) {
    auto usage_members = members_at(base, usage->value_begin);
    edits.insert(usage->value_begin + 1,
                 std::string("\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}") +
                     (usage_members.empty() ? "" : ","));
    out_.repairs["filled-missing-usage"]++;
  }
  const MemberSpan* stop = find_member(members, "stopReason");
  std::string stop_value = stop && msg[stop->value_begin] == '"' ? json_string_value(msg, stop->value_begin) : "";
  if (stop_value.empty() || stop_value == "pending") {
    std::string settled = has_calls ? "\"toolUse\"" : "\"stop\"";
    if (stop) edits.replace(stop->value_begin, stop->value_end, settled);
    else append_member("\"stopReason\":" + settled);
    out_.repairs["settled-pending-stop-reason"]++;
  }
  if (!find_member(members, "timestamp")) append_member("\"timestamp\":" + message_ms(e, e.message()));
  model_of(e.message(), last_api_, last_provider_, last_model_);
  return message_line(entry_timestamp(e, e.message()), edits, msg);
}

// R5: the verbatim ToolResultMessage; string content is wrapped.
std::string Mapper::tool_result_line(const Envelope& e) {
  const std::string_view msg = doc_.raw(e.message());
  auto members = members_at(e.message().begin, 0);
  ByteEdits edits;
  const MemberSpan* content = find_member(members, "content");
  if (content && msg[content->value_begin] == '"') {
    edits.replace(content->value_begin, content->value_end,
                  "[{\"type\":\"text\",\"text\":" + std::string(msg.substr(content->value_begin, content->value_end - content->value_begin)) + "}]");
    out_.repairs["wrapped-string-content"]++;
  } else if (!content || msg[content->value_begin] != '[') {
    if (content) edits.replace(content->value_begin, content->value_end, "[]");
    else edits.insert(members.empty() ? 1 : members.back().value_end, members.empty() ? "\"content\":[]" : ",\"content\":[]");
    out_.repairs["wrapped-string-content"]++;
  }
  if (!find_member(members, "timestamp"))
    edits.insert(members.empty() ? 1 : members.back().value_end,
                 std::string(members.empty() ? "" : ",") + "\"timestamp\":" + message_ms(e, e.message()));
  return message_line(entry_timestamp(e, e.message()), edits, msg);
}

// R3: a chat user turn; attachments become image blocks.
std::string Mapper::chat_user_line(const Envelope& e) {
  std::string text = doc_.string_value(doc_.member(e.ref(), "text"));
  std::vector<JsonRef> attachments = doc_.elements(doc_.member(e.ref(), "attachments"));
  std::string content;
  if (attachments.empty()) {
    content = json_quote(text);
  } else {
    content = "[";
    bool first = true;
    if (!text.empty()) {
      content += "{\"type\":\"text\",\"text\":" + json_quote(text) + "}";
      first = false;
    }
    for (std::size_t k = 0; k < attachments.size(); ++k) {
      JsonRef a = attachments[k];
      JsonRef data = doc_.member(a, "data"), mime = doc_.member(a, "mimeType");
      std::string type = doc_.string_value(doc_.member(a, "type"));
      if ((type != "image" && !type.empty()) || doc_.kind(data) != RefKind::kString || doc_.kind(mime) != RefKind::kString) {
        warn(e.path() + ".attachments[" + std::to_string(k) + "]", a.begin,
             "not an image with data and mimeType; left out");
        out_.repairs["skipped-attachment"]++;
        continue;
      }
      if (!first) content += ",";
      content += "{\"type\":\"image\",\"data\":" + std::string(doc_.raw(data)) + ",\"mimeType\":" + std::string(doc_.raw(mime)) + "}";
      first = false;
      out_.repairs["image-attachment"]++;
    }
    content += "]";
  }
  std::string ts = entry_timestamp(e, {});
  return "{\"type\":\"message\",\"timestamp\":" + json_quote(ts) + ",\"message\":{\"role\":\"user\",\"content\":" +
         content + ",\"timestamp\":" + message_ms(e, {}) + "}}";
}

// R7: a chat assistant turn that mirrors no pi.assistant becomes a text-only
// assistant message of the thread's model.
void Mapper::resume_model(std::string& api, std::string& provider, std::string& model) {
  JsonRef thread_model = doc_.member(thread_, "model");
  if (doc_.kind(thread_model) == RefKind::kObject) {
    provider = doc_.string_value(doc_.member(thread_model, "provider"));
    model = doc_.string_value(doc_.member(thread_model, "modelId"));
    api = doc_.string_value(doc_.member(thread_model, "api"));
  }
  if (provider.empty() || model.empty()) {
    api = last_api_, provider = last_provider_, model = last_model_;
  }
  if (provider.empty() || model.empty()) api = "openai-completions", provider = "pi-hydrate", model = "imported";
  if (api.empty()) api = "openai-completions";
}

std::string Mapper::chat_assistant_line(const Envelope& e) {
  std::string api, provider, model;
  resume_model(api, provider, model);
  out_.repairs["chat-assistant-as-text-message"]++;
  std::string ts = entry_timestamp(e, {});
  return "{\"type\":\"message\",\"timestamp\":" + json_quote(ts) +
         ",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":" +
         json_quote(doc_.string_value(doc_.member(e.ref(), "text"))) + "}],\"api\":" + json_quote(api) +
         ",\"provider\":" + json_quote(provider) + ",\"model\":" + json_quote(model) + ",\"usage\":" + kZeroUsage +
         ",\"stopReason\":\"stop\",\"timestamp\":" + message_ms(e, {}) + "}}";
}

// R6 --partial keep|text: rebuild an assistant message from its stream.
std::string Mapper::partial_line(const std::vector<std::size_t>& group) {
  std::map<std::int64_t, std::pair<std::string, std::string>> blocks;  // contentIndex -> (type, text or raw)
  for (std::size_t pos : group) {
    JsonRef event = doc_.member(envs_[pos].payload(), "event");
    std::string type = doc_.string_value(doc_.member(event, "type"));
    JsonRef index_ref = doc_.member(event, "contentIndex");
    std::int64_t index = 0;
    if (doc_.kind(index_ref) == RefKind::kNumber) parse_int64(doc_.raw(index_ref), index);
    if (type == "text_delta" || type == "thinking_delta") {
      auto& b = blocks[index];
      b.first = type == "text_delta" ? "text" : "thinking";
      b.second += doc_.string_value(doc_.member(event, "delta"));
    } else if ((type == "text_end" || type == "thinking_end") && doc_.kind(doc_.member(event, "content")) == RefKind::kString) {
      blocks[index] = {type == "text_end" ? "text" : "thinking", doc_.string_value(doc_.member(event, "content"))};
    } else if (type == "toolcall_end" && doc_.kind(doc_.member(event, "toolCall")) == RefKind::kObject) {
      blocks[index] = {"toolCall", std::string(doc_.raw(doc_.member(event, "toolCall")))};
    }
  }
  const bool text_only = options_.partial == PartialPolicy::kText;
  std::string content = "[";
  bool first = true;
  for (const auto& [index, block] : blocks) {
    if (text_only && block.first != "text") continue;
    if (block.first != "toolCall" && block.second.empty()) continue;
    if (!first) content += ",";
    first = false;
    if (block.first == "text") content += "{\"type\":\"text\",\"text\":" + json_quote(block.second) + "}";
    else if (block.first == "thinking") content += "{\"type\":\"thinking\",\"thinking\":" + json_quote(block.second) + "}";
    else content += block.second;
  }
  content += "]";
  const Envelope& last = envs_[group.back()];
  JsonRef key = doc_.member(last.payload(), "streamKey");
  std::string ms = doc_.kind(key) == RefKind::kNumber ? std::string(doc_.raw(key)) : message_ms(last, {});
  std::string api, provider, model;
  resume_model(api, provider, model);
  if (content == "[]") {
    warn(last.path(), last.ref().begin, "an interrupted stream has nothing to keep; dropped");
    out_.repairs["dropped-interrupted-stream"]++;
    return {};
  }
  out_.repairs[text_only ? "partial-stream-as-text" : "partial-stream-kept-aborted"]++;
  return "{\"type\":\"message\",\"timestamp\":" + json_quote(entry_timestamp(last, {})) +
         ",\"message\":{\"role\":\"assistant\",\"content\":" + content + ",\"api\":" + json_quote(api) +
         ",\"provider\":" + json_quote(provider) + ",\"model\":" + json_quote(model) + ",\"usage\":" + kZeroUsage +
         (text_only ? std::string(",\"stopReason\":\"stop\"")
                    : std::string(",\"stopReason\":\"aborted\",\"errorMessage\":\"pi-hydrate: stream interrupted\"")) +
         ",\"timestamp\":" + ms + "}}";
}

// Appends one converted line to the session text (a pretty-printed export
// must still give one line per entry) and remembers where it came from.
void Mapper::push(std::size_t env, std::string line, bool compact) {
  emit_line(line, compact);
  Item item;
  item.ids_begin = tool_ids_.size();
  items_.push_back(item);
  item_of_env_[env] = static_cast<std::int32_t>(items_.size() - 1);
  const Envelope& e = envs_[env];
  ThreadOrigin o;
  o.entry = static_cast<std::uint32_t>(e.index);
  o.id_begin = e.id_begin;  // in ids_, which becomes out_.origin_ids
  o.id_size = e.id_size;
  doc_.position(e.ref().begin, o.line, o.column);
  out_.origins.push_back(o);
}

// One line of the converted session (compacted: a pretty-printed export must
// still give one line per entry), into memory or the spool file.
void Mapper::emit_line(std::string_view line, bool compact) {
  // Blocks stay within their MiB unless one line is bigger: a string grown
  // past its capacity would double it, in every buffer the spool cycles.
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  if (options_.spool && !spool_buffer_.empty() && spool_buffer_.size() + line.size() + 1 > kBlock) flush_spool();
  if (options_.spool && spool_buffer_.capacity() < kBlock) spool_buffer_.reserve(kBlock);
  std::string& target = options_.spool ? spool_buffer_ : out_.session;
  const std::size_t before = target.size();
  if (compact) target.append(line);
  else append_compact_json(target, line);
  target += '\n';
  out_.session_bytes += target.size() - before;
  if (options_.spool && spool_buffer_.size() >= kBlock) flush_spool();
}

void Mapper::flush_spool() {
  if (options_.spool && !spool_buffer_.empty()) options_.spool(spool_buffer_);
  spool_buffer_.clear();
}

void Mapper::add_tool_id(std::string_view id) {
  const auto size = static_cast<std::uint32_t>(id.size());
  tool_ids_.append(reinterpret_cast<const char*>(&size), sizeof size);
  tool_ids_.append(id);
  items_.back().id_count++;
}

std::vector<std::string_view> Mapper::tool_ids_of(const Item& item) const {
  std::vector<std::string_view> ids;
  std::size_t at = item.ids_begin;
  for (std::uint32_t k = 0; k < item.id_count; ++k) {
    std::uint32_t size = 0;
    std::memcpy(&size, tool_ids_.data() + at, sizeof size);
    ids.push_back(std::string_view(tool_ids_).substr(at + sizeof size, size));
    at += sizeof size + size;
  }
  return ids;
}

// R9's lookups: the envelope each compaction's firstKeptRef names (an
// earlier one; ids are unique by now) and the last one whose piEntryId is
// its result.firstKeptEntryId. Found before envelopes are dropped, since
// either may name an entry that gives no line.
void Mapper::resolve_compaction_refs() {
  std::vector<std::size_t> compactions;
  bool any_pi_id = false;
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    if (envs_[i].kind != Kind::kPiCompaction || dropped_[i]) continue;
    compactions.push_back(i);
    any_pi_id = any_pi_id || !doc_.string_value(doc_.member(doc_.member(envs_[i].payload(), "result"), "firstKeptEntryId")).empty();
  }
  if (compactions.empty()) return;
  auto id_at = [this](std::uint32_t pos) { return id_of(envs_[pos]); };
  IndexByKey<decltype(id_at), std::hash<std::string_view>> pos_of_id(envs_.size(), id_at);
  for (std::size_t i = 0; i < envs_.size(); ++i) pos_of_id.put(static_cast<std::uint32_t>(i));
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

// R9: a compaction, anchored through firstKeptRef, piEntryId, the last user
// turn before it, or itself. v1's firstKeptEntryIndex counts the header as 0.
std::string Mapper::compaction_line(std::size_t pos, std::size_t item_pos, bool& skipped) {
  const Envelope& e = envs_[pos];
  JsonRef result = doc_.member(e.payload(), "result");
  JsonRef aborted = doc_.member(e.payload(), "aborted");
  skipped = false;
  if (doc_.raw(aborted) == "true" || doc_.kind(result) != RefKind::kObject ||
      doc_.kind(doc_.member(result, "summary")) != RefKind::kString) {
    const bool was_aborted = doc_.raw(aborted) == "true";
    warn(e.path(), e.ref().begin, was_aborted ? "aborted compaction skipped" : "compaction without a result summary skipped");
    out_.repairs[was_aborted ? "skipped-aborted-compaction" : "skipped-compaction-without-summary"]++;
    skipped = true;
    return {};
  }
  std::int64_t anchor = -1;
  std::string how;
  auto first_item_from = [&](std::size_t env_pos) -> std::int64_t {
    for (std::size_t j = env_pos; j < pos; ++j)
      if (item_of_env_[j] >= 0) return item_of_env_[j];
    return -1;
  };
  const CompactionRefs refs = compaction_refs_.count(pos) ? compaction_refs_.at(pos) : CompactionRefs{};
  if (!doc_.string_value(doc_.member(e.payload(), "firstKeptRef")).empty()) {
    if (refs.first_kept_ref >= 0) {
      const auto j = static_cast<std::size_t>(refs.first_kept_ref);
      const std::int64_t target = refs.ref_kept && replaced_by_[j] >= 0 ? item_of_env_[static_cast<std::size_t>(replaced_by_[j])]
                                                                         : first_item_from(j);
      if (target >= 0) anchor = target, how = "firstKeptRef";
    }
    if (anchor < 0) warn(e.path() + ".data.firstKeptRef", e.ref().begin, "names no earlier entry; falling back");
  }
  if (anchor < 0 && refs.pi_entry >= 0 && static_cast<std::size_t>(refs.pi_entry) < pos &&
      item_of_env_[static_cast<std::size_t>(refs.pi_entry)] >= 0)
    anchor = item_of_env_[static_cast<std::size_t>(refs.pi_entry)], how = "piEntryId";
  if (anchor < 0) {
    for (std::size_t k = item_pos; k-- > 0;)
      if (items_[k].is_user_turn) {
        anchor = static_cast<std::int64_t>(k), how = "last-user-turn";
        break;
      }
  }
  if (anchor >= 0) {
    // A result cannot start the kept window: keep from its assistant.
    const Item& kept = items_[static_cast<std::size_t>(anchor)];
    const std::string_view call = kept.is_tool_result ? tool_ids_of(kept).front() : std::string_view();
    if (!call.empty()) {
      for (std::int64_t k = anchor; k-- > 0;) {
        const Item& item = items_[static_cast<std::size_t>(k)];
        if (item.is_tool_result) continue;
        const std::vector<std::string_view> ids = tool_ids_of(item);
        if (std::find(ids.begin(), ids.end(), call) != ids.end()) {
          anchor = k;
          break;
        }
      }
    }
  }
  out_.repairs[anchor < 0 ? "compaction-self-anchored" : "compaction-anchored-by-" + how]++;
  std::string line = "{\"type\":\"compaction\",\"timestamp\":" + json_quote(entry_timestamp(e, {})) +
                     ",\"summary\":" + std::string(doc_.raw(doc_.member(result, "summary")));
  JsonRef tokens = doc_.member(result, "tokensBefore");
  line += ",\"tokensBefore\":" + (doc_.kind(tokens) == RefKind::kNumber ? std::string(doc_.raw(tokens)) : std::string("0"));
  JsonRef details = doc_.member(result, "details");
  if (details.valid()) line += ",\"details\":" + std::string(doc_.raw(details));
  if (anchor >= 0) line += ",\"firstKeptEntryIndex\":" + std::to_string(anchor + 1);
  return line + "}";
}

void Mapper::emit_all() {
  item_of_env_.assign(envs_.size(), -1);
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    const Envelope& e = envs_[i];
    if (auto p = partial_at_.find(i); p != partial_at_.end()) {
      std::string line = partial_line(partial_groups_[p->second]);
      if (!line.empty()) push(i, std::move(line));
    }
    if (dropped_[i]) continue;
    if (e.kind == Kind::kChat) {
      std::string role = doc_.string_value(doc_.member(e.ref(), "role"));
      if (role == "user") {
        if (replaced_by_[i] >= 0) {
          const Envelope& u = envs_[static_cast<std::size_t>(replaced_by_[i])];
          push(static_cast<std::size_t>(replaced_by_[i]),
               "{\"type\":\"message\",\"timestamp\":" + json_quote(entry_timestamp(e, u.message())) +
                   ",\"message\":" + std::string(doc_.raw(u.message())) + "}");
        } else {
          push(i, chat_user_line(e));
        }
        items_.back().is_user_turn = true;
      } else if (role == "assistant") {
        push(i, chat_assistant_line(e));
      } else {
        out_.repairs["dropped-system-chat"]++;
      }
    } else if (e.kind == Kind::kPiUser) {
      push(i, "{\"type\":\"message\",\"timestamp\":" + json_quote(entry_timestamp(e, e.message())) +
                  ",\"message\":" + std::string(doc_.raw(e.message())) + "}");
      items_.back().is_user_turn = true;
    } else if (e.kind == Kind::kPiAssistant) {
      // The message is copied verbatim around edits that add no whitespace.
      push(i, assistant_line(e), doc_.is_compact(e.message()));
      for (JsonRef block : doc_.elements(doc_.member(e.message(), "content")))
        if (doc_.string_value(doc_.member(block, "type")) == "toolCall") add_tool_id(doc_.string_value(doc_.member(block, "id")));
    } else if (e.kind == Kind::kPiToolResult) {
      push(i, tool_result_line(e), doc_.is_compact(e.message()));
      items_.back().is_tool_result = true;
      add_tool_id(doc_.string_value(doc_.member(e.message(), "toolCallId")));
    } else if (e.kind == Kind::kPiCompaction) {
      bool skipped = false;
      std::string line = compaction_line(i, items_.size(), skipped);
      if (!skipped) push(i, std::move(line));
    }
  }
}

void Mapper::run() {
  if (!read_envelopes()) return;
  JsonRef created = doc_.member(thread_, "createdAt");
  if (doc_.kind(created) == RefKind::kString && is_iso8601(doc_.string_value(created))) {
    out_.timestamp = doc_.string_value(created);
  } else if (std::int64_t ms = 0; doc_.kind(created) == RefKind::kNumber && parse_int64(doc_.raw(created), ms) &&
                                   !iso_from_ms(ms).empty()) {
    out_.timestamp = iso_from_ms(ms);
  } else {
    out_.timestamp = "1970-01-01T00:00:00.000Z";
    for (const Envelope& e : envs_) {
      Envelope copy = e;
      std::string saved = last_ts_;
      last_ts_.clear();
      std::string ts = entry_timestamp(copy, e.message());
      last_ts_ = saved;
      if (ts != "1970-01-01T00:00:00.000Z" && !ts.empty()) {
        out_.timestamp = ts;
        break;
      }
    }
  }
  const std::string thread_id = doc_.string_value(doc_.member(thread_, "id"));
  out_.session_id = derived_session_id(thread_id);
  // A v1-shaped session: no version, no ids; hydrate_session chains it.
  ThreadOrigin thread_origin;  // the thread object
  doc_.position(thread_.begin, thread_origin.line, thread_origin.column);
  if (!options_.spool) out_.session.reserve(doc_.bytes().size() + 4096);
  emit_line("{\"type\":\"session\",\"id\":" + json_quote(out_.session_id) + ",\"timestamp\":" +
            json_quote(out_.timestamp) + ",\"cwd\":\"/\"}");
  out_.origins.push_back(thread_origin);
  // Each phase walks the export front to back; what it touched may leave
  // memory when it ends (see ExportResidency).
  doc_.release_before(doc_.bytes().size());
  plan_echoes_and_chunks();
  resolve_compaction_refs();
  doc_.release_before(doc_.bytes().size());
  drop_envelopes_that_give_nothing();
  return_freed_heap();
  emit_all();

  // R12: the trailer restores the name, the model and the thinking level.
  std::vector<std::pair<std::string, ThreadOrigin>> trailer;
  if (options_.trailer) {
    std::string ts = last_ts_.empty() ? out_.timestamp : last_ts_;
    JsonRef title = doc_.member(thread_, "title");
    if (doc_.kind(title) == RefKind::kString && !doc_.string_value(title).empty())
      trailer.push_back({"{\"type\":\"session_info\",\"timestamp\":" + json_quote(ts) + ",\"name\":" + std::string(doc_.raw(title)) + "}", thread_origin});
    JsonRef model = doc_.member(thread_, "model");
    std::string provider = doc_.string_value(doc_.member(model, "provider"));
    std::string model_id = doc_.string_value(doc_.member(model, "modelId"));
    if (provider.empty() || model_id.empty()) provider = last_provider_, model_id = last_model_;
    if (!provider.empty() && !model_id.empty())
      trailer.push_back({"{\"type\":\"model_change\",\"timestamp\":" + json_quote(ts) + ",\"provider\":" + json_quote(provider) +
                             ",\"modelId\":" + json_quote(model_id) + "}", thread_origin});
    JsonRef level = doc_.member(thread_, "thinkingLevel");
    if (doc_.kind(level) == RefKind::kString)
      trailer.push_back({"{\"type\":\"thinking_level_change\",\"timestamp\":" + json_quote(ts) + ",\"thinkingLevel\":" +
                             std::string(doc_.raw(level)) + "}", thread_origin});
  }

  for (auto& [line, origin] : trailer) {
    emit_line(line);
    out_.origins.push_back(origin);
  }
  flush_spool();
  out_.origin_ids = std::move(ids_);
}

}  // namespace

std::string ConvertedThread::path_of(const ThreadOrigin& o) {
  return o.entry == ThreadOrigin::kThread ? std::string("thread") : "entries[" + std::to_string(o.entry) + "]";
}

bool ConvertedThread::ok() const {
  for (const Diagnostic& d : diagnostics)
    if (d.severity == Severity::kError) return false;
  return true;
}

ConvertedThread convert_thread_export(std::string& bytes, const std::string& file, const ThreadOptions& options) {
  return convert_thread_export(bytes.data(), bytes.size(), file, options);
}

ConvertedThread convert_thread_export(char* bytes, std::size_t size, const std::string& file,
                                      const ThreadOptions& options) {
  ConvertedThread out;
  ExportResidency* residency = options.residency;
  const std::string_view view(bytes, size);
  // Nearly every export is plain JSON without an escaped UTF-16 surrogate,
  // and the quick check proves it (it gives up on any): nothing to repair.
  // Otherwise lone surrogates are repaired first and the export read again.
  ThreadDocument doc;
  doc.set_residency(residency);
  bool parsed = doc.parse_plain(view, options.max_depth);
  if (!parsed) {
    std::function<void(std::size_t)> rewritten;
    if (residency) rewritten = [residency](std::size_t at) { residency->rewritten(at, at + 4); };
    neutralize_lone_surrogates(bytes, size, rewritten, doc.release_progress());
    if (residency) residency->release_before(size);
    doc = ThreadDocument();
    doc.set_residency(residency);
    parsed = doc.parse(view, options.max_depth);
  }
  if (!parsed) {
    Diagnostic d;
    d.code = Code::kThreadExportInvalid;
    d.severity = Severity::kError;
    d.level = Level::kLoad;
    d.file = file;
    doc.position(doc.error_offset, d.line, d.column);
    d.message = "not a thread export: invalid JSON (" + doc.error + ")";
    out.diagnostics.push_back(std::move(d));
    return out;
  }
  Mapper mapper(doc, file, options, out);
  mapper.run();
  return out;
}

}  // namespace pihydrate
