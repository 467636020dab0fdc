// Raw pi entries in a thread export (docs/thread-export.md, "Raw pi
// entries", X1-X7). Each pi.entry and pi.snapshot becomes one row per
// session line it carries (kRawLine), which the rules see beside the lossy
// entries (thread_rules.h: a raw message closes a stream, echoes a chat
// turn, covers a lossy copy, anchors a compaction); the lines are written at
// their place among the lossy ones, and at the end the session is linked
// around them: ids for the lossy lines, parents the export never carried,
// the header. An export that carries raw entries is assembled in memory: it
// is no bigger than the session pi wrote.
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/json_spans.h"
#include "core/json_value.h"
#include "core/message_text.h"
#include "pihydrate/formats.h"
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

// What the rules and R9 read of a raw line, from its parsed entry.
void take_facts(const rapidjson::Document& entry, RawLine& r) {
  const std::string type = json_string(entry, "type");
  if (type == "compaction") {
    r.compaction = true;
    r.summary = json_string(entry, "summary");
    return;
  }
  const JsonValue* message = json_member(entry, "message");
  if (type != "message" || message == nullptr || !message->IsObject()) return;
  const std::string role = json_string(*message, "role");
  r.role = role_of(role);
  if (r.role == ChatRole::kNone) return;
  const std::string key = stream_key_of_value(json_member(message, "timestamp"));
  r.message_key = role + ":" + key;
  if (r.role == ChatRole::kAssistant) {
    r.final_timestamp = key;
    if (const JsonValue* content = json_member(message, "content"); content != nullptr && content->IsArray())
      for (const JsonValue& block : content->GetArray())
        if (json_string(block, "type") == "toolCall") r.tool_ids.push_back(json_string(block, "id"));
  } else if (r.role == ChatRole::kToolResult) {
    r.tool_ids.push_back(json_string(*message, "toolCallId"));
  }
}

}  // namespace

// The line a pi.entry carries (X2): data.line as pi wrote it, or data.entry
// written compact; `at` and `where` say where it is, for messages.
std::string ThreadConverter::raw_payload_line(const Envelope& e, std::size_t& at, std::string& where) {
  const JsonRef line = doc_.member(e.payload(), "line");
  if (doc_.kind(line) == RefKind::kString) {
    at = line.begin;
    where = e.path() + ".data.line";
    return doc_.string_value(line);
  }
  const JsonRef entry = doc_.member(e.payload(), "entry");
  at = entry.begin;
  where = e.path() + ".data.entry";
  return compact_json(doc_.raw(entry));
}

bool ThreadConverter::expand_raw_entries() {
  // X1: a snapshot is the whole file at one moment: the entries before the last one are in it.
  std::size_t start = 0;
  for (std::size_t i = 0; i < envs_.size(); ++i)
    if (envs_[i].kind == Kind::kPiSnapshot) start = i;
  if (start > 0) out_.repairs["entries-before-snapshot-superseded"] += start;
  std::vector<Envelope> rows;
  rows.reserve(envs_.size() - start);
  for (std::size_t i = start; i < envs_.size(); ++i) {
    const Envelope& e = envs_[i];
    if (!thread_rules::is_raw_kind(e.kind)) {
      rows.push_back(e);
      continue;
    }
    reading(e);
    if (e.kind == Kind::kPiEntry) {
      std::size_t at = 0;
      std::string where;
      std::string line = raw_payload_line(e, at, where);
      if (!take_raw_line(e, at, std::move(line), where, false, rows)) return false;
      continue;
    }
    const JsonRef jsonl = doc_.member(e.payload(), "jsonl");
    const std::string text = doc_.string_value(jsonl);
    std::size_t number = 0;
    for (std::size_t at = 0; at < text.size();) {
      std::size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      ++number;
      std::string line = text.substr(at, end - at);
      at = end + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      if (!take_raw_line(e, jsonl.begin, std::move(line), e.path() + ".data.jsonl line " + std::to_string(number), true,
                         rows))
        return false;
    }
    if (raw_header_.empty()) {
      error(e.path() + ".data.jsonl", e.ref().begin, "the snapshot has no session header line");
      return false;
    }
  }
  envs_ = std::move(rows);
  return true;
}

