// `pi-hydrate validate`: option parsing and file expansion only; the checks
// live in the library.
#include <algorithm>
#include <atomic>
#include <optional>
#include <ostream>
#include <thread>

#include <boost/filesystem.hpp>
#include <cxxopts.hpp>

#include "cli/commands.h"
#include "cli/progress.h"
#include "pihydrate/cli.h"
#include "pihydrate/errors.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {
namespace {

namespace fs = boost::filesystem;

const char* kValidateHelp = R"(
Checks session files the way pi loads them: whether `pi --session FILE` starts
(load), what pi silently loses or changes and what breaks when the
conversation resumes (resume), and fixture conventions (lint).

Each finding is printed as
  FILE:LINE:COL: error|warning: MESSAGE [PHnnn]
    hint: HOW TO FIX IT
Lines are 1-based, columns are 1-based byte columns. Every PHnnn code is
documented in docs/diagnostics.md; --list-codes prints them.

Arguments are files, directories (searched recursively for *.jsonl) or `-`
for standard input. The input is never modified. A file of another format
(another agent's transcript, a thread export, a capture of pi's events; see
pi-hydrate --session --help) is judged by what converting it finds: what
pi-hydrate --session would report, at the file's own lines. --from names
the format instead of finding it from the first lines.

Exit codes: 0 no errors (warnings allowed), 1 at least one error at the
chosen level, 2 usage or I/O failure.

Examples:
  pi-hydrate validate session.jsonl
  pi-hydrate validate --level lint --linear tests/fixtures/
  pi-hydrate validate --format github sessions/    # GitHub Actions annotations
  pi-hydrate validate -j 2 sessions/                # two files at a time, same output
  pi-hydrate validate --format json s.jsonl | jq '.files[0].loadable'
)";

struct FileArgument {
  std::string path;  // "-" for stdin
};

std::vector<FileArgument> expand_inputs(const std::vector<std::string>& args, std::ostream& err, bool& io_failed) {
  std::vector<FileArgument> inputs;
  for (const std::string& arg : args) {
    if (arg == "-") {
      inputs.push_back({arg});
      continue;
    }
    boost::system::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<std::string> found;
      fs::recursive_directory_iterator it(arg, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        if (fs::is_regular_file(it->path(), ec) && it->path().extension() == ".jsonl")
          found.push_back(it->path().string());
      }
      if (ec) {
        err << "pi-hydrate: error: cannot list " << arg << ": " << ec.message() << "\n";
        io_failed = true;
      }
      std::sort(found.begin(), found.end());
      if (found.empty()) err << "pi-hydrate: warning: no *.jsonl files under " << arg << "\n";
      for (auto& f : found) inputs.push_back({std::move(f)});
    } else {
      inputs.push_back({arg});
    }
  }
  return inputs;
}

bool parse_level(const std::string& text, Level& level) {
  if (text == "load")
    level = Level::kLoad;
  else if (text == "resume")
    level = Level::kResume;
  else if (text == "lint")
    level = Level::kLint;
  else
    return false;
  return true;
}

bool parse_format(const std::string& text, ReportFormat& format) {
  if (text == "text")
    format = ReportFormat::kText;
  else if (text == "json")
    format = ReportFormat::kJson;
  else if (text == "github")
    format = ReportFormat::kGithub;
  else
    return false;
  return true;
}

void list_codes(std::ostream& out) {
  for (const CodeInfo& c : all_codes())
    out << code_name(c.code) << "  " << level_name(c.level) << "  " << c.slug << ": " << c.title << "\n";
}

cxxopts::Options validate_options() {
  cxxopts::Options options("pi-hydrate validate", "Check pi session files the way pi loads them.");
  options.custom_help("[options]");
  options.positional_help("FILE|DIR|- ...");
  options.add_options()("level", "Report up to this level: load, resume or lint",
                        cxxopts::value<std::string>()->default_value("resume"))(
      "pi-version", pi_version_option_help("Load files"),
      cxxopts::value<std::string>()->default_value(pi_version_name(newest_pi_version())))(
      "no-cwd-check", "Do not check that the header cwd exists")(
      "process-cwd",
      "Resolve a relative header cwd against DIR, as pi started in DIR would (default: the current directory)",
      cxxopts::value<std::string>())("format", "Output: text, json or github",
                                     cxxopts::value<std::string>()->default_value("text"))(
      "linear", "Report any branching as an error (lint level)")("from", from_option_help(),
                                                                 cxxopts::value<std::string>())(
      "max-line-bytes", "Longest line checked, in bytes", cxxopts::value<std::size_t>()->default_value("268435456"))(
      "max-depth", "Deepest JSON nesting checked", cxxopts::value<std::size_t>()->default_value("512"))(
      "max-entries", "Most entries checked per file", cxxopts::value<std::size_t>()->default_value("50000000"))(
      "j,jobs", "Validate up to N files at once (output order stays the argument order)",
      cxxopts::value<unsigned>()->default_value("1"))("list-codes", "Print every diagnostic code and exit")(
      "h,help", "Print this help")("files", "Session files", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"files"});
  return options;
}

// What the options ask for.
struct ValidateSettings {
  ValidateOptions vo;
  ReportFormat format = ReportFormat::kText;
  std::string from;  // --from: the input format; empty: found from the first lines
};

