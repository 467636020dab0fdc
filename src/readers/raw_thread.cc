// Raw pi entries in a thread export (docs/thread-export.md, "Raw pi
// entries", X1-X7). Each pi.entry and pi.snapshot becomes one row per
// session line it carries (kRawLine), which the rules see beside the lossy
// entries (thread_rules.h: a raw message closes a stream, echoes a chat
// turn, covers a lossy copy, anchors a compaction); the lines are written at
// their place among the lossy ones and linked as they are written: ids for
// the lossy lines, parents the export never carried, the header. What is
// kept of a raw line is what the rules and the linking read (RawLine); its
// text is read again from the export when it is written, so an export that
// carries raw entries streams like any other.
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/json_spans.h"
#include "core/json_value.h"
#include "core/message_text.h"
#include "pihydrate/formats.h"
#include "pihydrate/line_reader.h"
#include "readers/thread_converter.h"

namespace pihydrate {
namespace thread_converter {
namespace {

// A message's timestamp as R6 and X4 compare it (thread_rules.h): a string
// by its text, an integer by its value; "" for anything else.
std::string stream_key_of_value(const JsonValue* value) {
  if (value == nullptr) return {};
  if (value->IsString()) return thread_rules::stream_key_of_string({value->GetString(), value->GetStringLength()});
  if (value->IsInt64()) return thread_rules::stream_key_of_integer(value->GetInt64());
  return {};
}

ChatRole role_of(const std::string& role) {
  if (role == "user") return ChatRole::kUser;
  if (role == "assistant") return ChatRole::kAssistant;
  if (role == "toolResult") return ChatRole::kToolResult;
  return role.empty() ? ChatRole::kNone : ChatRole::kOther;
}

// A string kept in RawLine's list: its 4-byte length, then its bytes.
void append_sized(std::string& list, std::string_view text) {
  const auto size = static_cast<std::uint32_t>(text.size());
  list.append(reinterpret_cast<const char*>(&size), sizeof size);
  list.append(text);
}

// What the rules and R9 read of a raw line, from its parsed entry, before
// it is kept in RawLine's few bytes.
struct RawFacts {
  std::string id, parent, summary, message_key, final_timestamp, timestamp;
  std::vector<std::string> tool_ids;
};

void take_facts(const rapidjson::Document& entry, RawLine& r, RawFacts& f) {
  const std::string type = json_string(entry, "type");
  if (type == "compaction") {
    r.compaction = true;
    f.summary = json_string(entry, "summary");
    return;
  }
  const JsonValue* message = json_member(entry, "message");
  if (type != "message" || message == nullptr || !message->IsObject()) return;
  const std::string role = json_string(*message, "role");
  r.role = role_of(role);
  if (r.role == ChatRole::kNone) return;
  const std::string key = stream_key_of_value(json_member(message, "timestamp"));
  f.message_key = role + ":" + key;
  if (r.role == ChatRole::kAssistant) {
    f.final_timestamp = key;
    if (const JsonValue* content = json_member(message, "content"); content != nullptr && content->IsArray())
      for (const JsonValue& block : content->GetArray())
        if (json_string(block, "type") == "toolCall") f.tool_ids.push_back(json_string(block, "id"));
  } else if (r.role == ChatRole::kToolResult) {
    f.tool_ids.push_back(json_string(*message, "toolCallId"));
  }
}

// A snapshot's lines (X1) in the escaped bytes of its data.jsonl string:
// the end of the line that starts at `at` (where the next escaped line feed,
// a backslash and n or u000a, begins, or the end), and in `next` where the line after it
// starts. A line between two such escapes is a JSON string's body of its own.
std::size_t escaped_line_end(std::string_view body, std::size_t at, std::size_t& next) {
  for (std::size_t i = body.find('\\', at); i != std::string_view::npos && i + 1 < body.size();
       i = body.find('\\', i)) {
    const char c = body[i + 1];
    if (c == 'n') {
      next = i + 2;
      return i;
    }
    if (c == 'u' && i + 5 < body.size() && body.compare(i + 2, 3, "000") == 0 &&
        (body[i + 5] == 'a' || body[i + 5] == 'A')) {
      next = i + 6;
      return i;
    }
    i += c == 'u' ? 6 : 2;
  }
  next = body.size();
  return body.size();
}

}  // namespace

// The line a pi.entry carries (X2): data.line as pi wrote it, or data.entry
// written compact; `at` and `where` say where it is, for messages, and `r`
// where to read it again.
std::string ThreadConverter::raw_payload_line(const Envelope& e, std::size_t& at, std::string& where, RawLine& r) {
  const JsonRef line = doc_.member(e.payload(), "line");
  if (doc_.kind(line) == RefKind::kString) {
    at = line.begin;
    where = e.path() + ".data.line";
    r.source = RawLine::Source::kLine;
    r.at = line.begin;
    r.size = static_cast<std::uint32_t>(line.end - line.begin);
    return doc_.string_value(line);
  }
  const JsonRef entry = doc_.member(e.payload(), "entry");
  at = entry.begin;
  where = e.path() + ".data.entry";
  r.source = RawLine::Source::kEntry;
  r.at = entry.begin;
  r.size = static_cast<std::uint32_t>(entry.end - entry.begin);
  return compact_json(doc_.raw(entry));
}

void ThreadConverter::raw_text(const RawLine& r, std::string& out) const {
  const std::string_view bytes = doc_.bytes().substr(r.at, r.size);
  switch (r.source) {
    case RawLine::Source::kLine: out = json_string_value(bytes, 0); break;
    case RawLine::Source::kEntry: out = compact_json(bytes); break;
    case RawLine::Source::kSnapshotLine:
      out = json_string_value("\"" + std::string(bytes) + "\"", 0);
      if (out.size() > r.text_size) out.resize(r.text_size);  // without the \r before its line feed
      break;
  }
}

std::string_view ThreadConverter::raw_string(const RawLine& r, std::uint32_t k) const {
  std::size_t at = r.strings;
  for (std::uint32_t i = 0;; ++i) {
    std::uint32_t size = 0;
    std::memcpy(&size, raw_strings_.data() + at, sizeof size);
    if (i == k) return std::string_view(raw_strings_).substr(at + sizeof size, size);
    at += sizeof size + size;
  }
}

bool ThreadConverter::expand_raw_entries() {
  // X1: a snapshot is the whole file at one moment: the entries before the last one are in it.
  std::size_t start = 0;
  for (std::size_t i = 0; i < envs_.size(); ++i)
    if (envs_[i].kind == Kind::kPiSnapshot) start = i;
  if (start > 0) out_.repairs["entries-before-snapshot-superseded"] += start;
  std::vector<Envelope> rows;
  rows.reserve(envs_.size() - start);
  raw_lines_.reserve(envs_.size() - start);  // a line each, but for a snapshot's
  for (std::size_t i = start; i < envs_.size(); ++i) {
    const Envelope& e = envs_[i];
    if (!thread_rules::is_raw_kind(e.kind)) {
      rows.push_back(e);
      continue;
    }
    reading(e);
    if (e.kind == Kind::kPiSnapshot) {
      if (!expand_snapshot(e, rows)) return false;
      continue;
    }
    std::size_t at = 0;
    std::string where;
    RawLine r;
    std::string line = raw_payload_line(e, at, where, r);
    if (!take_raw_line(e, at, std::move(line), where, std::move(r), rows)) return false;
  }
  envs_ = std::move(rows);
  return true;
}

// X1: the lines of a snapshot's data.jsonl, each read where it is in the
// string's escaped bytes.
bool ThreadConverter::expand_snapshot(const Envelope& e, std::vector<Envelope>& rows) {
  const JsonRef jsonl = doc_.member(e.payload(), "jsonl");
  const std::string_view body = doc_.raw(jsonl).substr(1, jsonl.end - jsonl.begin - 2);
  std::size_t number = 0;
  for (std::size_t at = 0, next = 0; at < body.size(); at = next) {
    const std::size_t end = escaped_line_end(body, at, next);
    ++number;
    pages_.reading(jsonl.begin + 1 + at);
    RawLine r;
    r.source = RawLine::Source::kSnapshotLine;
    r.at = jsonl.begin + 1 + at;
    r.size = static_cast<std::uint32_t>(end - at);
    r.text_size = UINT32_MAX;  // raw_text reads it whole
    std::string line;
    raw_text(r, line);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!take_raw_line(e, jsonl.begin, std::move(line), e.path() + ".data.jsonl line " + std::to_string(number),
                       std::move(r), rows))
      return false;
  }
  if (raw_header_.empty()) {
    error(e.path() + ".data.jsonl", e.ref().begin, "the snapshot has no session header line");
    return false;
  }
  return true;
}

// X2, X3: one line of pi's session, `r` saying where it is. `at`: where its value is in the export.
bool ThreadConverter::take_raw_line(const Envelope& e, std::size_t at, std::string line, const std::string& where,
                                    RawLine r, std::vector<Envelope>& into) {
  // Parsed in place in a copy: its strings are not copied again (a third
  // less time for this parse on thread-raw; the line itself is kept).
  std::string& copy = parse_scratch_;
  copy.reserve(line.size() + 1 + kLinePadding);  // the SSE2 scan may read past the end: see kLinePadding
  copy.assign(line);
  rapidjson::Document parsed;
  parsed.ParseInsitu(copy.data());
  if (parsed.HasParseError() || !parsed.IsObject()) {
    error(where, at,
          parsed.HasParseError()
              ? std::string("not a JSON line (") + rapidjson::GetParseError_En(parsed.GetParseError()) + ")"
              : std::string("not a JSON object"));
    return false;
  }
  const JsonValue* type = json_member(parsed, "type");
  if (type == nullptr || !type->IsString()) {
    error(where, at, "an entry without a string type");
    return false;
  }
  if (json_string(parsed, "type") == "session") {
    if (raw_header_.empty()) {
      raw_header_ = std::move(line);
      raw_header_origin_ = origin_of(e);
    } else if (raw_header_ != line) {
      warn(where, at, "a second session header; the first is kept");
    }
    return true;
  }
  RawFacts f;
  f.id = json_string(parsed, "id");
  if (f.id.empty()) {
    error(where, at, "an entry without an id (raw entries are a v3 session's lines)");
    return false;
  }
  // X3: the same entry twice (a snapshot and the entries after it overlap, or a retry).
  if (const auto seen = raw_line_of_id_.find(f.id); seen != raw_line_of_id_.end()) {
    std::string first;
    raw_text(raw_lines_[seen->second], first);
    if (first == line) {
      out_.repairs["raw-duplicates-dropped"]++;
    } else {
      warn(where, at, "id " + quote_for_message(f.id) + " was carried before with other content; the first is kept");
      out_.repairs["raw-conflicts-dropped"]++;
    }
    return true;
  }
  raw_line_of_id_.emplace(f.id, raw_lines_.size());
  const std::vector<MemberSpan> members = object_members(line, skip_json_ws(line, 0));
  if (const MemberSpan* parent = find_member(members, "parentId")) {
    r.has_parent = line[parent->value_begin] == '"';
    if (r.has_parent) f.parent = json_string_value(line, parent->value_begin);
  }
  take_facts(parsed, r, f);
  if (const std::string ts = json_string(parsed, "timestamp"); is_iso8601(ts)) f.timestamp = ts;
  r.strings = raw_strings_.size();
  for (const std::string* text : {&f.id, &f.parent, &f.summary, &f.message_key, &f.final_timestamp, &f.timestamp})
    append_sized(raw_strings_, *text);
  for (const std::string& id : f.tool_ids) append_sized(raw_strings_, id);
  r.tool_id_count = static_cast<std::uint32_t>(f.tool_ids.size());
  r.text_size = static_cast<std::uint32_t>(line.size());
  r.compact = line.find('\n') == std::string::npos && line.find('\r') == std::string::npos;
  Envelope row = e;
  row.kind = Kind::kRawLine;
  row.order_key = static_cast<std::int64_t>(raw_lines_.size());
  raw_lines_.push_back(r);
  into.push_back(row);
  out_.repairs[e.kind == Kind::kPiSnapshot ? "raw-entries-from-snapshot" : "raw-entries"]++;
  return true;
}

// A raw line at its place, as pi wrote it (one line; a pretty-printed
// data.entry was written compact), read again from the export; lossy lines
// after it take its time. X6: a parent the export never carried: the line
// hangs from the one before it.
void ThreadConverter::emit_raw_line(std::size_t env) {
  const RawLine& r = raw_lines_[envs_[env].raw_line()];
  std::string& text = raw_scratch_;
  raw_text(r, text);
  end_lossy_run();
  const std::string& previous = line_ids_.back();
  const std::string parent(raw_string(r, RawLine::kParent));
  if (r.has_parent && !raw_line_of_id_.count(parent)) {
    const ThreadOrigin o = origin_of(envs_[env]);
    link_listed_.add(
        thread_export_diagnostic(Severity::kWarning, file_, o.line, o.column, ConvertedThread::path_of(o),
                                 "parent " + quote_for_message(parent) + " is not in the export; attached to " +
                                     (previous.empty() ? std::string("nothing (a root)")
                                                       : "the entry before it, " + quote_for_message(previous))));
    const std::vector<MemberSpan> members = object_members(text, skip_json_ws(text, 0));
    const MemberSpan* member = find_member(members, "parentId");
    text.replace(member->value_begin, member->value_end - member->value_begin,
                 previous.empty() ? "null" : json_quote(previous));
    out_.repairs["raw-entries-reattached"]++;
  }
  line_ids_.emplace_back(raw_id(r));
  raw_line_open_ = true;
  push(env, text, r.compact);
  Item& item = items_.back();
  item.is_user_turn = r.role == ChatRole::kUser;
  item.is_tool_result = r.role == ChatRole::kToolResult;
  for (std::uint32_t k = 0; k < r.tool_id_count; ++k) add_tool_id(raw_string(r, RawLine::kToolIds + k));
  if (const std::string_view ts = raw_string(r, RawLine::kTimestamp); !ts.empty()) last_ts_ = ts;
}

// X5: pi's own entries say the name, model and thinking level, unless lossy ones come after them.
bool ThreadConverter::wants_trailer() const { return !raw_ || lossy_at_end_; }

namespace {

// A lossy compaction's window (R9) names a line of the session by its
// position (firstKeptEntryIndex, the header being 0): it names that line's
// id instead, now that every line has one. The converter writes it last.
void name_kept_entry(std::string& line, const std::vector<std::string>& ids) {
  const std::vector<MemberSpan> members = object_members(line, 0);
  const MemberSpan* index = find_member(members, "firstKeptEntryIndex");
  if (index == nullptr) return;
  std::int64_t k = -1;
  parse_int64(std::string_view(line).substr(index->value_begin, index->value_end - index->value_begin), k);
  const std::string kept = k >= 1 && static_cast<std::size_t>(k) < ids.size() ? ids[k] : "";
  std::size_t cut = index->begin;  // the member goes with the comma before it
  while (cut > 0 && line[cut - 1] != ',') --cut;
  line.erase(cut - 1, index->value_end - (cut - 1));
  if (!kept.empty()) line.insert(line.size() - 1, ",\"firstKeptEntryId\":" + json_quote(kept));
}

}  // namespace

// X2: pi's header, whose id and time are hydrated as --session hydrates
// them; else the lossy rules' (R1), made v3 since the lines have ids.
// Written first; every line after it is linked as it is written.
void ThreadConverter::start_linking() {
  line_ids_.reserve(envs_.size() + 4);  // about a line each, and the trailer
  line_ids_.assign(1, std::string());
  link_seed_ = stable_hash(doc_.string_value(doc_.member(thread_, "id")));
  for (const RawLine& r : raw_lines_) {
    std::string parent(raw_string(r, RawLine::kParent));
    if (r.has_parent && !raw_line_of_id_.count(parent)) taken_ids_.insert(std::move(parent));
  }
  linking_ = true;
}

// X5: a line the lossy rules wrote, [start, end of `target`): a fresh id
// (R2), none a raw entry carries or names as its parent, and the line
// before it as parent.
void ThreadConverter::link_lossy_line(std::string& target, std::size_t start) {
  const std::size_t number = line_ids_.size();
  if (run_start_ == 0) run_start_ = number;
  std::string id;
  for (std::uint64_t attempt = 0;; ++attempt) {
    id = hex8_id(stable_hash(std::to_string(number) + ":" + std::to_string(attempt), link_seed_));
    if (!raw_line_of_id_.count(id) && taken_ids_.insert(id).second) break;
  }
  std::string line = target.substr(start);
  target.resize(start);
  name_kept_entry(line, line_ids_);
  const std::string& previous = line_ids_.back();
  target += "{\"id\":";
  target += json_quote(id);
  target += ",\"parentId\":";
  target += previous.empty() ? std::string("null") : json_quote(previous);
  target += ',';
  target.append(line, 1, std::string::npos);
  line_ids_.push_back(std::move(id));
}

// X5: the run of lossy lines that ends here, reported at its first entry.
void ThreadConverter::end_lossy_run() {
  if (run_start_ == 0) return;
  const std::size_t end = line_ids_.size();
  const std::size_t count = end - run_start_;
  rebuilt_ += count;
  const ThreadOrigin& first = out_.origins[run_start_];
  const ThreadOrigin& last = out_.origins[end - 1];
  link_listed_.add(thread_export_diagnostic(
      Severity::kWarning, file_, first.line, first.column, ConvertedThread::path_of(first),
      "the entries up to " + ConvertedThread::path_of(last) + " carry no raw pi entry: " + std::to_string(count) +
          " session entr" + (count == 1 ? "y" : "ies") + " rebuilt by the lossy rules"));
  run_start_ = 0;
}

void ThreadConverter::finish_linking() {
  end_lossy_run();
  if (rebuilt_ > 0) out_.repairs["entries-rebuilt-by-lossy-rules"] += rebuilt_;
  link_listed_.close();
  for (Diagnostic& d : link_diagnostics_) listed_.add(std::move(d));
  Diagnostics().swap(link_diagnostics_);
  if (!raw_header_.empty()) {
    out_.session_id.clear();
    out_.timestamp.clear();
  }
}

}  // namespace thread_converter
}  // namespace pihydrate