// X2, X3: one line of pi's session. `at`: where its value is in the export.
bool ThreadConverter::take_raw_line(const Envelope& e, std::size_t at, std::string line, const std::string& where,
                                    bool from_snapshot, std::vector<Envelope>& into) {
  rapidjson::Document parsed;
  parsed.Parse(line.c_str(), line.size());
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
  RawLine r;
  r.id = json_string(parsed, "id");
  if (r.id.empty()) {
    error(where, at, "an entry without an id (raw entries are a v3 session's lines)");
    return false;
  }
  // X3: the same entry twice (a snapshot and the entries after it overlap, or a retry).
  if (const auto seen = raw_line_of_id_.find(r.id); seen != raw_line_of_id_.end()) {
    if (raw_lines_[seen->second].text == line) {
      out_.repairs["raw-duplicates-dropped"]++;
    } else {
      warn(where, at, "id " + quote_for_message(r.id) + " was carried before with other content; the first is kept");
      out_.repairs["raw-conflicts-dropped"]++;
    }
    return true;
  }
  raw_line_of_id_.emplace(r.id, raw_lines_.size());
  const std::vector<MemberSpan> members = object_members(line, skip_json_ws(line, 0));
  if (const MemberSpan* parent = find_member(members, "parentId")) {
    r.parent_at = parent->value_begin;
    r.parent_end = parent->value_end;
    r.has_parent = line[parent->value_begin] == '"';
    if (r.has_parent) r.parent = json_string_value(line, parent->value_begin);
  }
  take_facts(parsed, r);
  r.text = std::move(line);
  Envelope row = e;
  row.kind = Kind::kRawLine;
  row.order_key = static_cast<std::int64_t>(raw_lines_.size());
  raw_lines_.push_back(std::move(r));
  into.push_back(row);
  out_.repairs[from_snapshot ? "raw-entries-from-snapshot" : "raw-entries"]++;
  return true;
}

// A raw line at its place, as pi wrote it (one line; a pretty-printed
// data.entry was written compact); lossy lines after it take its time.
void ThreadConverter::emit_raw_line(std::size_t env) {
  const RawLine& r = raw_lines_[envs_[env].raw_line()];
  push(env, r.text, r.text.find_first_of("\r\n") == std::string::npos);
  Item& item = items_.back();
  item.is_user_turn = r.role == ChatRole::kUser;
  item.is_tool_result = r.role == ChatRole::kToolResult;
  for (const std::string& id : r.tool_ids) add_tool_id(id);
  rapidjson::Document parsed;
  parsed.Parse(r.text.c_str(), r.text.size());
  const std::string ts = json_string(parsed, "timestamp");
  if (is_iso8601(ts)) last_ts_ = ts;
}

// X5: pi's own entries say the name, model and thinking level, unless lossy ones come after them.
bool ThreadConverter::wants_trailer() const { return !raw_ || lossy_at_end_; }

namespace {

// A line of the linked session: its text and id.
struct LinkedLine {
  std::string text;
  std::string id;
  bool raw = false;
};

std::vector<LinkedLine> split_lines(const std::string& session) {
  std::vector<LinkedLine> lines;
  for (std::size_t at = 0; at < session.size();) {
    const std::size_t end = session.find('\n', at);
    lines.push_back({session.substr(at, end - at), {}, false});
    at = end + 1;
  }
  return lines;
}

// A lossy compaction's window (R9) names a line of the session by its
// position (firstKeptEntryIndex, the header being 0): it names that line's
// id instead, now that every line has one. The converter writes it last.
void name_kept_entry(std::string& line, const std::vector<LinkedLine>& lines) {
  const std::vector<MemberSpan> members = object_members(line, 0);
  const MemberSpan* index = find_member(members, "firstKeptEntryIndex");
  if (index == nullptr) return;
  std::int64_t k = -1;
  parse_int64(std::string_view(line).substr(index->value_begin, index->value_end - index->value_begin), k);
  const std::string kept = k >= 1 && static_cast<std::size_t>(k) < lines.size() ? lines[k].id : "";
  std::size_t cut = index->begin;  // the member goes with the comma before it
  while (cut > 0 && line[cut - 1] != ',') --cut;
  line.erase(cut - 1, index->value_end - (cut - 1));
  if (!kept.empty()) line.insert(line.size() - 1, ",\"firstKeptEntryId\":" + json_quote(kept));
}

}  // namespace

