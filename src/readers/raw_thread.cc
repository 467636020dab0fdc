// The raw path of thread exports (raw_thread.h; the rules X1-X7 of
// docs/thread-export.md). An export that carries pi's own entries is read
// plainly: it is no bigger than the session pi wrote, and the converter's
// machinery for gigabyte exports is kept for the lossy kinds, which go
// through convert_thread_export one run at a time.
#include "readers/raw_thread.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/json_spans.h"
#include "pihydrate/formats.h"
#include "readers/json_object_text.h"
#include "readers/thread_converter.h"
#include "readers/thread_document.h"

namespace pihydrate {
namespace {

constexpr std::string_view kEntryKind = "pi.entry";
constexpr std::string_view kSnapshotKind = "pi.snapshot";

// One entry of the export, as the raw path needs it.
struct ExportEntry {
  std::size_t index = 0;  // position in the export
  JsonRef ref;
  std::string id;
  std::string kind;
  std::int64_t order_key = 0;
  bool has_seq = false;
  bool raw() const { return thread_rules::is_raw_kind(kind); }
};

// One line of the assembled session after the header.
struct Item {
  std::string line;  // one JSON object, no newline
  std::string id;
  std::optional<std::string> parent;  // none: parentId null or missing
  std::size_t parent_at = 0;          // where the parentId value is in `line` (0: no member)
  std::size_t parent_end = 0;
  ThreadOrigin origin;
  std::size_t position = 0;  // of the export entry it came from, in the order entries are taken
  bool raw = false;
};

// What a raw entry gives the rules that decide which lossy entries it covers (X4).
struct CoverKeys {
  std::unordered_set<std::string> messages;  // "role:timestamp" of each raw message
  std::unordered_set<std::string> compaction_summaries;
  std::unordered_set<std::string> user_texts;       // whitespace-normalised
  std::unordered_set<std::string> assistant_texts;  // whitespace-normalised
};

// The text blocks of a message's content (a string, or blocks of type "text"), joined.
std::string content_text(std::string_view json, const MemberSpan* content) {
  if (content == nullptr) return {};
  if (json[content->value_begin] == '"') return json_string_value(json, content->value_begin);
  if (json[content->value_begin] != '[') return {};
  std::string text;
  for (const ElementSpan& block : array_elements(json, content->value_begin)) {
    if (json[block.begin] != '{') continue;
    const auto members = object_members(json, block.begin);
    const MemberSpan* type = find_member(members, "type");
    const MemberSpan* value = find_member(members, "text");
    if (type == nullptr || value == nullptr || json[value->value_begin] != '"') continue;
    if (json_string_value(json, type->value_begin) != "text") continue;
    if (!text.empty()) text += ' ';
    text += json_string_value(json, value->value_begin);
  }
  return text;
}

std::string_view raw_value(std::string_view json, const MemberSpan* m) {
  return m == nullptr ? std::string_view() : json.substr(m->value_begin, m->value_end - m->value_begin);
}

class RawAssembler {
 public:
  RawAssembler(std::string& bytes, const std::string& file, const ThreadOptions& options, ConvertedThread& out)
      : bytes_(bytes), file_(file), options_(options), out_(out) {}

  void run();

 private:
  void error(std::size_t offset, const std::string& path, const std::string& message) {
    add(Severity::kError, offset, path, message);
  }
  void warn(std::size_t offset, const std::string& path, const std::string& message) {
    add(Severity::kWarning, offset, path, message);
  }
  void add(Severity severity, std::size_t offset, const std::string& path, const std::string& message) {
    std::uint64_t line = 0, column = 0;
    doc_.position(offset, line, column);
    out_.diagnostics.push_back(thread_export_diagnostic(severity, file_, line, column, path, message));
  }
  ThreadOrigin origin_of(const ExportEntry& e) {
    ThreadOrigin o;
    o.entry = static_cast<std::uint32_t>(e.index);
    o.id_begin = out_.origin_ids.size();
    o.id_size = static_cast<std::uint32_t>(e.id.size());
    out_.origin_ids += e.id;
    doc_.position(e.ref.begin, o.line, o.column);
    return o;
  }
  static std::string path_of(const ExportEntry& e) { return "entries[" + std::to_string(e.index) + "]"; }

