// `pi-hydrate context`: the conversation pi sends when it resumes a session,
// as text or JSON. The messages come from the library (build_resume_context);
// this file parses the options, picks the branch and prints.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <ostream>
#include <sstream>

#include <cxxopts.hpp>

#include "cli/commands.h"
#include "hydrate/job_files.h"
#include "hydrate/plan.h"
#include "pihydrate/cli.h"
#include "pihydrate/context.h"
#include "pihydrate/errors.h"

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
The header cwd is not checked (validate does).

Exit codes: 0 shown; 1 pi does not load the file, or pi-ai throws building the
request (the reason is printed with its line); 2 usage or I/O failure, or no
entry has the --leaf id or --label.

Examples:
  pi-hydrate context session.jsonl
  pi-hydrate context --pi-version 0.78 --full session.jsonl
  pi-hydrate context --format json session.jsonl | jq '.messages[] | .role'
  pi-hydrate context --label before-refactor session.jsonl
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
    case DropReason::kSystemRole: return "pi 0.78's convertToLlm leaves system messages out";
    case DropReason::kSystemBeforeCompaction:
      return "a system message before the compaction at line " + std::to_string(d.by_line) + ": pi 1.5 leaves it out";
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

void write_text(const std::string& file, const ResumeContext& rc, const PiView& view, const SessionIndex& index,
                bool full, std::ostream& out) {
  out << file << ": pi " << pi_version_name(rc.version) << " sends "
      << plural(rc.messages.size(), "message", "messages");
  if (rc.leaf >= 0) {
    const Entry& leaf = view.entry(index, static_cast<std::uint32_t>(rc.leaf));
    out << " (leaf: line " << leaf.line;
    if (leaf.id.is_string()) out << ", id " << quote_for_message(leaf.id.text());
    out << ")";
  }
  out << "\n";
  out << "model: " << rc.model.provider << "/" << rc.model.id << " (api " << rc.model.api << ")\n";
  for (std::size_t i = 0; i < rc.messages.size(); ++i) {
    const SentMessage& m = rc.messages[i];
    out << "[" << i + 1 << "] " << m.role;
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
      notes.push_back(plural(m.thinking_as_text, "thinking block", "thinking blocks") +
                      " of another model sent as text");
    if (m.thinking_dropped)
      notes.push_back(plural(m.thinking_dropped, "thinking block", "thinking blocks") +
                      " dropped (another model's, or empty)");
    if (m.edited) notes.push_back("content replaced by a context_edit");
    if (m.orphan) notes.push_back("no call of the turn before it has this id: providers reject the request");
    for (const std::string& n : notes) out << "    (" << n << ")\n";
  }
  if (!rc.dropped.empty()) {
    out << "dropped by pi (" << rc.dropped.size() << "):\n";
    for (const DroppedEntry& d : rc.dropped)
      out << "  line " << d.line << ": " << d.what << ": " << drop_explanation(d) << "\n";
  }
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

void write_json(const std::string& file, const ResumeContext& rc, const PiView& view, const SessionIndex& index,
                bool full, const Diagnostics& load_errors, std::ostream& out) {
  rapidjson::OStreamWrapper os(out);
  JsonWriter w(os);
  w.StartObject();
  w.Key("tool");
  w.String("pi-hydrate context");
  w.Key("file");
  write_string(file, w);
  w.Key("piVersion");
  w.String(pi_version_name(rc.version));
  w.Key("loadable");
  w.Bool(rc.loads);
  w.Key("leaf");
  if (rc.leaf >= 0) {
    const Entry& leaf = view.entry(index, static_cast<std::uint32_t>(rc.leaf));
    w.StartObject();
    w.Key("line");
    w.Uint64(leaf.line);
    w.Key("id");
    if (leaf.id.is_string())
      write_string(std::string(leaf.id.text()), w);
    else
      w.Null();
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("model");
  if (rc.loads) {
    w.StartObject();
    w.Key("provider");
    write_string(rc.model.provider, w);
    w.Key("id");
    write_string(rc.model.id, w);
    w.Key("api");
    write_string(rc.model.api, w);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("requestError");
  if (!rc.request_error.empty()) {
    w.StartObject();
    w.Key("line");
    w.Uint64(rc.request_error_line);
    w.Key("message");
    write_string(rc.request_error, w);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("messages");
  w.StartArray();
  for (const SentMessage& m : rc.messages) {
    w.StartObject();
    w.Key("role");
    write_string(m.role, w);
    w.Key("from");
    w.String(sent_source_name(m.source));
    w.Key("line");
    if (m.line)
      w.Uint64(m.line);
    else
      w.Null();
    w.Key("entryId");
    write_value(m.entry_id, w);
    w.Key("texts");
    w.StartArray();
    for (const std::string& t : m.texts) write_string(full ? t : shorten(t, kShortChars), w);
    w.EndArray();
    w.Key("toolCalls");
    w.StartArray();
    for (const SentToolCall& c : m.tool_calls) {
      w.StartObject();
      w.Key("id");
      write_value(c.id, w);
      w.Key("name");
      write_value(c.name, w);
      w.Key("arguments");
      write_string(full ? c.arguments : shorten(c.arguments, kShortChars), w);
      w.EndObject();
    }
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
  w.EndArray();
  w.Key("dropped");
  w.StartArray();
  for (const DroppedEntry& d : rc.dropped) {
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
    if (d.by_line)
      w.Uint64(d.by_line);
    else
      w.Null();
    w.EndObject();
  }
  w.EndArray();
  w.Key("diagnostics");
  w.StartArray();
  for (const Diagnostic& d : load_errors) write_diagnostic_json(d, w);
  w.EndArray();
  w.EndObject();
  os.Flush();
  out << "\n";
}

}  // namespace

int run_context(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
                bool /*own_process: context changes no process-wide state*/) {
  cxxopts::Options options("pi-hydrate context", "Show the conversation pi sends when it resumes a session.");
  options.custom_help("[options]");
  options.positional_help("FILE|-");
  options.add_options()("pi-version", "Follow this pi version: 0.78 or 1.5",
                        cxxopts::value<std::string>()->default_value("1.5"))(
      "format", "Output: text or json", cxxopts::value<std::string>()->default_value("text"))(
      "full", "Show whole texts and arguments")("leaf", "Resume from this entry id instead of pi's leaf",
                                                cxxopts::value<std::string>())(
      "label", "Resume from the entry carrying this label", cxxopts::value<std::string>())("h,help", "Print this help")(
      "files", "Session file", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"files"});
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
  const std::string format = parsed["format"].as<std::string>();
  if (format != "text" && format != "json") {
    err << "pi-hydrate: error: --format must be text or json, not '" << format << "'\n";
    return kExitUsage;
  }
  auto version = parse_pi_version(parsed["pi-version"].as<std::string>());
  if (!version) {
    err << "pi-hydrate: error: --pi-version must be 0.78 or 1.5, not '" << parsed["pi-version"].as<std::string>()
        << "'\n";
    return kExitUsage;
  }
  if (parsed.count("leaf") && parsed.count("label")) {
    err << "pi-hydrate: error: --leaf and --label cannot be used together\n";
    return kExitUsage;
  }
  const auto files =
      parsed.count("files") ? parsed["files"].as<std::vector<std::string>>() : std::vector<std::string>();
  if (files.size() != 1) {
    err << "pi-hydrate: error: context takes one FILE\nRun 'pi-hydrate context --help' for the options.\n";
    return kExitUsage;
  }
  const bool full = parsed.count("full") > 0;

  // The index keeps positions; the path's lines are read again from the file (or the bytes read from stdin).
  const std::string& path = files[0];
  std::string stdin_bytes;
  Fd file;
  SessionIndex index;
  std::string name = path;
  if (path == "-") {
    stdin_bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    name = "<stdin>";
    auto source = make_memory_source(stdin_bytes);
    index = build_session_index(*source, name);
  } else {
    file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file.fd < 0) throw IoError("cannot open " + path + ": " + std::strerror(errno));
    index = build_file_index(file.fd, path);
  }
  LineText line_text = [&](const Entry& e) {
    if (path == "-") return stdin_bytes.substr(e.offset, e.length);
    std::string text(e.length, '\0');
    std::size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::pread(file.fd, &text[done], text.size() - done, static_cast<off_t>(e.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw IoError("cannot read " + path + ": " + std::strerror(errno));
      if (n == 0) throw IoError(path + " changed while it was read");
      done += static_cast<std::size_t>(n);
    }
    return text;
  };

  PiView view = build_pi_view(index, *version);
  ValidateOptions vo;
  vo.level = Level::kLoad;
  vo.pi_version = *version;
  vo.check_cwd = false;
  FileReport report = validate_index(index, view, vo);
  Diagnostics load_errors;
  for (const Diagnostic& d : report.diagnostics)
    if (d.severity == Severity::kError) load_errors.push_back(d);

  if (report.loadable && view.loads() && (parsed.count("leaf") || parsed.count("label"))) {
    HydrateOptions ho;
    ho.pi_version = *version;
    if (parsed.count("leaf")) ho.leaf_id = parsed["leaf"].as<std::string>();
    if (parsed.count("label")) ho.label = parsed["label"].as<std::string>();
    HydrateReport branch;
    std::vector<std::uint32_t> branch_path;
    if (!select_path(index, view, ho, branch_path, branch)) {
      for (const Diagnostic& d : branch.diagnostics) write_diagnostic_text(d, err);
      return kExitUsage;
    }
    view.path = std::move(branch_path);
    rebuild_context(index, view);
    if (!view.loads()) {
      Diagnostic d;
      d.code = Code::kMessageMissing;
      d.severity = Severity::kError;
      d.level = Level::kLoad;
      d.file = index.file;
      d.line = view.failure_line;
      d.column = 1;
      d.message =
          "pi " + std::string(pi_version_name(*version)) + " crashes building this branch's context: " + view.failure;
      load_errors.push_back(d);
    }
  }
  ResumeContext rc;
  rc.version = *version;
  if (report.loadable && view.loads()) rc = build_resume_context(index, view, line_text);
  if (!rc.loads && load_errors.empty()) {
    Diagnostic d;
    d.code = Code::kMessageMissing;
    d.severity = Severity::kError;
    d.level = Level::kLoad;
    d.file = index.file;
    d.line = view.failure_line;
    d.message = "pi " + std::string(pi_version_name(*version)) + " does not load this file: " + view.failure;
    load_errors.push_back(d);
  }

  if (format == "json") {
    write_json(name, rc, view, index, full, rc.loads ? Diagnostics{} : load_errors, out);
  } else if (!rc.loads) {
    for (const Diagnostic& d : load_errors) write_diagnostic_text(d, out);
    out << name << ": NOT loadable by pi " << pi_version_name(*version) << ": nothing is sent\n";
  } else if (rc.request_error.empty()) {
    write_text(name, rc, view, index, full, out);
  }
  if (!rc.loads) return kExitFindings;
  if (!rc.request_error.empty()) {
    if (format == "text")
      out << name << ":" << rc.request_error_line << ": error: pi loads this file, but pi-ai throws building every "
          << "request (" << rc.request_error << "): nothing is sent\n";
    return kExitFindings;
  }
  return kExitOk;
}

}  // namespace pihydrate
