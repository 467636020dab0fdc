// `pi-hydrate context`: the conversation pi sends when it resumes a session,
// as text or JSON. The work is the library's (resume_context, pihydrate.h);
// this file parses the options and prints.

#include <ostream>
#include <sstream>

#include <cxxopts.hpp>

#include "cli/commands.h"
#include "pihydrate/cli.h"
#include "pihydrate/errors.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {
namespace {

const char* kContextHelp = R"(
Shows the conversation pi sends to the model when it resumes FILE: the
messages after the latest compaction, pi's conversion (convertToLlm: summaries,
bash executions and custom messages become user messages) and pi-ai's repairs
(transformMessages: error and aborted turns skipped, "No result provided" for
a call without a result, thinking of another model dropped). Each message
names the line it comes from; what pi dropped is listed with the reason.
Texts are cut to 100 characters unless --full. FILE `-` reads standard input.
The header cwd is not checked (validate does). A file of another format (see
pi-hydrate --session --help) is converted first, as pi-hydrate --session
converts it: this is what pi sends once it is converted. --from names the
format instead of finding it from the first lines.

Exit codes: 0 shown; 1 pi does not load the file, or pi-ai throws building the
request (the reason is printed with its line); 2 usage or I/O failure, or no
entry has the --leaf id or --label.

Examples:
  pi-hydrate context session.jsonl
  pi-hydrate context --pi-version 0.78 --full session.jsonl
  pi-hydrate context --format json session.jsonl | jq '.messages[] | .role'
  pi-hydrate context --label before-refactor session.jsonl
  pi-hydrate context ~/.codex/sessions/2026/11/26/rollout-<time>-<id>.jsonl
)";

constexpr std::size_t kShortChars = 100;  // code points of a shortened text

// The first `max` code points of `text`, and "…" when there was more.
std::string shorten(const std::string& text, std::size_t max) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (count++ == max) return text.substr(0, i) + "…";
  }
  return text;
}

// One line, control characters written as JSON escapes.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string shown(const SentValue& v) {
  if (v.kind == JsonKind::kMissing) return "(none)";
  if (v.kind == JsonKind::kString) return quote_for_message(v.text);
  return v.text;
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string drop_explanation(const DroppedEntry& d) {
  switch (d.reason) {
    case DropReason::kBeforeFirstKept:
      return "before the first kept entry of the compaction at line " + std::to_string(d.by_line);
    case DropReason::kEmptyBranchSummary: return "the branch summary is empty: pi skips it";
    case DropReason::kBashExcluded: return "excludeFromContext (a !! command): convertToLlm leaves it out";
    case DropReason::kUnknownRole: return "convertToLlm knows no such role and leaves it out";
    case DropReason::kSystemRole: return "this pi version's convertToLlm leaves system messages out";
    case DropReason::kSystemBeforeCompaction:
      return "a system message before the compaction at line " + std::to_string(d.by_line) + ": pi leaves it out";
    case DropReason::kContextEditRemoved: return "removed by the context_edit at line " + std::to_string(d.by_line);
    case DropReason::kErrorAssistant: return "stopReason \"error\": pi-ai skips error and aborted turns";
    case DropReason::kAbortedAssistant: return "stopReason \"aborted\": pi-ai skips error and aborted turns";
  }
  return "";
}

void write_text_block(const std::string& text, bool full, std::ostream& out) {
  if (!full) {
    out << "    \"" << shorten(one_line(text), kShortChars) << "\"\n";
    return;
  }
  std::istringstream lines(text);
  std::string line;
  bool any = false;
  while (std::getline(lines, line)) {
    out << (line.empty() ? "    |" : "    | ") << line << "\n";
    any = true;
  }
  if (!any) out << "    |\n";
}

// The text report comes in three parts, so the messages can be written as
// they arrive: the head (how many, the model), each message, the tail.
void write_text_head(const std::string& file, const ResumeContext& rc, std::ostream& out) {
  out << file << ": pi " << pi_version_name(rc.version) << " sends " << plural(rc.message_count, "message", "messages");
  if (rc.leaf >= 0) {
    out << " (leaf: line " << rc.leaf_line;
    if (rc.leaf_id) out << ", id " << quote_for_message(*rc.leaf_id);
    out << ")";
  }
  out << "\n";
  out << "model: " << rc.model.provider << "/" << rc.model.id << " (api " << rc.model.api << ")\n";
}