void ThreadConverter::link_raw_session() {
  std::vector<LinkedLine> lines = split_lines(out_.session);
  const std::string thread_id = doc_.string_value(doc_.member(thread_, "id"));
  // X2: pi's header, whose id and time are hydrated as --session hydrates
  // them; else the lossy rules' (R1), made v3 since the lines have ids.
  if (!raw_header_.empty()) {
    lines[0].text = raw_header_;
    out_.origins[0] = raw_header_origin_;
    out_.session_id.clear();
    out_.timestamp.clear();
  } else {
    lines[0].text.insert(lines[0].text.size() - 1, ",\"version\":3");
  }
  std::unordered_set<std::string> ids;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::int32_t raw = i - 1 < raw_line_of_item_.size() ? raw_line_of_item_[i - 1] : -1;
    if (raw < 0) continue;
    lines[i].raw = true;
    lines[i].id = raw_lines_[static_cast<std::size_t>(raw)].id;
    ids.insert(lines[i].id);
  }
  // Fresh ids for the lines the lossy rules wrote (R2), none of them pi's.
  const std::uint64_t seed = stable_hash(thread_id);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].raw) continue;
    for (std::uint64_t attempt = 0;; ++attempt) {
      std::string id = hex8_id(stable_hash(std::to_string(i) + ":" + std::to_string(attempt), seed));
      if (ids.insert(id).second) {
        lines[i].id = std::move(id);
        break;
      }
    }
  }
  std::uint64_t rebuilt = 0;
  std::size_t run_start = 0;  // the first line of the lossy run being linked, or 0
  auto end_run = [&](std::size_t end) {
    if (run_start == 0) return;
    const std::size_t count = end - run_start;
    rebuilt += count;
    const ThreadOrigin& first = out_.origins[run_start];
    const ThreadOrigin& last = out_.origins[end - 1];
    out_.diagnostics.push_back(thread_export_diagnostic(
        Severity::kWarning, file_, first.line, first.column, ConvertedThread::path_of(first),
        "the entries up to " + ConvertedThread::path_of(last) + " carry no raw pi entry: " + std::to_string(count) +
            " session entr" + (count == 1 ? "y" : "ies") + " rebuilt by the lossy rules"));
    run_start = 0;
  };
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string previous = i > 1 ? lines[i - 1].id : std::string();
    LinkedLine& line = lines[i];
    if (!line.raw) {
      if (run_start == 0) run_start = i;
      name_kept_entry(line.text, lines);
      line.text = "{\"id\":" + json_quote(line.id) +
                  ",\"parentId\":" + (previous.empty() ? std::string("null") : json_quote(previous)) + "," +
                  line.text.substr(1);
      continue;
    }
    end_run(i);
    // X6: a parent the export never carried: the line hangs from the one before it.
    const RawLine& r = raw_lines_[static_cast<std::size_t>(raw_line_of_item_[i - 1])];
    if (!r.has_parent || ids.count(r.parent)) continue;
    const ThreadOrigin& o = out_.origins[i];
    out_.diagnostics.push_back(
        thread_export_diagnostic(Severity::kWarning, file_, o.line, o.column, ConvertedThread::path_of(o),
                                 "parent " + quote_for_message(r.parent) + " is not in the export; attached to " +
                                     (previous.empty() ? std::string("nothing (a root)")
                                                       : "the entry before it, " + quote_for_message(previous))));
    line.text.replace(r.parent_at, r.parent_end - r.parent_at, previous.empty() ? "null" : json_quote(previous));
    out_.repairs["raw-entries-reattached"]++;
  }
  end_run(lines.size());
  if (rebuilt > 0) out_.repairs["entries-rebuilt-by-lossy-rules"] += rebuilt;
  out_.session.clear();
  for (const LinkedLine& line : lines) out_.session.append(line.text).push_back('\n');
  out_.session_bytes = out_.session.size();
}

}  // namespace thread_converter
}  // namespace pihydrate
