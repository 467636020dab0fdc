// convert_thread_export: the rules of docs/thread-export.md (R1-R15)
// from a thread export to a linear session in pi's line format. Tool-call
// pairing, ids and writing are left to hydrate_session, which treats the
// result like any other session (a v1-shaped file: no ids, one chain).
//
// This file runs the phases in order (ThreadConverter::run); each has its own file:
// thread_entries.cc reads and checks the entries, thread_plan.cc decides
// what becomes a line, thread_lines.cc builds the lines.
#include "readers/thread_converter.h"
#include "readers/json_object_text.h"
#include "readers/thread_reading.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>

#include "pihydrate/errors.h"
#include "pihydrate/formats.h"

namespace pihydrate {
namespace thread_converter {

// ISO-8601 for epoch milliseconds, or "" when the time has no four-digit year.
std::string iso_from_ms(std::int64_t ms) {
  constexpr std::int64_t kMaxMs = 253402300799999;     // 9999-12-31T23:59:59.999Z
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

std::vector<ReadEntry> ThreadConverter::read_only() {
  std::vector<ReadEntry> read;
  if (!read_envelopes()) return read;
  const RuleEntries table = rule_entries();
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    const RuleEntry& r = table[i];
    ReadEntry e;
    e.index = envs_[i].index;
    e.kind = r.kind;
    e.role = r.role;
    e.has_stream_key = r.has_stream_key;
    e.id = std::string(r.id);
    e.ref = std::string(r.ref);
    e.stream_key = std::string(r.stream_key);
    e.final_timestamp = std::string(r.final_timestamp);
    read.push_back(std::move(e));
  }
  return read;
}

void ThreadConverter::run() {
  if (!read_envelopes()) return;
  // pi's own entries, one row per line they carry (raw_thread.cc).
  if (raw_ && !expand_raw_entries()) return;
  JsonRef created = doc_.member(thread_, "createdAt");
  if (doc_.kind(created) == RefKind::kString && is_iso8601(doc_.string_value(created))) {
    out_.timestamp = doc_.string_value(created);
  } else if (std::int64_t ms = 0;
             doc_.kind(created) == RefKind::kNumber && parse_int64(doc_.raw(created), ms) && !iso_from_ms(ms).empty()) {
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
  if (in_memory()) out_.session.reserve(doc_.bytes().size() + 4096);
  if (!raw_header_.empty()) {
    // X2: pi's header, whose id and time are hydrated as --session hydrates them.
    emit_line(raw_header_, true);
    out_.origins.push_back(raw_header_origin_);
  } else {
    // R1; made v3 when raw lines come, since the lines then have ids.
    JsonObjectText header;
    header.string("type", "session")
        .string("id", out_.session_id)
        .string("timestamp", out_.timestamp)
        .string("cwd", "/");
    if (raw_) header.raw("version", "3");
    emit_line(header.text());
    out_.origins.push_back(thread_origin);
  }
  // X5, X6: with raw entries, each line after the header is linked as it is written.
  if (raw_) start_linking();
  // Each phase walks the export front to back; what it touched may leave
  // memory when it ends (see ExportResidency).
  doc_.release_before(doc_.bytes().size());
  {
    const EnvelopesById by_id = envelopes_by_id();
    plan(by_id);
    resolve_compaction_refs(by_id);
  }
  doc_.release_before(doc_.bytes().size());
  drop_envelopes_that_give_nothing();
  out_.origins.reserve(out_.origins.size() + envs_.size() + 4);  // about a line each, and the trailer
  emit_all();

  // R12: the trailer restores the name, the model and the thinking level.
  std::vector<std::pair<std::string, ThreadOrigin>> trailer;
  if (options_.trailer && wants_trailer()) {
    std::string ts = last_ts_.empty() ? out_.timestamp : last_ts_;
    JsonRef title = doc_.member(thread_, "title");
    if (doc_.kind(title) == RefKind::kString && !doc_.string_value(title).empty())
      trailer.push_back(
          {JsonObjectText().string("type", "session_info").string("timestamp", ts).raw("name", doc_.raw(title)).text(),
           thread_origin});
    JsonRef model = doc_.member(thread_, "model");
    std::string provider = doc_.string_value(doc_.member(model, "provider"));
    std::string model_id = doc_.string_value(doc_.member(model, "modelId"));
    if (provider.empty() || model_id.empty()) {
      read_last_model();
      provider = last_provider_, model_id = last_model_;
    }
    if (!provider.empty() && !model_id.empty())
      trailer.push_back({JsonObjectText()
                             .string("type", "model_change")
                             .string("timestamp", ts)
                             .string("provider", provider)
                             .string("modelId", model_id)
                             .text(),
                         thread_origin});
    JsonRef level = doc_.member(thread_, "thinkingLevel");
    if (doc_.kind(level) == RefKind::kString)
      trailer.push_back({JsonObjectText()
                             .string("type", "thinking_level_change")
                             .string("timestamp", ts)
                             .raw("thinkingLevel", doc_.raw(level))
                             .text(),
                         thread_origin});
  }

  for (auto& [line, origin] : trailer) {
    emit_line(line);
    out_.origins.push_back(origin);
  }
  flush_spool();
  if (raw_) finish_linking();
  out_.spooled = !in_memory();
  out_.origin_ids = std::move(ids_);
}

}  // namespace thread_converter

using thread_converter::ThreadConverter;

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

Diagnostic thread_export_diagnostic(Severity severity, const std::string& file, std::uint64_t line,
                                    std::uint64_t column, const std::string& path, const std::string& message) {
  Diagnostic d;
  d.code = severity == Severity::kError ? Code::kThreadExportInvalid : Code::kThreadEntrySkipped;
  d.severity = severity;
  d.level = Level::kLoad;
  d.file = file;
  d.line = line;
  d.column = column;
  d.message = path.empty() ? message : path + ": " + message;
  return d;
}

// Parses the export into `doc` (lone surrogates repaired first when the
// quick check is not sure of the bytes): false, with the error in `out`,
// when it is not JSON. `options.borrow_from_export` is turned off when bytes
// were rewritten, since they are then not the file's.
bool parse_export(char* bytes, std::size_t size, const std::string& file, ThreadOptions& options, ThreadDocument& doc,
                  ConvertedThread& out) {
  ExportResidency* residency = options.residency;
  const std::string_view view(bytes, size);
  // Nearly every export is plain JSON without an escaped UTF-16 surrogate,
  // and the quick check proves it (it gives up on any): nothing to repair.
  // Otherwise lone surrogates are repaired first and the export read again.
  doc.set_residency(residency);
  bool parsed = doc.parse_plain(view, options.max_depth);
  bool any_rewritten = false;
  if (!parsed) {
    std::function<void(std::size_t)> rewritten = [residency, &any_rewritten](std::size_t at) {
      any_rewritten = true;
      if (residency) residency->rewritten(at, at + 4);
    };
    neutralize_lone_surrogates(bytes, size, rewritten, doc.release_progress());
    if (residency) residency->release_before(size);
    doc = ThreadDocument();
    doc.set_residency(residency);
    parsed = doc.parse(view, options.max_depth);
  }
  if (!parsed) {
    std::uint64_t line = 0, column = 0;
    doc.position(doc.error_offset, line, column);
    out.diagnostics.push_back(thread_export_diagnostic(Severity::kError, file, line, column, "",
                                                       "not a thread export: invalid JSON (" + doc.error + ")"));
    return false;
  }
  if (any_rewritten) options.borrow_from_export = false;
  return true;
}

ConvertedThread convert_thread_export(char* bytes, std::size_t size, const std::string& file,
                                      const ThreadOptions& options) {
  ConvertedThread out;
  ThreadDocument doc;
  ThreadOptions converter_options = options;
  ThreadConverter converter(doc, file, converter_options, out);
  if (!parse_export(bytes, size, file, converter_options, doc, out)) return out;
  converter.run();
  converter.close_findings();
  return out;
}

ReadThread read_thread_fast(std::string bytes, const std::string& file, const ThreadOptions& options) {
  ReadThread read;
  ConvertedThread out;
  ThreadDocument doc;
  ThreadOptions converter_options = options;
  ThreadConverter converter(doc, file, converter_options, out);
  read.json_valid = parse_export(bytes.data(), bytes.size(), file, converter_options, doc, out);
  if (read.json_valid) read.entries = converter.read_only();
  converter.close_findings();
  read.entry_count = out.entry_count;
  read.diagnostics = std::move(out.diagnostics);
  read.repairs = std::move(out.repairs);
  return read;
}

}  // namespace pihydrate