void write_text_message(std::size_t number, const SentMessage& m, bool full, std::ostream& out) {
  out << "[" << number << "] " << m.role;
  if (m.role == "toolResult") out << " for " << shown(m.tool_call_id) << (m.is_error ? " (isError)" : "");
  if (m.source == SentSource::kSynthesized) {
    out << ", synthesized by pi-ai: the call at line " << m.call_line << " has no result before the next turn\n";
  } else {
    out << ", from " << sent_source_name(m.source) << " at line " << m.line;
    if (m.entry_id.kind != JsonKind::kMissing) out << " (id " << shown(m.entry_id) << ")";
    out << "\n";
  }
  for (const std::string& text : m.texts) write_text_block(text, full, out);
  for (const SentToolCall& c : m.tool_calls) {
    std::string args = full ? c.arguments : shorten(c.arguments, kShortChars);
    out << "    toolCall " << shown(c.id) << " " << shown(c.name) << " " << args << "\n";
  }
  std::vector<std::string> notes;
  if (m.images) notes.push_back(plural(m.images, "image", "images"));
  if (m.thinking) notes.push_back(plural(m.thinking, "thinking block", "thinking blocks") + " sent");
  if (m.thinking_as_text)
    notes.push_back(plural(m.thinking_as_text, "thinking block", "thinking blocks") + " of another model sent as text");
  if (m.thinking_dropped)
    notes.push_back(plural(m.thinking_dropped, "thinking block", "thinking blocks") +
                    " dropped (another model's, or empty)");
  if (m.edited) notes.push_back("content replaced by a context_edit");
  if (m.orphan) notes.push_back("no call of the turn before it has this id: providers reject the request");
  for (const std::string& n : notes) out << "    (" << n << ")\n";
}

void write_text_tail(const ResumeContext& rc, std::ostream& out) {
  if (rc.dropped.empty()) return;
  out << "dropped by pi (" << rc.dropped.size() << "):\n";
  for (const DroppedEntry& d : rc.dropped)
    out << "  line " << d.line << ": " << d.what << ": " << drop_explanation(d) << "\n";
}

void write_value(const SentValue& v, JsonWriter& w) {
  switch (v.kind) {
    case JsonKind::kMissing:
    case JsonKind::kNull: w.Null(); break;
    case JsonKind::kString: w.String(v.text.c_str(), static_cast<rapidjson::SizeType>(v.text.size())); break;
    default: w.RawValue(v.text.c_str(), v.text.size(), rapidjson::kObjectType); break;
  }
}

void write_string(const std::string& s, JsonWriter& w) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}

// A line number, or null for none (0).
void write_line(std::uint64_t line, JsonWriter& w) {
  if (line)
    w.Uint64(line);
  else
    w.Null();
}

// "leaf": the entry pi resumes from, or null.
void write_leaf(const ResumeContext& rc, JsonWriter& w) {
  if (rc.leaf < 0) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("line");
  w.Uint64(rc.leaf_line);
  w.Key("id");
  if (rc.leaf_id)
    write_string(*rc.leaf_id, w);
  else
    w.Null();
  w.EndObject();
}

// "model": the resumed model, or null when pi does not load the file.
void write_model(const ResumeContext& rc, JsonWriter& w) {
  if (!rc.loads) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("provider");
  write_string(rc.model.provider, w);
  w.Key("id");
  write_string(rc.model.id, w);
  w.Key("api");
  write_string(rc.model.api, w);
  w.EndObject();
}

// "requestError": what pi-ai throws building the request, or null.
void write_request_error(const ResumeContext& rc, JsonWriter& w) {
  if (rc.request_error.empty()) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("line");
  w.Uint64(rc.request_error_line);
  w.Key("message");
  write_string(rc.request_error, w);
  w.EndObject();
}

void write_tool_call(const SentToolCall& c, bool full, JsonWriter& w) {
  w.StartObject();
  w.Key("id");
  write_value(c.id, w);
  w.Key("name");
  write_value(c.name, w);
  w.Key("arguments");
  write_string(full ? c.arguments : shorten(c.arguments, kShortChars), w);
  w.EndObject();
}

