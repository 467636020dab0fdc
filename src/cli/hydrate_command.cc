// `pi-hydrate --session in.jsonl --cwd DIR -o out.jsonl`: options, the
// request they make, and the summary. The work, from reading the input to
// committing the output, is the library's (hydrate_session, hydrate_thread,
// hydrate_events).
#include <algorithm>
#include <map>
#include <mutex>
#include <ostream>
#include <sstream>

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/writer.h>
#include <boost/filesystem.hpp>
#include <cxxopts.hpp>

#include "cli/commands.h"
#include "cli/progress.h"
#include "pihydrate/cli.h"
#include "pihydrate/errors.h"
#include "pihydrate/output_file.h"
#include "pihydrate/pi_paths.h"
#include "pihydrate/pihydrate.h"
#include "pihydrate/reader.h"

namespace pihydrate {
namespace {

namespace fs = boost::filesystem;

const char* kHydrateHelp = R"HELP(
Writes a clean, linear v3 session that `pi --session FILE` resumes with the
same context, in a new working directory. The input is read exactly as pi
reads it (skipped lines, v1/v2 migration, the last entry as leaf); what pi
would drop is reported as a warning with its line.

Output: -o FILE (or -o - for stdout), --session-dir DIR (writes
DIR/<timestamp>_<session id>.jsonl, pi's --session-dir layout) or
--agent-dir DIR (writes DIR/sessions/--<encoded cwd>--/<timestamp>_<id>.jsonl).
With none of them, the session goes where pi itself looks, so that
`pi --continue` run in --cwd resumes it: $PI_CODING_AGENT_SESSION_DIR if set,
else "sessionDir" of pi's settings.json, else
$PI_CODING_AGENT_DIR/sessions/--<encoded cwd>--/ (PI_CODING_AGENT_DIR
defaults to ~/.pi/agent). Unless the output is a file, the written path is
printed on stdout:  pi --session "$(pi-hydrate --thread t.json --cwd "$PWD")"

The output is written to a temporary file next to the target, checked with
the validator (--no-verify skips that), fsynced and renamed. Nothing is left
behind on failure. An existing target is refused without --force, and so is
the input itself. Created files have mode 0600.

A thread export that carries pi's own session lines (pi.entry) or a snapshot
of its file (pi.snapshot) gives pi's own session back; what they do not cover
is rebuilt by the lossy rules, and a warning says which entries
(docs/thread-export.md, "Raw pi entries").

An event capture (--events) is what pi printed on stdout in --mode json or
--mode rpc, one or more runs of one session (docs/events.md): its messages
are mapped to a thread export and hydrated as one. Lines that are not JSON
are reported and skipped.

--session takes an input of any format below: its format is found from its
first lines, or named with --from, and it is converted to the pi session it
stands for and hydrated as one. What cannot be carried over is reported.
--thread FILE is --session FILE --from thread-export; --events FILE is
--session FILE --from pi-events.

Tool calls (--tools): pair (default) keeps toolCall/toolResult structure and
repairs it so every call is followed by its results; flatten turns calls and
results into plain text, each result cut to --flatten-max-chars.

Exit codes: 0 written; 1 the input cannot be hydrated, or the output failed
verification (nothing written); 2 usage or I/O failure, or a refused target.

Examples:
  pi-hydrate --thread t.json --cwd /sandbox -o s.jsonl
  pi-hydrate --session old.jsonl --cwd /sandbox -o new.jsonl
  pi-hydrate --session ~/.claude/projects/-home-me-repo/<id>.jsonl --cwd /sandbox -o s.jsonl
  pi-hydrate --session rollout.jsonl --from codex --cwd /sandbox -o s.jsonl
  pi --mode json -p "..." | tee capture.jsonl; pi-hydrate --events capture.jsonl --cwd /sandbox -o s.jsonl
  cd /sandbox && pi-hydrate --thread t.json --cwd . && pi --continue
  pi --session "$(pi-hydrate --session old.jsonl --cwd "$PWD")"
  pi-hydrate --session s.jsonl --cwd /work --label before-refactor --tools flatten -o -
)HELP";

int fail_usage(std::ostream& err, const std::string& message) {
  err << "pi-hydrate: error: " << message << "\nRun 'pi-hydrate --help' for the options.\n";
  return kExitUsage;
}

// The report lists at most kListedPerCode findings of a code, and a summary
// of the rest. Each report goes to stderr in one write: stderr is
// unbuffered, and a write per piece (a byte at a time for JSON) took
// milliseconds.
void print_diagnostics(const Diagnostics& diagnostics, std::ostream& err) {
  std::ostringstream text;
  for (const Diagnostic& d : diagnostics) write_diagnostic_text(d, text);
  err << text.str();
}

// What the summary counts for an input read as `format` ("Claude Code records").
std::string records_of(const std::string& format) {
  const Reader* reader = ReaderRegistry::standard().find(format);
  return reader != nullptr ? reader->info().records : "entries";
}

void print_summary_text(const HydrateReport& r, const std::string& format, const std::string& target,
                        std::ostream& err) {
  std::ostringstream text;
  text << "pi-hydrate: wrote " << target << ": " << r.entries_written << " lines from " << r.entries_read << " "
       << records_of(format) << " read (session " << r.session_id << ")";
  if (r.lines_pi_drops) text << "; pi would have dropped " << r.lines_pi_drops << " line(s)";
  text << "\n";
  if (!r.repairs.empty()) {
    text << "pi-hydrate: repairs:";
    for (const auto& [kind, count] : r.repairs) text << " " << kind << "=" << count;
    text << "\n";
  }
  err << text.str();
}

void print_summary_json(const HydrateReport& r, const std::string& format, const std::string& target, bool ok,
                        std::ostream& err) {
  std::ostringstream text;
  rapidjson::OStreamWrapper os(text);
  JsonWriter w(os);
  w.StartObject();
  w.Key("ok");
  w.Bool(ok);
  w.Key("output");
  w.String(target.c_str(), static_cast<rapidjson::SizeType>(target.size()));
  w.Key("sessionId");
  w.String(r.session_id.c_str(), static_cast<rapidjson::SizeType>(r.session_id.size()));
  if (!format.empty()) {  // none when the input could not be read as its format
    w.Key("format");
    w.String(format.c_str(), static_cast<rapidjson::SizeType>(format.size()));
  }
  w.Key("entriesRead");
  w.Uint64(r.entries_read);
  w.Key("linesWritten");
  w.Uint64(r.entries_written);
  w.Key("linesPiWouldDrop");
  w.Uint64(r.lines_pi_drops);
  w.Key("repairs");
  w.StartObject();
  for (const auto& [kind, count] : r.repairs) {
    w.Key(kind.c_str());
    w.Uint64(count);
  }
  w.EndObject();
  w.Key("diagnostics");
  w.StartArray();
  for (const Diagnostic& d : r.diagnostics) write_diagnostic_json(d, w);
  w.EndArray();
  w.EndObject();
  os.Flush();
  text << "\n";
  err << text.str();
}

// The report of a run that wrote nothing because of `diagnostics`, in the
// --report format.
void print_failure(const Diagnostics& diagnostics, bool json, std::ostream& err) {
  if (json) {
    HydrateReport failed;
    failed.diagnostics = diagnostics;
    print_summary_json(failed, "", "", false, err);
  } else {
    print_diagnostics(diagnostics, err);
    err << "pi-hydrate: nothing written\n";
  }
}

// An input --from named that its reader could not read may be of another
// format: the first error says so.
void explain_forced_format(const std::string& from, Diagnostics& diagnostics) {
  for (Diagnostic& d : diagnostics) {
    if (d.severity != Severity::kError) continue;
    d.hint += std::string(d.hint.empty() ? "" : "; ") + "read as " + from +
              " because of --from; without it the format is found from the first lines";
    return;
  }
}

void add_hydrate_options(cxxopts::Options& options) {
  options.custom_help(
      "(--thread FILE|- | --session FILE|- | --events FILE|-) --cwd DIR [-o FILE|- | --session-dir DIR | --agent-dir "
      "DIR] [options]");
  options.add_options("Input and output")("thread", "Thread export to hydrate (docs/thread-export.md), or - for stdin",
                                          cxxopts::value<std::string>())(
      "session",
      "Session to hydrate, in any format below (a pi session of any version, another agent's), or - for stdin",
      cxxopts::value<std::string>())("from", "With --session: " + from_option_help(), cxxopts::value<std::string>())(
      "events", "Capture of pi's stdout in json or rpc mode (docs/events.md), or - for stdin",
      cxxopts::value<std::string>())("cwd", "Working directory for the new session (made absolute)",
                                     cxxopts::value<std::string>())("o,output", "Output file, or - for stdout",
                                                                    cxxopts::value<std::string>())(
      "session-dir", "Write DIR/<timestamp>_<session id>.jsonl and print its path", cxxopts::value<std::string>())(
      "agent-dir", "Write into pi's layout under DIR/sessions and print the path", cxxopts::value<std::string>())(
      "force", "Replace an existing output file")("allow-missing-cwd", "Do not require --cwd to exist")(
      "no-verify", "Do not check the output with the validator before writing it")(
      "report", "Summary on stderr: text or json", cxxopts::value<std::string>()->default_value("text"));
  options.add_options("Conversation")(
      "leaf",
      "Write the branch ending at this entry id instead of pi's leaf (OpenCode: the session id; list: list them)",
      cxxopts::value<std::string>())("label", "Write the branch ending at the entry with this label",
                                     cxxopts::value<std::string>())(
      "tools", "Tool calls: pair or flatten", cxxopts::value<std::string>()->default_value("pair"))(
      "flatten-max-chars", "With --tools flatten: longest result text kept",
      cxxopts::value<std::size_t>()->default_value("4000"))("thinking", "Thinking blocks: keep or drop",
                                                            cxxopts::value<std::string>()->default_value("keep"))(
      "prune-compacted", "Leave out entries the latest compaction hides from the context")(
      "session-id", "Session id of the output (pi's session-id rule)", cxxopts::value<std::string>())(
      "timestamp", "Header timestamp of the output (ISO-8601)", cxxopts::value<std::string>())(
      "partial",
      "Thread, events: an interrupted chunk stream is dropped, kept (aborted) or kept as text: drop|keep|text",
      cxxopts::value<std::string>()->default_value("drop"))(
      "no-trailer", "Thread, events: do not append session_info / model_change / thinking_level_change")(
      "pi-version", pi_version_option_help("Read the input"),
      cxxopts::value<std::string>()->default_value(pi_version_name(newest_pi_version())))("h,help", "Print this help");
  // The same memory caps as validate (docs/reliability.md); they apply to the
  // input, to a thread's converted session and to the verified output.
  options.add_options("Limits")("max-line-bytes", "Longest session line read, in bytes",
                                cxxopts::value<std::size_t>()->default_value("268435456"))(
      "max-depth", "Deepest JSON nesting read", cxxopts::value<std::size_t>()->default_value("512"))(
      "max-entries", "Most entries read", cxxopts::value<std::size_t>()->default_value("50000000"));
}

// --cwd made absolute. lexically_normal keeps ".." above the root
// ("/../x"); the kernel and pi read it as "/x", and so does the header.
fs::path absolute_cwd(const std::string& given, std::string& text) {
  fs::path cwd = fs::absolute(given).lexically_normal();
  text = cwd.string();
  while (text.rfind("/..", 0) == 0 && (text.size() == 3 || text[3] == '/')) text.erase(0, 3);
  if (text.empty()) text = "/";
  cwd = text;
  if (text.size() > 1 && text.back() == '/') text.pop_back();
  if (text.size() > 2 && text.substr(text.size() - 2) == "/.") text.resize(text.size() - 2);
  return cwd;
}

// The request the options make, or a usage error's message.
std::string parse_request(const cxxopts::ParseResult& parsed, HydrateRequest& request) {
  const std::string partial = parsed["partial"].as<std::string>();
  if (partial == "drop")
    request.partial = PartialPolicy::kDrop;
  else if (partial == "keep")
    request.partial = PartialPolicy::kKeep;
  else if (partial == "text")
    request.partial = PartialPolicy::kText;
  else
    return "--partial must be drop, keep or text, not '" + partial + "'";
  request.trailer = parsed.count("no-trailer") == 0;
  if (parsed.count("from")) {
    if (!parsed.count("session"))
      return "--from says what a --session file is; --thread and --events say it themselves";
    std::string error;
    if (!read_from_option(parsed["from"].as<std::string>(), error)) return error;
    request.from = parsed["from"].as<std::string>();
  }
  if (parsed.count("thread")) request.from = "thread-export";
  if (parsed.count("events")) request.from = "pi-events";
  if (!parsed.count("cwd")) return "--cwd DIR is required: the working directory of the new session";
  int outputs = static_cast<int>(parsed.count("output") + parsed.count("session-dir") + parsed.count("agent-dir"));
  if (outputs > 1) return "give at most one of -o FILE, --session-dir DIR, --agent-dir DIR";
  const std::string tools = parsed["tools"].as<std::string>();
  if (tools == "pair")
    request.tools = ToolPolicy::kPair;
  else if (tools == "flatten")
    request.tools = ToolPolicy::kFlatten;
  else
    return "--tools must be pair or flatten, not '" + tools + "'";
  const std::string thinking = parsed["thinking"].as<std::string>();
  if (thinking == "keep")
    request.thinking = ThinkingPolicy::kKeep;
  else if (thinking == "drop")
    request.thinking = ThinkingPolicy::kDrop;
  else
    return "--thinking must be keep or drop, not '" + thinking + "'";
  const std::string report_format = parsed["report"].as<std::string>();
  if (report_format != "text" && report_format != "json")
    return "--report must be text or json, not '" + report_format + "'";
  std::string version_error;
  if (!read_pi_version_option(parsed["pi-version"].as<std::string>(), request.pi_version, version_error))
    return version_error;
  request.flatten_max_chars = parsed["flatten-max-chars"].as<std::size_t>();
  request.limits.max_line_bytes = parsed["max-line-bytes"].as<std::size_t>();
  if (request.limits.max_line_bytes > kMaxLineBytesLimit)
    return "--max-line-bytes must be at most " + std::to_string(kMaxLineBytesLimit) + " (512 MiB)";
  request.limits.max_depth = std::max<std::size_t>(1, parsed["max-depth"].as<std::size_t>());
  request.limits.max_entries = parsed["max-entries"].as<std::size_t>();
  request.prune_compacted = parsed.count("prune-compacted") > 0;
  if (parsed.count("leaf") && parsed.count("label")) return "give --leaf or --label, not both";
  if (parsed.count("leaf")) request.leaf_id = parsed["leaf"].as<std::string>();
  if (parsed.count("label")) request.label = parsed["label"].as<std::string>();
  if (parsed.count("session-id")) {
    request.session_id = parsed["session-id"].as<std::string>();
    if (!is_valid_session_id(*request.session_id))
      return "--session-id '" + *request.session_id +
             "' must be non-empty, contain only alphanumeric characters, '-', '_' and '.', and "
             "start and end with an alphanumeric character (pi's rule)";
  }
  if (parsed.count("timestamp")) {
    request.timestamp = parsed["timestamp"].as<std::string>();
    if (!is_iso8601(*request.timestamp)) return "--timestamp must be ISO-8601, e.g. 2026-01-02T03:04:05.678Z";
  }
  request.verify = parsed.count("no-verify") == 0;
  request.cwd_must_exist = parsed.count("allow-missing-cwd") == 0;
  std::string cwd_text;
  const fs::path cwd = absolute_cwd(parsed["cwd"].as<std::string>(), cwd_text);
  request.cwd = cwd_text;
  boost::system::error_code ec;
  if (request.cwd_must_exist && !fs::is_directory(cwd, ec))
    return "--cwd " + cwd_text + " is not an existing directory (pass --allow-missing-cwd to write it anyway)";
  return "";
}

}  // namespace

int run_hydrate(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
                bool own_process) {
  cxxopts::Options options("pi-hydrate", "Hydrate a pi session into a linear v3 session for a new working directory.");
  add_hydrate_options(options);
  std::vector<const char*> argv{"pi-hydrate"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& e) {
    return fail_usage(err, e.what());
  }
  if (parsed.count("help")) {
    out << options.help() << kHydrateHelp << input_formats_help();
    return kExitOk;
  }
  if (!parsed.unmatched().empty()) return fail_usage(err, "unexpected argument '" + parsed.unmatched()[0] + "'");
  if (parsed.count("session") + parsed.count("thread") + parsed.count("events") != 1)
    return fail_usage(err,
                      "give exactly one input: --session FILE (a session of any format), --thread FILE (a thread "
                      "export) or --events FILE (a capture of pi's events)");
  HydrateRequest request;
  if (std::string usage = parse_request(parsed, request); !usage.empty()) return fail_usage(err, usage);
  const bool json = parsed["report"].as<std::string>() == "json";
  const bool force = parsed.count("force") > 0;

  const char* input_option = parsed.count("thread") ? "thread" : parsed.count("events") ? "events" : "session";
  const std::string input_path = parsed[input_option].as<std::string>();
  const Input input = input_path == "-" ? Input::stream(in, "<stdin>") : Input::file(input_path);
  StreamSink stdout_sink(out);
  const bool to_stdout = parsed.count("output") && parsed["output"].as<std::string>() == "-";
  std::string output_dir;
  if (parsed.count("session-dir")) {
    output_dir = fs::absolute(parsed["session-dir"].as<std::string>()).lexically_normal().string();
  } else if (parsed.count("agent-dir")) {
    output_dir = (fs::absolute(parsed["agent-dir"].as<std::string>()).lexically_normal() / "sessions" /
                  encode_cwd_for_agent_dir(request.cwd))
                     .string();
  } else if (!parsed.count("output")) {
    std::string why;
    auto pi_dir = find_pi_session_dir(request.cwd, PiEnvironment::from_process(), why);
    if (!pi_dir) return fail_usage(err, "cannot find pi's session directory: " + why + "; give -o FILE");
    output_dir = pi_dir->path;
  }
  const Output output = to_stdout                ? Output::lines(stdout_sink)
                        : parsed.count("output") ? Output::file(parsed["output"].as<std::string>(), force)
                                                 : Output::directory(output_dir, force);
  // The executable's own process: a temporary output is removed on
  // SIGINT/SIGTERM/SIGHUP, and an export that shrinks under its mapping is
  // reported (PH904, in the --report format) instead of crashing.
  ProcessHooks hooks;
  if (own_process) {
    hooks.remove_output_on_signals = true;
    hooks.exit_on_shrunk_input = [json](const Diagnostic& d) {
      std::ostringstream message;
      print_failure({d}, json, message);
      return message.str();
    };
  }
  // The phases are the library's; the line drawn before the first says what is happening.
  std::mutex phase_mutex;
  std::string phase = "reading the input";
  hooks.on_phase = [&phase, &phase_mutex](const char* name) {
    std::lock_guard<std::mutex> lock(phase_mutex);
    phase = name;
  };
  // Not while the session itself goes to the terminal.
  ProgressLine progress(ProgressLine::wanted(own_process) && !to_stdout, [&phase, &phase_mutex, &input_path] {
    std::lock_guard<std::mutex> lock(phase_mutex);
    return phase + ": " + input_path;
  });
  const HydrateResult result = hydrate(input, request, output, hooks);
  progress.stop();
  if (to_stdout && result.ok) {
    out.flush();
    if (!out) throw IoError("cannot write to standard output");
  }
  if (!result.input_converted) {
    Diagnostics diagnostics = result.report.diagnostics;
    if (parsed.count("from")) explain_forced_format(request.from, diagnostics);
    print_failure(diagnostics, json, err);
    return kExitFindings;
  }
  const HydrateReport& report = result.report;
  if (json) {
    print_summary_json(report, result.format, to_stdout ? "-" : result.path, result.ok, err);
  } else {
    print_diagnostics(report.diagnostics, err);
    if (result.ok)
      print_summary_text(report, result.format, to_stdout ? "standard output" : result.path, err);
    else
      err << "pi-hydrate: nothing written\n";
  }
  if (!result.ok) return kExitFindings;
  if (output.kind() == Output::Kind::kDirectory) out << result.path << "\n";
  return kExitOk;
}

}  // namespace pihydrate
