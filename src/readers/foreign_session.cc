// Finding a session file's format, and the machinery the Claude Code and
// Codex readers share (transcript_writer.h).
#include "readers/foreign_session.h"

#include <rapidjson/error/en.h>

#include "core/json_spans.h"
#include "pihydrate/formats.h"
#include "readers/thread_converter.h"
#include "readers/transcript_writer.h"

namespace pihydrate {

const char* session_format_name(SessionFormat format) {
  switch (format) {
    case SessionFormat::kPi: return "pi";
    case SessionFormat::kClaudeCode: return "claude-code";
    case SessionFormat::kCodex: return "codex";
    case SessionFormat::kAuto: break;
  }
  return "auto";
}

FormatGuess guess_session_format(std::string_view head) {
  FormatGuess guess;
  std::size_t pos = head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  // The first line that is not blank.
  std::string_view line;
  while (pos < head.size()) {
    std::size_t nl = head.find('\n', pos);
    line = head.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) break;
    line = {};
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  if (!doc.HasParseError() && doc.IsObject()) {
    const std::string type = json_string(doc, "type");
    const JsonValue* payload = json_member(doc, "payload");
    if (type == "session") {
      guess.format = SessionFormat::kPi;
    } else if (payload != nullptr && payload->IsObject() && !type.empty() && json_member(doc, "timestamp")) {
      guess.format = SessionFormat::kCodex;
    } else if ((json_member(doc, "sessionId") && json_member(doc, "uuid")) ||
               (!type.empty() && (json_member(doc, "sessionId") || json_member(doc, "leafUuid")))) {
      guess.format = SessionFormat::kClaudeCode;
    }
    if (guess.format != SessionFormat::kAuto) return guess;
  }
  guess.tried =
      "tried pi (its first line is a session header, {\"type\":\"session\",...}), Claude Code (records with "
      "\"uuid\" and \"sessionId\") and Codex (lines of {\"timestamp\",\"type\",\"payload\"}); give --from to say "
      "which it is";
  return guess;
}

bool ForeignSession::ok() const {
  for (const Diagnostic& d : diagnostics)
    if (d.severity == Severity::kError) return false;
  return true;
}

void ForeignSession::map_back(Diagnostic& d) const {
  if (d.line == 0 || d.line > origins.size()) return;
  const TranscriptOrigin& o = origins[d.line - 1];
  d.line = o.line;
  d.column = o.column;
  // The written session's entry means nothing to the transcript's reader;
  // the record it came from does.
  d.message = o.record + ": " + d.message;
}

std::int64_t millis_of(const std::string& iso, std::int64_t fallback) {
  const std::int64_t ms = thread_converter::ms_from_iso(iso);
  return ms < 0 ? fallback : ms;
}

std::string entry_id_for(const std::string& key, std::map<std::string, std::string>& taken) {
  for (std::uint64_t seed = 0;; ++seed) {
    std::string id = hex8_id(stable_hash(key, 1469598103934665603ULL + seed));
    auto [it, inserted] = taken.emplace(id, key);
    if (inserted || it->second == key) return id;
  }
}

void read_transcript(std::string transcript, const std::string& file, ForeignSession& out,
                     const std::function<void(TranscriptRecord&&)>& read) {
  TranscriptWriter report(file, out);
  neutralize_lone_surrogates(transcript.data(), transcript.size());
  std::size_t pos = transcript.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  const std::size_t bom = pos;
  for (std::uint64_t line = 1; pos <= transcript.size(); ++line) {
    const std::size_t nl = transcript.find('\n', pos);
    std::size_t end = nl == std::string::npos ? transcript.size() : nl;
    if (end > pos && transcript[end - 1] == '\r') --end;
    const std::string_view text(transcript.data() + pos, end - pos);
    const std::uint64_t first_column = line == 1 ? bom + 1 : 1;
    const std::size_t start = text.find_first_not_of(" \t");
    if (start != std::string_view::npos) {
      TranscriptRecord record;
      rapidjson::Document& doc = record.doc;
      doc.Parse(text.data(), text.size());
      const std::uint64_t column = first_column + start;
      if (doc.HasParseError() && nl == std::string::npos) {
        report.warn(line, first_column + doc.GetErrorOffset(),
                    std::string("the last line is cut off (") + rapidjson::GetParseError_En(doc.GetParseError()) +
                        "); left out",
                    "truncated-last-line");
      } else if (doc.HasParseError()) {
        report.error(line, first_column + doc.GetErrorOffset(),
                     std::string("not JSON: ") + rapidjson::GetParseError_En(doc.GetParseError()),
                     "each line of a transcript is one JSON object");
        return;
      } else if (!doc.IsObject()) {
        report.error(line, column, "a record is a JSON object", "each line of a transcript is one JSON object");
        return;
      } else {
        ++out.records;
        record.line = line;
        record.column = column;
        read(std::move(record));
        if (!out.ok()) return;
      }
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
}

void TranscriptWriter::header(const std::string& session_id, const std::string& timestamp, const std::string& cwd,
                              const TranscriptOrigin& origin) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  write_key_string(w, "type", "session");
  w.Key("version");
  w.Int(3);
  write_key_string(w, "id", session_id);
  write_key_string(w, "timestamp", timestamp);
  write_key_string(w, "cwd", cwd);
  w.EndObject();
  out_.session.append(buffer.GetString(), buffer.GetSize()).push_back('\n');
  out_.origins.push_back(origin);
}

void TranscriptWriter::entry(const char* type, const std::string& id, const std::string& parent,
                             const std::string& timestamp, const TranscriptOrigin& origin,
                             const std::function<void(JsonWriter&)>& write_members) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  write_key_string(w, "type", type);
  write_key_string(w, "id", id);
  w.Key("parentId");
  if (parent.empty())
    w.Null();
  else
    write_string(w, parent);
  write_key_string(w, "timestamp", timestamp);
  write_members(w);
  w.EndObject();
  out_.session.append(buffer.GetString(), buffer.GetSize()).push_back('\n');
  out_.origins.push_back(origin);
}

void TranscriptWriter::error(std::uint64_t line, std::uint64_t column, std::string message, std::string hint) {
  out_.diagnostics.push_back(Diagnostic{Code::kTranscriptInvalid, Severity::kError,
                                        code_info(Code::kTranscriptInvalid).level, file_, line, column,
                                        std::move(message), std::move(hint)});
}

void TranscriptWriter::warn(std::uint64_t line, std::uint64_t column, std::string message, const std::string& repair) {
  out_.diagnostics.push_back(Diagnostic{Code::kTranscriptRecordDropped,
                                        Severity::kWarning,
                                        code_info(Code::kTranscriptRecordDropped).level,
                                        file_,
                                        line,
                                        column,
                                        std::move(message),
                                        {}});
  count(repair);
}

void write_string(JsonWriter& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void write_key_string(JsonWriter& w, const char* key, std::string_view s) {
  w.Key(key);
  write_string(w, s);
}

void begin_message(JsonWriter& w, const char* role) {
  w.Key("message");
  w.StartObject();
  write_key_string(w, "role", role);
  w.Key("content");
  w.StartArray();
}

void begin_tool_result(JsonWriter& w, std::string_view call_id, std::string_view tool_name) {
  w.Key("message");
  w.StartObject();
  write_key_string(w, "role", "toolResult");
  write_key_string(w, "toolCallId", call_id);
  write_key_string(w, "toolName", tool_name);
  w.Key("content");
  w.StartArray();
}

void write_text_block(JsonWriter& w, std::string_view text) {
  w.StartObject();
  write_key_string(w, "type", "text");
  write_key_string(w, "text", text);
  w.EndObject();
}

void write_image_block(JsonWriter& w, std::string_view base64, std::string_view mime_type) {
  w.StartObject();
  write_key_string(w, "type", "image");
  write_key_string(w, "data", base64);
  write_key_string(w, "mimeType", mime_type);
  w.EndObject();
}

void write_object_or_empty(JsonWriter& w, const JsonValue* value) {
  if (value != nullptr && value->IsObject()) {
    value->Accept(w);
    return;
  }
  w.StartObject();
  w.EndObject();
}

void write_usage(JsonWriter& w, std::uint64_t input, std::uint64_t output, std::uint64_t cache_read,
                 std::uint64_t cache_write) {
  w.Key("usage");
  w.StartObject();
  w.Key("input");
  w.Uint64(input);
  w.Key("output");
  w.Uint64(output);
  w.Key("cacheRead");
  w.Uint64(cache_read);
  w.Key("cacheWrite");
  w.Uint64(cache_write);
  w.Key("totalTokens");
  w.Uint64(input + output + cache_read + cache_write);
  w.Key("cost");
  w.StartObject();
  for (const char* k : {"input", "output", "cacheRead", "cacheWrite", "total"}) {
    w.Key(k);
    w.Int(0);
  }
  w.EndObject();
  w.EndObject();
}

}  // namespace pihydrate
