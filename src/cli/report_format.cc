// The three ways a validate run is printed. Only formatting happens here.
#include <ostream>

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/writer.h>

#include "cli/commands.h"

namespace pihydrate {
namespace {

std::string position(const Diagnostic& d) {
  if (d.line == 0) return d.file;
  return d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// GitHub workflow commands escape %, CR and LF in data, and also : and , in
// property values.
std::string github_escape(const std::string& s, bool property) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else if (property && c == ':')
      out += "%3A";
    else if (property && c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

}  // namespace

void write_diagnostic_text(const Diagnostic& d, std::ostream& out) {
  out << position(d) << ": " << severity_name(d.severity) << ": " << d.message << " [" << code_name(d.code) << "]\n";
  if (!d.hint.empty()) out << "    hint: " << d.hint << "\n";
}

void write_diagnostic_json(const Diagnostic& d, JsonWriter& w) {
  w.StartObject();
  w.Key("code");
  w.String(code_name(d.code).c_str());
  w.Key("name");
  w.String(code_info(d.code).slug);
  w.Key("severity");
  w.String(severity_name(d.severity));
  w.Key("level");
  w.String(level_name(d.level));
  w.Key("file");
  w.String(d.file.c_str(), static_cast<rapidjson::SizeType>(d.file.size()));
  w.Key("line");
  w.Uint64(d.line);
  w.Key("column");
  w.Uint64(d.column);
  w.Key("message");
  w.String(d.message.c_str(), static_cast<rapidjson::SizeType>(d.message.size()));
  w.Key("hint");
  w.String(d.hint.c_str(), static_cast<rapidjson::SizeType>(d.hint.size()));
  if (d.unlisted > 0) {  // a summary of findings not listed
    w.Key("unlisted");
    w.Uint64(d.unlisted);
  }
  w.EndObject();
}

void write_text_report(const ValidateRun& run, std::ostream& out) {
  for (const FileReport& r : run.reports) {
    for (const Diagnostic& d : r.diagnostics) write_diagnostic_text(d, out);
    out << r.file << ": ";
    if (!r.complete) {
      out << "NOT fully checked (a pi-hydrate limit was hit, see PH9xx)";
    } else {
      out << (r.loadable ? "loadable" : "NOT loadable") << " by pi " << pi_version_name(run.pi_version) << ", "
          << (r.resumable ? "resumable" : (r.loadable ? "NOT resumable as written" : "not resumable"));
    }
    out << "; " << plural(r.errors, "error", "errors") << ", " << plural(r.warnings, "warning", "warnings")
        << " (level " << level_name(run.level) << ", " << plural(r.entries, "entry", "entries") << ")\n";
  }
}

void write_json_report(const ValidateRun& run, std::ostream& out) {
  rapidjson::OStreamWrapper os(out);
  JsonWriter w(os);
  std::size_t errors = 0, warnings = 0, loadable = 0, resumable = 0;
  w.StartObject();
  w.Key("tool");
  w.String("pi-hydrate validate");
  w.Key("piVersion");
  w.String(pi_version_name(run.pi_version));
  w.Key("level");
  w.String(level_name(run.level));
  w.Key("files");
  w.StartArray();
  for (const FileReport& r : run.reports) {
    errors += r.errors;
    warnings += r.warnings;
    loadable += r.complete && r.loadable;
    resumable += r.complete && r.resumable;
    w.StartObject();
    w.Key("file");
    w.String(r.file.c_str(), static_cast<rapidjson::SizeType>(r.file.size()));
    // Unknown when a limit stopped a check.
    w.Key("complete");
    w.Bool(r.complete);
    w.Key("loadable");
    if (r.complete)
      w.Bool(r.loadable);
    else
      w.Null();
    w.Key("resumable");
    if (r.complete)
      w.Bool(r.resumable);
    else
      w.Null();
    w.Key("lines");
    w.Uint64(r.lines);
    w.Key("entries");
    w.Uint64(r.entries);
    w.Key("errors");
    w.Uint64(r.errors);
    w.Key("warnings");
    w.Uint64(r.warnings);
    w.Key("diagnostics");
    w.StartArray();
    for (const Diagnostic& d : r.diagnostics) write_diagnostic_json(d, w);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("summary");
  w.StartObject();
  w.Key("files");
  w.Uint64(run.reports.size());
  w.Key("loadable");
  w.Uint64(loadable);
  w.Key("resumable");
  w.Uint64(resumable);
  w.Key("errors");
  w.Uint64(errors);
  w.Key("warnings");
  w.Uint64(warnings);
  w.EndObject();
  w.EndObject();
  os.Flush();
  out << "\n";
}

void write_github_report(const ValidateRun& run, std::ostream& out) {
  for (const FileReport& r : run.reports) {
    for (const Diagnostic& d : r.diagnostics) {
      out << "::" << severity_name(d.severity) << " file=" << github_escape(d.file, true);
      if (d.line > 0) out << ",line=" << d.line << ",col=" << d.column;
      out << ",title=" << github_escape(code_name(d.code) + " " + code_info(d.code).slug, true)
          << "::" << github_escape(d.message + "\nhint: " + d.hint, false) << "\n";
    }
  }
}

}  // namespace pihydrate