  void read_envelopes();
  JsonRef payload_of(JsonRef entry) const;
  bool take_snapshot(const ExportEntry& e);
  bool take_raw_entry(const ExportEntry& e);
  bool add_raw_line(const ExportEntry& e, std::size_t at, std::string line, const std::string& where,
                    bool from_snapshot);
  void note_cover_keys(std::string_view line, const std::vector<MemberSpan>& members);
  bool covered(const ExportEntry& e) const;
  bool convert_lossy_run(const std::vector<const ExportEntry*>& run, bool last);
  std::string fresh_id(std::size_t salt);
  void reattach_orphans();
  void write_session();

  std::string& bytes_;
  const std::string& file_;
  const ThreadOptions& options_;
  ConvertedThread& out_;
  ThreadDocument doc_;
  JsonRef thread_;
  std::vector<ExportEntry> entries_;
  std::optional<std::string> header_;  // the raw header line (X2)
  ThreadOrigin header_origin_;
  std::optional<std::string> converted_header_;  // the first lossy run's (R1)
  std::vector<Item> items_;
  std::unordered_map<std::string, std::size_t> item_by_id_;
  std::unordered_set<std::string> raw_ids_;  // every raw entry's, so fresh ids never take one
  CoverKeys keys_;
  std::size_t position_ = 0;  // of the raw entry being taken
};

JsonRef RawAssembler::payload_of(JsonRef entry) const {
  JsonRef data = doc_.member(entry, "data");
  return data.valid() ? data : doc_.member(entry, "payload");
}

// The envelopes, in the converter's order (seq, stable). run() has had the
// converter's reader check them (read_thread_fast): the header, ids, kinds
// and seqs are sound.
void RawAssembler::read_envelopes() {
  const JsonRef root = doc_.root();
  thread_ = doc_.member(root, "thread");
  const std::vector<JsonRef> refs =
      doc_.is_jsonl() ? doc_.jsonl_entries() : doc_.elements(doc_.member(root, "entries"));
  std::int64_t last_order_key = 0;
  bool any_seq = false;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    ExportEntry e;
    e.index = i;
    e.ref = refs[i];
    e.id = doc_.string_value(doc_.member(e.ref, "id"));
    e.kind = doc_.string_value(doc_.member(e.ref, "kind"));
    const JsonRef seq = doc_.member(e.ref, "seq");
    if (seq.valid() && thread_converter::parse_int64(doc_.raw(seq), e.order_key)) {
      any_seq = true;
    } else {
      e.order_key = last_order_key;  // stays after its predecessor
    }
    last_order_key = e.order_key;
    entries_.push_back(std::move(e));
  }
  if (any_seq)
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const ExportEntry& a, const ExportEntry& b) { return a.order_key < b.order_key; });
  out_.entry_count = entries_.size();
}

// X1: a snapshot is the whole session file at one moment.
bool RawAssembler::take_snapshot(const ExportEntry& e) {
  const std::string path = path_of(e) + ".data.jsonl";
  JsonRef jsonl = doc_.member(payload_of(e.ref), "jsonl");
  if (doc_.kind(jsonl) != RefKind::kString) {
    error(e.ref.begin, path, "missing: a pi.snapshot carries the session file as a string");
    return false;
  }
  const std::string text = doc_.string_value(jsonl);
  std::size_t line_number = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    ++line_number;
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!add_raw_line(e, jsonl.begin, std::move(line), path + " line " + std::to_string(line_number), true))
      return false;
  }
  if (!header_) {
    error(e.ref.begin, path, "the snapshot has no session header line");
    return false;
  }
  return true;
}