// One message of "messages", as docs/context.md lists its members.
void write_message(const SentMessage& m, bool full, JsonWriter& w) {
  w.StartObject();
  w.Key("role");
  write_string(m.role, w);
  w.Key("from");
  w.String(sent_source_name(m.source));
  w.Key("line");
  write_line(m.line, w);
  w.Key("entryId");
  write_value(m.entry_id, w);
  w.Key("texts");
  w.StartArray();
  for (const std::string& t : m.texts) write_string(full ? t : shorten(t, kShortChars), w);
  w.EndArray();
  w.Key("toolCalls");
  w.StartArray();
  for (const SentToolCall& c : m.tool_calls) write_tool_call(c, full, w);
  w.EndArray();
  w.Key("toolCallId");
  if (m.role == "toolResult")
    write_value(m.tool_call_id, w);
  else
    w.Null();
  w.Key("isError");
  w.Bool(m.is_error);
  w.Key("orphan");
  w.Bool(m.orphan);
  w.Key("images");
  w.Uint64(m.images);
  w.Key("thinking");
  w.StartObject();
  w.Key("sent");
  w.Uint64(m.thinking);
  w.Key("asText");
  w.Uint64(m.thinking_as_text);
  w.Key("dropped");
  w.Uint64(m.thinking_dropped);
  w.EndObject();
  w.Key("edited");
  w.Bool(m.edited);
  w.Key("callLine");
  if (m.source == SentSource::kSynthesized)
    w.Uint64(m.call_line);
  else
    w.Null();
  w.EndObject();
}

// One entry of "dropped": what pi left out, and why.
void write_dropped(const DroppedEntry& d, JsonWriter& w) {
  w.StartObject();
  w.Key("line");
  w.Uint64(d.line);
  w.Key("entryId");
  write_value(d.entry_id, w);
  w.Key("what");
  write_string(d.what, w);
  w.Key("reason");
  w.String(drop_reason_name(d.reason));
  w.Key("byLine");
  write_line(d.by_line, w);
  w.EndObject();
}

// The JSON report, in two parts around the messages (write_message each).
void write_json_head(const ContextReport& report, JsonWriter& w) {
  const ResumeContext& rc = report.context;
  w.StartObject();
  w.Key("tool");
  w.String("pi-hydrate context");
  w.Key("file");
  write_string(report.file, w);
  w.Key("format");
  write_string(report.format, w);
  w.Key("conversion");
  w.StartArray();
  for (const Diagnostic& d : report.conversion) write_diagnostic_json(d, w);
  w.EndArray();
  w.Key("piVersion");
  w.String(pi_version_name(rc.version));
  w.Key("loadable");
  w.Bool(rc.loads);
  w.Key("leaf");
  write_leaf(rc, w);
  w.Key("model");
  write_model(rc, w);
  w.Key("requestError");
  write_request_error(rc, w);
  w.Key("messages");
  w.StartArray();
}

void write_json_tail(const ContextReport& report, const Diagnostics& load_errors, JsonWriter& w) {
  const ResumeContext& rc = report.context;
  w.EndArray();
  w.Key("dropped");
  w.StartArray();
  for (const DroppedEntry& d : rc.dropped) write_dropped(d, w);
  w.EndArray();
  w.Key("diagnostics");
  w.StartArray();
  for (const Diagnostic& d : load_errors) write_diagnostic_json(d, w);
  w.EndArray();
  w.EndObject();
}

cxxopts::Options context_options() {
  cxxopts::Options options("pi-hydrate context", "Show the conversation pi sends when it resumes a session.");
  options.custom_help("[options]");
  options.positional_help("FILE|-");
  options.add_options()("pi-version", pi_version_option_help("Build the request"),
                        cxxopts::value<std::string>()->default_value(pi_version_name(newest_pi_version())))(
      "format", "Output: text or json", cxxopts::value<std::string>()->default_value("text"))(
      "full", "Show whole texts and arguments")("leaf", "Resume from this entry id instead of pi's leaf",
                                                cxxopts::value<std::string>())(
      "label", "Resume from the entry carrying this label", cxxopts::value<std::string>())(
      "from", from_option_help(), cxxopts::value<std::string>())("h,help", "Print this help")(
      "files", "Session file", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"files"});
  return options;
}

// What the options ask for.
struct ContextSettings {
  ContextOptions request;
  std::string format;  // text or json
  bool full = false;   // --full: whole texts and arguments
  std::string path;    // FILE, or - for standard input
};

