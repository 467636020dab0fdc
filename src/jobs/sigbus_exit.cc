// The opt-in SIGBUS handler for a mapped export that shrinks (sigbus_exit.h).
#include "jobs/sigbus_exit.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "pihydrate/cli.h"  // the exit status

namespace pihydrate {
namespace {

// The handler may only use signal-safe calls: it writes the prepared
// message, removes the prepared directories and exits, once, whichever of
// the threads reading the export faulted first.
char g_sigbus_message[4096];
std::size_t g_sigbus_message_size = 0;
char g_sigbus_dirs[8192];                    // NUL-separated paths, deepest first, ending with an empty one
std::atomic<bool> g_sigbus_reported{false};  // lock-free, so signal-safe
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void report_truncated_input(int) {
  // Two threads reading the export may both fault: one reports and exits,
  // the other waits for that exit.
  if (g_sigbus_reported.exchange(true))
    for (;;) ::pause();
  ssize_t ignored = ::write(2, g_sigbus_message, g_sigbus_message_size);
  (void)ignored;
  for (const char* dir = g_sigbus_dirs; *dir; dir += std::strlen(dir) + 1) ::rmdir(dir);
  ::_exit(kExitFindings);
}

}  // namespace

SigbusExit::SigbusExit(const std::string& message, const std::vector<boost::filesystem::path>& directories) {
  g_sigbus_message_size = std::min(message.size(), sizeof g_sigbus_message);
  std::memcpy(g_sigbus_message, message.data(), g_sigbus_message_size);
  std::size_t used = 0;
  for (const boost::filesystem::path& dir : directories) {
    const std::string path = dir.string();
    if (used + path.size() + 2 > sizeof g_sigbus_dirs) break;  // the rest stays (very deep paths only)
    std::memcpy(g_sigbus_dirs + used, path.c_str(), path.size() + 1);
    used += path.size() + 1;
  }
  g_sigbus_dirs[used] = '\0';
  struct sigaction sa {};
  sa.sa_handler = report_truncated_input;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &previous_);
}

SigbusExit::~SigbusExit() { ::sigaction(SIGBUS, &previous_, nullptr); }

}  // namespace pihydrate