// X2: one line of the session file, as pi wrote it (data.line), or the entry
// as an object (data.entry), written compact.
bool RawAssembler::take_raw_entry(const ExportEntry& e) {
  JsonRef payload = payload_of(e.ref);
  JsonRef line = doc_.member(payload, "line"), entry = doc_.member(payload, "entry");
  if (doc_.kind(line) == RefKind::kString)
    return add_raw_line(e, line.begin, doc_.string_value(line), path_of(e) + ".data.line", false);
  if (doc_.kind(entry) == RefKind::kObject)
    return add_raw_line(e, entry.begin, compact_json(doc_.raw(entry)), path_of(e) + ".data.entry", false);
  error(e.ref.begin, path_of(e) + ".data", "a pi.entry carries data.line (a string) or data.entry (an object)");
  return false;
}

// `at`: where the line's value is in the export, for messages about it.
bool RawAssembler::add_raw_line(const ExportEntry& e, std::size_t at, std::string line, const std::string& where,
                                bool from_snapshot) {
  rapidjson::Document parsed;
  parsed.Parse(line.c_str(), line.size());
  if (parsed.HasParseError() || !parsed.IsObject()) {
    error(at, where,
          parsed.HasParseError()
              ? std::string("not a JSON line (") + rapidjson::GetParseError_En(parsed.GetParseError()) + ")"
              : std::string("not a JSON object"));
    return false;
  }
  const auto members = object_members(line, skip_json_ws(line, 0));
  const MemberSpan* type = find_member(members, "type");
  if (type == nullptr || line[type->value_begin] != '"') {
    error(at, where, "an entry without a string type");
    return false;
  }
  if (json_string_value(line, type->value_begin) == "session") {
    if (!header_) {
      header_ = std::move(line);
      header_origin_ = origin_of(e);
    } else if (*header_ != line) {
      warn(at, where, "a second session header; the first is kept");
    }
    return true;
  }
  const MemberSpan* id = find_member(members, "id");
  if (id == nullptr || line[id->value_begin] != '"' || json_string_value(line, id->value_begin).empty()) {
    error(at, where, "an entry without an id (raw entries are a v3 session's lines)");
    return false;
  }
  Item item;
  item.id = json_string_value(line, id->value_begin);
  if (auto found = item_by_id_.find(item.id); found != item_by_id_.end()) {
    // X3: the same entry twice (a snapshot and the entries after it overlap, or a retry).
    if (items_[found->second].line == line) {
      out_.repairs["raw-duplicates-dropped"]++;
    } else {
      warn(at, where, "id " + quote_for_message(item.id) + " was carried before with other content; the first is kept");
      out_.repairs["raw-conflicts-dropped"]++;
    }
    return true;
  }
  if (const MemberSpan* parent = find_member(members, "parentId")) {
    item.parent_at = parent->value_begin;
    item.parent_end = parent->value_end;
    if (line[parent->value_begin] == '"') item.parent = json_string_value(line, parent->value_begin);
  }
  note_cover_keys(line, members);
  item.line = std::move(line);
  item.origin = origin_of(e);
  item.position = position_;
  item.raw = true;
  raw_ids_.insert(item.id);
  item_by_id_.emplace(item.id, items_.size());
  items_.push_back(std::move(item));
  out_.repairs[from_snapshot ? "raw-entries-from-snapshot" : "raw-entries"]++;
  return true;
}

void RawAssembler::note_cover_keys(std::string_view line, const std::vector<MemberSpan>& members) {
  const std::string type = json_string_value(line, find_member(members, "type")->value_begin);
  if (type == "compaction") {
    const MemberSpan* summary = find_member(members, "summary");
    if (summary != nullptr && line[summary->value_begin] == '"')
      keys_.compaction_summaries.insert(json_string_value(line, summary->value_begin));
    return;
  }
  const MemberSpan* message = find_member(members, "message");
  if (type != "message" || message == nullptr || line[message->value_begin] != '{') return;
  const auto fields = object_members(line, message->value_begin);
  const MemberSpan* role = find_member(fields, "role");
  if (role == nullptr || line[role->value_begin] != '"') return;
  const std::string role_text = json_string_value(line, role->value_begin);
  keys_.messages.insert(role_text + ":" + std::string(raw_value(line, find_member(fields, "timestamp"))));
  const std::string text = thread_rules::normalize_space(content_text(line, find_member(fields, "content")));
  if (text.empty()) return;
  if (role_text == "user") keys_.user_texts.insert(text);
  if (role_text == "assistant") keys_.assistant_texts.insert(text);
}

