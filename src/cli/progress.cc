// ProgressLine: "\r" + the status, redrawn in place; "\r\033[K" erases it.
#include "cli/progress.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace pihydrate {
namespace {

void write_stderr(const std::string& text) {
  // Straight to the descriptor: the line's own thread must not share
  // std::cerr's buffer with the command's thread.
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;  // a progress line is not worth an error
    done += static_cast<std::size_t>(n);
  }
}

const char* setting() {
  const char* value = std::getenv("PIHYDRATE_PROGRESS");
  return value ? value : "";
}

}  // namespace

bool ProgressLine::wanted(bool own_process) {
  return own_process && std::strcmp(setting(), "0") != 0 && ::isatty(STDERR_FILENO) == 1;
}

ProgressLine::ProgressLine(bool enabled, std::function<std::string()> status)
    : status_(std::move(status)),
      delay_(std::strcmp(setting(), "1") == 0 ? std::chrono::milliseconds(0) : std::chrono::milliseconds(1000)) {
  if (enabled) thread_ = std::thread([this] { run(); });
}

void ProgressLine::run() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  // With no delay the first frame is drawn even when the job has already
  // ended: PIHYDRATE_PROGRESS=1 promises a line, and a test relies on it.
  if (delay_.count() > 0 && wake_.wait_for(lock, delay_, [this] { return stopping_; })) return;
  do {
    const auto seconds =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, " (%.1f s)", static_cast<double>(seconds.count()) / 1000);
    write_stderr("\r\033[Kpi-hydrate: " + status_() + elapsed);
    drawn_ = true;
  } while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; }));
}

void ProgressLine::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (drawn_) write_stderr("\r\033[K");
}

}  // namespace pihydrate
