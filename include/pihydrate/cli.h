// The command line as a library call, so tests run it in-process (and under
// the sanitizers). No globals, never calls exit(), and no process-wide state
// unless the caller owns the process and says so (Process::kOwned).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace pihydrate {

// Exit codes, documented in --help and docs/cli.md.
enum ExitCode : int { kExitOk = 0, kExitFindings = 1, kExitUsage = 2 };

// Whether run_cli may change process-wide state. kOwned (the executable's
// main): a hydration installs the handlers of ProcessHooks (pihydrate.h):
// its temporary output removed on SIGINT/SIGTERM/SIGHUP, SIGPIPE ignored, a
// mapped export that shrinks reported as PH904 and exit 1 (_exit).
enum class Process { kShared, kOwned };

// `args` excludes the program name.
int run_cli(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
            Process process = Process::kShared);

// Whether `args` (without the program name) ask for a hydration: the
// `hydrate` command, or --thread / --session without a command word.
bool is_hydration(const std::vector<std::string>& args);

}  // namespace pihydrate