// X4: a lossy entry that says what a raw entry already carries adds nothing.
bool RawAssembler::covered(const ExportEntry& e) const {
  JsonRef payload = payload_of(e.ref);
  if (e.kind == "pi.user" || e.kind == "pi.assistant" || e.kind == "pi.tool_result" || e.kind == "pi.tool-result") {
    JsonRef message = doc_.member(payload, "message");
    if (!message.valid() && doc_.member(payload, "role").valid()) message = payload;
    const std::string role = doc_.string_value(doc_.member(message, "role"));
    return keys_.messages.count(role + ":" + std::string(doc_.raw(doc_.member(message, "timestamp")))) > 0;
  }
  if (e.kind == "pi.chunk") {
    JsonRef key = doc_.member(payload, "streamKey");
    return key.valid() && (keys_.messages.count("assistant:" + std::string(doc_.raw(key))) > 0 ||
                           keys_.messages.count("assistant:" + doc_.string_value(key)) > 0);
  }
  if (e.kind == "pi.compaction") {
    return keys_.compaction_summaries.count(doc_.string_value(doc_.member(doc_.member(payload, "result"), "summary"))) >
           0;
  }
  if (e.kind == "chat") {
    const std::string role = doc_.string_value(doc_.member(e.ref, "role"));
    const std::string text = thread_rules::normalize_space(doc_.string_value(doc_.member(e.ref, "text")));
    if (role == "user") return keys_.user_texts.count(text) > 0;
    if (role == "assistant") return keys_.assistant_texts.count(text) > 0;
  }
  return false;
}

std::string RawAssembler::fresh_id(std::size_t salt) {
  const std::uint64_t seed = stable_hash(doc_.string_value(doc_.member(thread_, "id")));
  for (std::uint64_t attempt = 0;; ++attempt) {
    std::string id = hex8_id(stable_hash(std::to_string(salt) + ":" + std::to_string(attempt), seed));
    if (!raw_ids_.count(id) && !item_by_id_.count(id)) return id;
  }
}