// The options' values, checked. False, with the message on `err`, on a
// usage error.
bool read_settings(const cxxopts::ParseResult& parsed, ValidateSettings& s, std::ostream& err) {
  ValidateOptions& vo = s.vo;
  const std::string fmt = parsed["format"].as<std::string>();
  if (!parse_format(fmt, s.format)) {
    err << "pi-hydrate: error: --format must be text, json or github, not '" << fmt << "'\n";
    return false;
  }
  if (!parse_level(parsed["level"].as<std::string>(), vo.level)) {
    err << "pi-hydrate: error: --level must be load, resume or lint, not '" << parsed["level"].as<std::string>()
        << "'\n";
    return false;
  }
  std::string version_error;
  if (!read_pi_version_option(parsed["pi-version"].as<std::string>(), vo.pi_version, version_error)) {
    err << "pi-hydrate: error: " << version_error << "\n";
    return false;
  }
  vo.check_cwd = parsed.count("no-cwd-check") == 0;
  if (parsed.count("from")) {
    std::string error;
    if (!read_from_option(parsed["from"].as<std::string>(), error)) {
      err << "pi-hydrate: error: " << error << "\n";
      return false;
    }
    s.from = parsed["from"].as<std::string>();
  }
  if (parsed.count("process-cwd")) vo.process_cwd = parsed["process-cwd"].as<std::string>();
  vo.linear = parsed.count("linear") > 0;
  vo.index.reader.max_line_bytes = parsed["max-line-bytes"].as<std::size_t>();
  if (vo.index.reader.max_line_bytes > kMaxLineBytesLimit) {
    err << "pi-hydrate: error: --max-line-bytes must be at most " << kMaxLineBytesLimit << " (512 MiB)\n";
    return false;
  }
  vo.index.max_depth = std::max<std::size_t>(1, parsed["max-depth"].as<std::size_t>());
  vo.index.max_entries = parsed["max-entries"].as<std::size_t>();
  return true;
}

// Each file is validated on its own; with `jobs` > 1, that many at a time.
// Results land in their argument's slot, so the output order never depends
// on timing. A file that cannot be read is reported on `err` and sets
// `io_failed`.
ValidateRun validate_files(const std::vector<FileArgument>& inputs, std::istream& in, ValidateSettings& s,
                           unsigned jobs, bool own_process, std::ostream& err, bool& io_failed) {
  struct Slot {
    std::optional<FileReport> report;
    std::string error;
  };
  std::vector<Slot> slots(inputs.size());
  // Files in parallel, or one big file's halves in parallel: not both.
  if (jobs > 1 && inputs.size() > 1) s.vo.index.two_threads = false;
  auto validate_one = [&](std::size_t i) {
    const FileArgument& input = inputs[i];
    try {
      slots[i].report =
          validate_input(input.path == "-" ? Input::stream(in, "<stdin>") : Input::file(input.path), s.vo, s.from);
    } catch (const IoError& e) {
      slots[i].error = e.what();
    }
  };
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < inputs.size(); i = next++) {
      validate_one(i);
      ++done;
    }
  };
  // validate changes no process-wide state; owning the process only lets it draw progress.
  ProgressLine progress(ProgressLine::wanted(own_process), [&done, &inputs] {
    if (inputs.size() == 1) return "validating " + inputs[0].path;
    return "validated " + std::to_string(done.load()) + " of " + std::to_string(inputs.size()) + " files";
  });
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < jobs && t < inputs.size(); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  progress.stop();

  ValidateRun run;
  run.pi_version = s.vo.pi_version;
  run.level = s.vo.level;
  for (Slot& slot : slots) {
    if (!slot.error.empty()) {
      err << "pi-hydrate: error: " << slot.error << "\n";
      io_failed = true;
    }
    if (slot.report) run.reports.push_back(std::move(*slot.report));
  }
  return run;
}

}  // namespace

int run_validate(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
                 bool own_process) {
  cxxopts::Options options = validate_options();
  std::vector<const char*> argv{"pi-hydrate validate"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& e) {
    err << "pi-hydrate: error: " << e.what() << "\nRun 'pi-hydrate validate --help' for the options.\n";
    return kExitUsage;
  }
  if (parsed.count("help")) {
    out << options.help() << kValidateHelp;
    return kExitOk;
  }
  if (parsed.count("list-codes")) {
    list_codes(out);
    return kExitOk;
  }
  ValidateSettings settings;
  if (!read_settings(parsed, settings, err)) return kExitUsage;
  if (!parsed.count("files")) {
    err << "pi-hydrate: error: no input files\nRun 'pi-hydrate validate --help' for the options.\n";
    return kExitUsage;
  }

  bool io_failed = false;
  const std::vector<FileArgument> inputs =
      expand_inputs(parsed["files"].as<std::vector<std::string>>(), err, io_failed);
  const unsigned jobs = std::max(1u, std::min<unsigned>(parsed["jobs"].as<unsigned>(), 64));
  const ValidateRun run = validate_files(inputs, in, settings, jobs, own_process, err, io_failed);
  switch (settings.format) {
    case ReportFormat::kText: write_text_report(run, out); break;
    case ReportFormat::kJson: write_json_report(run, out); break;
    case ReportFormat::kGithub: write_github_report(run, out); break;
  }
  if (io_failed) return kExitUsage;
  for (const FileReport& r : run.reports)
    if (r.errors > 0) return kExitFindings;
  return kExitOk;
}

}  // namespace pihydrate
