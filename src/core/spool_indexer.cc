// SpoolIndexer: the blocks a converter hands over, written to the spool file
// and indexed as one session on the indexer's own thread.
#include "core/spool_indexer.h"

#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "pihydrate/errors.h"
#include "pihydrate/output_file.h"

namespace pihydrate {

// The blocks handed to a SpoolIndexer, as the ByteSource its thread indexes:
// each block's stored bytes are written to the file when the reader reaches it.
class SpoolIndexer::Source final : public ByteSource {
 public:
  Source(int fd, const std::string& name) : fd_(fd), name_(name) {}

  // The writer's side.
  void append(SpoolBlock& block) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return pending_.size() < kMaxPending || error_; });
    if (error_) std::rethrow_exception(error_);
    pending_.push_back(std::move(block));
    appended_ = true;
    block.clear();
    if (!spare_.empty()) {
      block = std::move(spare_.back());  // an emptied buffer keeps its capacity
      spare_.pop_back();
    }
    changed_.notify_all();
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  void rethrow_error() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }
  SpoolLayout take_layout() { return std::move(layout_); }

  // The indexing thread's side.
  // A whole block of whole lines is lent to the line reader: parsed where
  // it is (it is written to the spool already), not copied first.
  char* lend(std::size_t& size) override {
    size = 0;
    while (at_ == current_.bytes.size()) {
      if (!next_block()) return nullptr;
    }
    if (at_ != 0 || current_.bytes.back() != '\n') return nullptr;
    size = current_.bytes.size();
    current_.bytes.reserve(size + kLinePadding);  // see ByteSource::lend
    at_ = size;
    return current_.bytes.data();
  }
  std::size_t read(char* buffer, std::size_t size) override {
    while (at_ == current_.bytes.size()) {
      if (!next_block()) return 0;
    }
    size = std::min(size, current_.bytes.size() - at_);
    std::memcpy(buffer, current_.bytes.data() + at_, size);
    at_ += size;
    return size;
  }
  // After the scan, whether or not it read everything (the entry cap stops it).
  void write_the_rest() {
    while (next_block()) {
    }
  }
  void fail(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = error;
    closed_ = true;
    changed_.notify_all();
  }

 private:
  static constexpr std::size_t kMaxPending = 1;  // the writer hardly ever waits; each block is a MiB of memory

  // Takes the next block and writes it; false once the writer has closed.
  bool next_block() {
    holding_block_ = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      current_.clear();
      at_ = 0;  // also when no block follows: the next read finds the end again
      if (current_.bytes.capacity() > 0) spare_.push_back(std::move(current_));
      changed_.wait(lock, [&] { return !pending_.empty() || closed_; });
      if (pending_.empty()) return false;
      current_ = std::move(pending_.front());
      pending_.pop_front();
      holding_block_ = true;
      changed_.notify_all();
    }
    at_ = 0;
    layout_.add_block(current_);
    if (current_.borrowed.empty()) {
      write_all(fd_, current_.bytes.data(), current_.bytes.size(), name_);
      return true;
    }
    // Only the bytes between the borrowed runs, gathered into one write.
    stored_.clear();
    std::size_t from = 0;
    for (const BorrowedRun& run : current_.borrowed) {
      stored_.append(current_.bytes, from, static_cast<std::size_t>(run.at) - from);
      from = static_cast<std::size_t>(run.at + run.length);
    }
    stored_.append(current_.bytes, from, std::string::npos);
    write_all(fd_, stored_.data(), stored_.size(), name_);
    return true;
  }

  int fd_;
  const std::string& name_;
  SpoolBlock current_;  // the block being read, already written
  std::size_t at_ = 0;
  std::string stored_;  // current_'s stored bytes
  SpoolLayout layout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<SpoolBlock> pending_;
  std::vector<SpoolBlock> spare_;
  bool closed_ = false;
  std::exception_ptr error_;
  bool holding_block_ = false;  // current_ is a block taken from pending_
  bool appended_ = false;
};

SpoolIndexer::SpoolIndexer(int fd, std::string display_name, const IndexOptions& options) {
  index_.file = std::move(display_name);
  source_ = std::make_unique<Source>(fd, index_.file);
  thread_ = std::thread([this, options] {
    try {
      SessionIndex index = build_session_index(*source_, index_.file, options);
      index_ = std::move(index);
      source_->write_the_rest();
    } catch (...) {
      source_->fail(std::current_exception());
    }
  });
}

SpoolIndexer::~SpoolIndexer() {
  source_->close();
  if (thread_.joinable()) thread_.join();
}

void SpoolIndexer::append(SpoolBlock& block) { source_->append(block); }

SessionIndex SpoolIndexer::finish() {
  source_->close();
  thread_.join();
  source_->rethrow_error();
  return std::move(index_);
}

SpoolLayout SpoolIndexer::take_layout() { return source_->take_layout(); }

}  // namespace pihydrate
