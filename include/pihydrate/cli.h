// The command line as a library call, so tests run it in-process (and under
// the sanitizers). No globals, never calls exit().
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace pihydrate {

// Exit codes, documented in --help and docs/cli.md.
enum ExitCode : int { kExitOk = 0, kExitFindings = 1, kExitUsage = 2 };

// `args` excludes the program name.
int run_cli(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace pihydrate