// X5: the entries no raw entry covers, converted by the lossy rules as a
// thread export of their own (the thread object and just them), then chained
// after what is assembled so far.
bool RawAssembler::convert_lossy_run(const std::vector<const ExportEntry*>& run, bool last) {
  std::string sub = "{\"format\":\"thread-export\",\"version\":1,\"thread\":";
  append_compact_json(sub, doc_.raw(thread_));
  sub += "}\n";
  for (const ExportEntry* e : run) {
    append_compact_json(sub, doc_.raw(e->ref));
    sub += '\n';
  }
  ThreadOptions options;
  options.partial = options_.partial;
  options.trailer = options_.trailer && last;
  options.max_depth = options_.max_depth;
  ConvertedThread converted = convert_thread_export(sub, file_, options);
  // Messages name the run's entries as the export does: its position and path.
  auto export_entry = [&](std::uint64_t sub_line) -> const ExportEntry* {
    return sub_line >= 2 && sub_line - 2 < run.size() ? run[sub_line - 2] : nullptr;
  };
  for (Diagnostic d : converted.diagnostics) {
    if (const ExportEntry* e = export_entry(d.line)) {
      const std::string sub_path = "entries[" + std::to_string(d.line - 2) + "]";
      if (d.message.rfind(sub_path, 0) == 0) d.message = path_of(*e) + d.message.substr(sub_path.size());
      doc_.position(e->ref.begin, d.line, d.column);
    } else {
      doc_.position(thread_.begin, d.line, d.column);
    }
    out_.diagnostics.push_back(std::move(d));
  }
  if (!converted.ok()) return false;
  for (const auto& [kind, count] : converted.repairs) out_.repairs[kind] += count;
  // The converted session is v1-shaped (no ids, one chain): ids are given
  // here, and a compaction's firstKeptEntryIndex (a line of this run) names
  // the id that line got.
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < converted.session.size();) {
    std::size_t end = converted.session.find('\n', at);
    lines.push_back(converted.session.substr(at, end - at));
    at = end + 1;
  }
  if (lines.empty()) return true;
  if (!converted_header_) converted_header_ = lines[0];
  if (!out_.session_id.size()) out_.session_id = converted.session_id;
  if (!out_.timestamp.size()) out_.timestamp = converted.timestamp;
  std::vector<std::string> ids(lines.size());
  for (std::size_t i = 1; i < lines.size(); ++i) ids[i] = fresh_id(items_.size() * 7919 + i);
  std::uint64_t inferred = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::string& line = lines[i];
    const auto members = object_members(line, 0);
    if (const MemberSpan* index = find_member(members, "firstKeptEntryIndex")) {
      std::int64_t k = -1;
      thread_converter::parse_int64(raw_value(line, index), k);
      const std::string kept =
          k >= 1 && static_cast<std::size_t>(k) < lines.size() ? ids[static_cast<std::size_t>(k)] : "";
      // The member is removed with the comma before it (the converter writes it last).
      std::size_t cut = index->begin;
      while (cut > 0 && line[cut - 1] != ',') --cut;
      line.erase(cut - 1, index->value_end - (cut - 1));
      if (!kept.empty()) line.insert(line.size() - 1, ",\"firstKeptEntryId\":" + json_quote(kept));
    }
    Item item;
    item.id = ids[i];
    if (!items_.empty()) item.parent = items_.back().id;
    item.line = "{\"id\":" + json_quote(item.id) +
                ",\"parentId\":" + (item.parent ? json_quote(*item.parent) : std::string("null")) + "," +
                line.substr(1);
    const ThreadOrigin& o = converted.origins[i];
    const ExportEntry* e = o.entry == ThreadOrigin::kThread ? nullptr : export_entry(o.entry + 2);
    if (e != nullptr) {
      item.origin = origin_of(*e);
    } else {
      doc_.position(thread_.begin, item.origin.line, item.origin.column);
    }
    item_by_id_.emplace(item.id, items_.size());
    items_.push_back(std::move(item));
    ++inferred;
  }
  out_.repairs["entries-rebuilt-by-lossy-rules"] += inferred;
  if (!raw_ids_.empty() || header_) {
    const ExportEntry& first = *run.front();
    warn(first.ref.begin, path_of(first),
         std::to_string(run.size()) + " entr" + (run.size() == 1 ? "y" : "ies") + " up to " + path_of(*run.back()) +
             " carry no raw pi entry: " + std::to_string(inferred) + " session entr" + (inferred == 1 ? "y" : "ies") +
             " rebuilt by the lossy rules");
  }
  return true;
}

// X6: a raw entry whose parent the export never carried (the mirror began
// carrying raw entries mid-thread, or missed some) hangs from the entry
// assembled before it.
void RawAssembler::reattach_orphans() {
  for (std::size_t i = 0; i < items_.size(); ++i) {
    Item& item = items_[i];
    if (!item.raw || !item.parent || item_by_id_.count(*item.parent)) continue;
    const std::string previous = i == 0 ? std::string() : items_[i - 1].id;
    const std::string replacement = previous.empty() ? "null" : json_quote(previous);
    std::uint64_t line = item.origin.line, column = item.origin.column;
    out_.diagnostics.push_back(thread_export_diagnostic(
        Severity::kWarning, file_, line, column, "entries[" + std::to_string(item.origin.entry) + "]",
        "parent " + quote_for_message(*item.parent) + " is not in the export; attached to " +
            (previous.empty() ? std::string("nothing (a root)")
                              : "the entry before it, " + quote_for_message(previous))));
    item.line.replace(item.parent_at, item.parent_end - item.parent_at, replacement);
    out_.repairs["raw-entries-reattached"]++;
  }
}

