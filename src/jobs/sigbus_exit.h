// The opt-in SIGBUS handler of ProcessHooks::exit_on_shrunk_input: a mapped
// thread export that shrinks while it is read raises SIGBUS on the next page
// past its new end. That is the input changing mid-read (PH904), reported
// as such, not a crash.
#pragma once

#include <csignal>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace pihydrate {

// While it lives, a SIGBUS writes `message` to standard error, removes
// `directories` (deepest first; still empty: nothing is written while the
// export is converted) and ends the process with exit status 1. One at a
// time per process; the previous handler is restored on destruction.
class SigbusExit {
 public:
  SigbusExit(const std::string& message, const std::vector<boost::filesystem::path>& directories);
  ~SigbusExit();
  SigbusExit(const SigbusExit&) = delete;
  SigbusExit& operator=(const SigbusExit&) = delete;

 private:
  struct sigaction previous_ {};
};

}  // namespace pihydrate
