// A status line on a terminal's standard error while a long job runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace pihydrate {

// Redrawn four times a second by its own thread from `status` (which must
// be safe to call from that thread), after `delay` has passed, so a quick
// job prints nothing; erased by stop(). Disabled unless stderr is a
// terminal: pipes, logs and CI output never see it.
class ProgressLine {
 public:
  ProgressLine(bool enabled, std::function<std::string()> status);
  ~ProgressLine() { stop(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void stop();  // erases the line; safe to call twice

  // Whether a command owning the process should draw one: stderr is a
  // terminal. PIHYDRATE_PROGRESS=0 turns it off, =1 draws at once (no delay).
  static bool wanted(bool own_process);

 private:
  void run();

  std::function<std::string()> status_;
  std::chrono::milliseconds delay_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

}  // namespace pihydrate