void RawAssembler::write_session() {
  std::string header;
  if (header_) {
    // pi's header: its id and timestamp are hydrated as --session hydrates them (kept, or derived when invalid).
    header = *header_;
    out_.session_id.clear();
    out_.timestamp.clear();
    out_.origins.push_back(header_origin_);
  } else {
    // No raw header: the lossy rules' (R1), made v3 since the lines have ids.
    header = converted_header_
                 ? *converted_header_
                 : JsonObjectText()
                       .string("type", "session")
                       .string("id", derived_session_id(doc_.string_value(doc_.member(thread_, "id"))))
                       .string("timestamp", out_.timestamp.empty() ? "1970-01-01T00:00:00.000Z" : out_.timestamp)
                       .string("cwd", "/")
                       .text();
    header.insert(header.size() - 1, ",\"version\":3");
    ThreadOrigin o;
    doc_.position(thread_.begin, o.line, o.column);
    out_.origins.push_back(o);
    if (out_.session_id.empty()) out_.session_id = derived_session_id(doc_.string_value(doc_.member(thread_, "id")));
  }
  out_.session = header + '\n';
  for (const Item& item : items_) {
    out_.session += item.line;
    out_.session += '\n';
    out_.origins.push_back(item.origin);
  }
  out_.session_bytes = out_.session.size();
}

void RawAssembler::run() {
  // The converter has read the header and every envelope (raw_thread.h):
  // only the raw kinds' own content is checked here.
  ThreadOptions parse_options;  // in memory: no spool, no pages to release
  parse_options.max_depth = options_.max_depth;
  if (!parse_export(bytes_.data(), bytes_.size(), file_, parse_options, doc_, out_)) return;
  read_envelopes();
  // X1: entries before the last snapshot are in it.
  std::size_t start = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].kind == kSnapshotKind) start = i;
  if (start > 0) out_.repairs["entries-before-snapshot-superseded"] += start;
  // The raw entries first, so that X4 knows all they cover.
  for (std::size_t i = start; i < entries_.size(); ++i) {
    const ExportEntry& e = entries_[i];
    position_ = i;
    if (e.kind == kSnapshotKind ? !take_snapshot(e) : e.kind == kEntryKind ? !take_raw_entry(e) : false) return;
  }
  // Then the lossy runs, each at its place among the raw items.
  std::vector<Item> raw_items = std::move(items_);
  items_.clear();
  item_by_id_.clear();
  std::size_t next_raw = 0;
  auto place_raw_until = [&](std::size_t position) {
    while (next_raw < raw_items.size() && raw_items[next_raw].position <= position) {
      item_by_id_.emplace(raw_items[next_raw].id, items_.size());
      items_.push_back(std::move(raw_items[next_raw++]));
    }
  };
  std::vector<const ExportEntry*> run;
  for (std::size_t i = start; i <= entries_.size(); ++i) {
    const bool at_end = i == entries_.size();
    if (at_end || entries_[i].raw()) {
      if (!run.empty() && !convert_lossy_run(run, at_end)) return;
      run.clear();
      if (!at_end) place_raw_until(i);
      continue;
    }
    if (covered(entries_[i])) {
      out_.repairs["lossy-entries-covered-by-raw"]++;
    } else {
      run.push_back(&entries_[i]);
    }
  }
  place_raw_until(SIZE_MAX);
  reattach_orphans();
  write_session();
}

}  // namespace

ConvertedThread assemble_raw_thread(std::string& bytes, const std::string& file, const ThreadOptions& options) {
  ConvertedThread out;
  RawAssembler(bytes, file, options, out).run();
  return out;
}

}  // namespace pihydrate
