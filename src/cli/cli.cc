// run_cli: the command word, usage, and the errors every command shares.
#include "pihydrate/cli.h"

#include <algorithm>
#include <ostream>

#include "build_info.h"  // generated at build time: cmake/build_info.cmake
#include "cli/commands.h"
#include "pihydrate/errors.h"

namespace pihydrate {
namespace {

struct Command {
  const char* name;
  const char* summary;
  const char* example;  // for the top-level --help; null: not listed there
  int (*run)(const std::vector<std::string>&, std::istream&, std::ostream&, std::ostream&, bool own_process);
};

const Command kCommands[] = {
    {"validate", "check session files the way pi loads them", "pi-hydrate validate --format github fixtures/",
     &run_validate},
    {"tree", "show the session tree pi reads: branches, labels, the leaf it resumes", "pi-hydrate tree s.jsonl",
     &run_tree},
    {"context", "show the conversation pi sends when it resumes a session", "pi-hydrate context --full s.jsonl",
     &run_context},
    {"hydrate", "the same as the top-level --thread/--session/--events form", nullptr, &run_hydrate},
};

constexpr const char* kVersion = PIHYDRATE_VERSION;
constexpr const char* kCommit = PIHYDRATE_COMMIT;  // short hash, "-dirty" if changed, or "unknown"

void print_usage(std::ostream& out) {
  out << "pi-hydrate " << kVersion << ": make pi sessions resume anywhere\n"
      << "\n"
      << "Hydrate a thread export (the main job), a session (pi's or another agent's) or a capture of\n"
      << "pi's events for a new working directory:\n"
      << "  pi-hydrate --thread FILE --cwd DIR [-o OUT] [options]\n"
      << "      pi-hydrate --thread t.json --cwd /sandbox -o s.jsonl && pi --session s.jsonl\n"
      << "  pi-hydrate --session FILE --cwd DIR [-o OUT] [options]\n"
      << "      pi --session \"$(pi-hydrate --session old.jsonl --cwd \"$PWD\")\"\n"
      << "      pi-hydrate --session ~/.claude/projects/-home-me-repo/<id>.jsonl --cwd /sandbox -o s.jsonl\n"
      << "  pi-hydrate --events FILE --cwd DIR [-o OUT] [options]\n"
      << "      pi --mode json -p \"...\" > capture.jsonl; pi-hydrate --events capture.jsonl --cwd /sandbox -o "
         "s.jsonl\n"
      << "  Without -o the session goes where pi looks ($PI_CODING_AGENT_SESSION_DIR, else\n"
      << "  $PI_CODING_AGENT_DIR/sessions/--<cwd>--/) and its path is printed: `pi --continue` finds it.\n"
      << "  FILE may be - (standard input) here and in every command below.\n"
      << "\n"
      << "Other commands:\n";
  for (const Command& c : kCommands) {
    if (c.example == nullptr) continue;
    out << "  " << c.name << std::string(10 - std::min<std::size_t>(9, std::string(c.name).size()), ' ') << c.summary
        << "\n      " << c.example << "\n";
  }
  out << "\n"
      << "  pi-hydrate COMMAND --help    every option of a command (pi-hydrate --session --help: hydration)\n"
      << "  pi-hydrate --version         version and the commit it was built from\n"
      << "  pi-hydrate --list-formats    the input formats --session reads (--from takes their names)\n"
      << "  pi-hydrate --list-pi-versions  the pi versions --pi-version takes\n"
      << "\n"
      << "Exit codes: 0 done, no errors; 1 errors found in the input (nothing written); 2 usage or I/O failure.\n"
      << "Docs: man pi-hydrate, docs/cli.md, docs/diagnostics.md\n";
}

// Edit distance, for "did you mean".
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t prev = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

}  // namespace

bool is_hydration(const std::vector<std::string>& args) {
  // The main job has no command word: pi-hydrate --session ... --cwd ...
  // (--help and --version are answered before it is asked.)
  return !args.empty() && (args[0] == "hydrate" || (args[0].size() > 1 && args[0][0] == '-'));
}

int run_cli(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
            Process process) {
  const bool own_process = process == Process::kOwned;
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    print_usage(args.empty() ? err : out);
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "--version") {
    out << "pi-hydrate " << kVersion << " (commit " << kCommit << ")\n";
    return kExitOk;
  }
  if (args[0] == "--list-formats" || args[0] == "--list-pi-versions") {
    if (args.size() > 1) {
      err << "pi-hydrate: error: " << args[0] << " takes no arguments\n";
      return kExitUsage;
    }
    (args[0] == "--list-formats" ? list_formats : list_pi_versions)(out);
    return kExitOk;
  }
  try {
    if (args[0] != "hydrate" && is_hydration(args))
      return run_hydrate(args, in, out, err, own_process);  // no command word
    for (const Command& c : kCommands) {
      if (args[0] == c.name)
        return c.run(std::vector<std::string>(args.begin() + 1, args.end()), in, out, err, own_process);
    }
  } catch (const IoError& e) {
    err << "pi-hydrate: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    // A bug or an exhausted resource: say so plainly; the output file, if
    // any, was removed as the stack unwound.
    err << "pi-hydrate: internal error: " << e.what() << "\n";
    return kExitUsage;
  }
  err << "pi-hydrate: error: unknown command '" << args[0] << "'";
  for (const Command& c : kCommands) {
    if (distance(args[0], c.name) <= 2) err << ", did you mean '" << c.name << "'?";
  }
  err << "\nRun 'pi-hydrate --help' for the commands.\n";
  return kExitUsage;
}

}  // namespace pihydrate