// The options' values, checked. False, with the message on `err`, on a
// usage error.
bool read_settings(const cxxopts::ParseResult& parsed, ContextSettings& s, std::ostream& err) {
  s.format = parsed["format"].as<std::string>();
  if (s.format != "text" && s.format != "json") {
    err << "pi-hydrate: error: --format must be text or json, not '" << s.format << "'\n";
    return false;
  }
  std::string version_error;
  if (!read_pi_version_option(parsed["pi-version"].as<std::string>(), s.request.pi_version, version_error)) {
    err << "pi-hydrate: error: " << version_error << "\n";
    return false;
  }
  if (parsed.count("leaf") && parsed.count("label")) {
    err << "pi-hydrate: error: --leaf and --label cannot be used together\n";
    return false;
  }
  const auto files =
      parsed.count("files") ? parsed["files"].as<std::vector<std::string>>() : std::vector<std::string>();
  if (files.size() != 1) {
    err << "pi-hydrate: error: context takes one FILE\nRun 'pi-hydrate context --help' for the options.\n";
    return false;
  }
  s.path = files[0];
  s.full = parsed.count("full") > 0;
  if (parsed.count("from")) {
    std::string error;
    if (!read_from_option(parsed["from"].as<std::string>(), error)) {
      err << "pi-hydrate: error: " << error << "\n";
      return false;
    }
    s.request.from = parsed["from"].as<std::string>();
  }
  if (parsed.count("leaf")) s.request.leaf_id = parsed["leaf"].as<std::string>();
  if (parsed.count("label")) s.request.label = parsed["label"].as<std::string>();
  return true;
}

// Writes the report as it arrives: its head and each message while the
// library reads them (resume_context streams them), the rest at the end.
class ReportWriter {
 public:
  ReportWriter(const ContextSettings& s, std::ostream& out) : s_(s), out_(out), os_(out), w_(os_) {}

  void head(const ContextReport& report) {
    started_ = true;
    if (json()) {
      write_json_head(report, w_);
      return;
    }
    write_conversion_text(report.file, report.format, report.conversion, !report.not_converted, out_);
    write_text_head(report.file, report.context, out_);
  }
  void message(const SentMessage& m) {
    if (json())
      write_message(m, s_.full, w_);
    else
      write_text_message(++written_, m, s_.full, out_);
  }
  // The rest of the report; the exit code.
  int finish(const ContextReport& report);

 private:
  bool json() const { return s_.format == "json"; }

  const ContextSettings& s_;
  std::ostream& out_;
  rapidjson::OStreamWrapper os_;
  JsonWriter w_;
  bool started_ = false;  // head() was called: messages are being sent
  std::size_t written_ = 0;
};

int ReportWriter::finish(const ContextReport& report) {
  const ResumeContext& rc = report.context;
  const std::string& name = report.file;
  const Diagnostics& load_errors = report.errors;
  if (json()) {
    if (!started_) write_json_head(report, w_);
    write_json_tail(report, rc.loads ? Diagnostics{} : load_errors, w_);
    os_.Flush();
    out_ << "\n";
  } else if (started_) {
    write_text_tail(rc, out_);
  } else {
    write_conversion_text(name, report.format, report.conversion, !report.not_converted, out_);
    if (report.not_converted) {
      out_ << name << ": nothing is sent\n";
    } else if (!rc.loads) {
      for (const Diagnostic& d : load_errors) write_diagnostic_text(d, out_);
      out_ << name << ": NOT loadable by pi " << pi_version_name(s_.request.pi_version) << ": nothing is sent\n";
    }
  }
  if (!rc.loads) return kExitFindings;
  if (!rc.request_error.empty()) {
    if (!json())
      out_ << name << ":" << rc.request_error_line << ": error: pi loads this file, but pi-ai throws building every "
           << "request (" << rc.request_error << "): nothing is sent\n";
    return kExitFindings;
  }
  return kExitOk;
}

}  // namespace

int run_context(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
                bool /*own_process: context changes no process-wide state*/) {
  cxxopts::Options options = context_options();
  std::vector<const char*> argv{"pi-hydrate context"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& e) {
    err << "pi-hydrate: error: " << e.what() << "\nRun 'pi-hydrate context --help' for the options.\n";
    return kExitUsage;
  }
  if (parsed.count("help")) {
    out << options.help() << kContextHelp;
    return kExitOk;
  }
  ContextSettings settings;
  if (!read_settings(parsed, settings, err)) return kExitUsage;
  const std::string& path = settings.path;
  ReportWriter writer(settings, out);
  const ContextReport report = resume_context(
      path == "-" ? Input::stream(in, "<stdin>") : Input::file(path), settings.request,
      [&writer](const ContextReport& r) { writer.head(r); }, [&writer](SentMessage&& m) { writer.message(m); });
  if (!report.bad_branch.empty()) {
    for (const Diagnostic& d : report.bad_branch) write_diagnostic_text(d, err);
    return kExitUsage;
  }
  return writer.finish(report);
}

}  // namespace pihydrate
