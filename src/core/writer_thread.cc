// WriterThread: one block waiting, one being written.
#include "core/writer_thread.h"

#include <utility>

namespace pihydrate {

WriterThread::WriterThread(LineSink& sink) : sink_(sink), thread_([this] { run(); }) {}

WriterThread::~WriterThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void WriterThread::write(std::string& lines) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !has_waiting_ || error_; });
  if (error_) std::rethrow_exception(error_);
  waiting_.swap(lines);
  has_waiting_ = true;
  lines.clear();
  changed_.notify_all();
}

void WriterThread::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return (!has_waiting_ && !writing_) || error_; });
  if (error_) std::rethrow_exception(error_);
}

void WriterThread::run() {
  std::string block;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return has_waiting_ || closing_; });
    if (!has_waiting_ || error_) return;  // closing; after an error nothing more is written
    block.swap(waiting_);
    has_waiting_ = false;
    writing_ = true;
    changed_.notify_all();
    lock.unlock();
    std::exception_ptr error;
    try {
      sink_.write_lines(block);
    } catch (...) {
      error = std::current_exception();
    }
    block.clear();
    lock.lock();
    writing_ = false;
    if (error) error_ = error;
    changed_.notify_all();
  }
}

}  // namespace pihydrate
