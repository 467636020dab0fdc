// Writes blocks of lines to a LineSink on a thread of its own, at most one
// block behind the producer: rendering the next block overlaps the write of
// the last, and memory holds three blocks at most (the one being rendered,
// one waiting, one being written).
#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "pihydrate/hydrate.h"

namespace pihydrate {

class WriterThread {
 public:
  explicit WriterThread(LineSink& sink);
  ~WriterThread();  // stops the thread; a block not yet written is dropped
  WriterThread(const WriterThread&) = delete;
  WriterThread& operator=(const WriterThread&) = delete;

  // Hands `lines` (whole lines, each ending with '\n') to the thread and
  // leaves an empty buffer in it, with the capacity of an earlier block.
  // Waits while a block is still waiting. Rethrows the thread's write error.
  void write(std::string& lines);
  // Returns once every block is written; rethrows a write error.
  void finish();

 private:
  void run();

  LineSink& sink_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string waiting_;  // handed over, not yet taken
  bool has_waiting_ = false;
  bool writing_ = false;  // the thread holds a block
  bool closing_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace pihydrate
