// run_cli: the command word, usage, and the errors every command shares.
#include "pihydrate/cli.h"

#include <algorithm>
#include <ostream>

#include "cli/commands.h"
#include "pihydrate/errors.h"

namespace pihydrate {
namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&, std::istream&, std::ostream&, std::ostream&, bool own_process);
};

const Command kCommands[] = {
    {"validate", "check session files the way pi loads them", &run_validate},
    {"hydrate", "the same as the top-level --session form", &run_hydrate},
    {"context", "show the conversation pi sends when it resumes a session", &run_context},
};

constexpr const char* kVersion = "0.1.0";

void print_usage(std::ostream& out) {
  out << "pi-hydrate " << kVersion << ": make pi sessions resume anywhere\n"
      << "\n"
      << "Usage:\n"
      << "  pi-hydrate --session FILE --cwd DIR -o OUT       hydrate a session for a new working directory\n"
      << "  pi-hydrate validate FILE|DIR|- ... [options]   check session files the way pi loads them\n"
      << "  pi-hydrate COMMAND --help                       options of one command\n"
      << "\n"
      << "Commands:\n";
  for (const Command& c : kCommands) out << "  " << c.name << "    " << c.summary << "\n";
  out << "\n"
      << "Exit codes: 0 no errors, 1 errors found in the input, 2 usage or I/O failure.\n"
      << "Docs: docs/cli.md, docs/diagnostics.md\n";
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
    out << "pi-hydrate " << kVersion << "\n";
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
