// Verification while writing: every written line also goes, in batches, to a
// second thread that indexes it exactly as build_session_index indexes a
// file. When writing ends, the index of the output is ready for the
// validator, without reading the file back and on the other core.
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "pihydrate/hydrate.h"

namespace pihydrate {
namespace {

constexpr std::size_t kBatchBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxQueuedBytes = std::size_t{4} << 20;  // keeps memory flat; 4 MiB keep both cores busy

}  // namespace

class ConcurrentVerifier::Queue final : public ByteSource {
 public:
  void push(std::string batch) {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [&] { return queued_ < kMaxQueuedBytes; });
    queued_ += batch.size();
    batches_.push_back(std::move(batch));
    ready_.notify_one();
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    ready_.notify_one();
  }
  std::size_t read(char* buffer, std::size_t size) override {
    if (pos_ == current_.size()) {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [&] { return !batches_.empty() || closed_; });
      if (batches_.empty()) return 0;
      current_ = std::move(batches_.front());
      batches_.pop_front();
      queued_ -= current_.size();
      pos_ = 0;
      room_.notify_one();
    }
    std::size_t n = std::min(size, current_.size() - pos_);
    std::memcpy(buffer, current_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<std::string> batches_;
  std::size_t queued_ = 0;
  bool closed_ = false;
  std::string current_;  // consumer side only
  std::size_t pos_ = 0;
};

ConcurrentVerifier::ConcurrentVerifier(LineSink& inner, std::string display_name, IndexOptions options)
    : inner_(inner), queue_(std::make_unique<Queue>()) {
  worker_ = std::thread([this, name = std::move(display_name), options] {
    try {
      result_ = build_session_index(*queue_, name, options);
    } catch (...) {
      error_ = std::current_exception();
    }
    // The index may stop early (the entry cap): keep draining, so the
    // writer never blocks on a full queue.
    char sink[1 << 16];
    while (queue_->read(sink, sizeof sink) > 0) {
    }
  });
}

ConcurrentVerifier::~ConcurrentVerifier() {
  if (worker_.joinable()) {
    queue_->close();
    worker_.join();
  }
}

void ConcurrentVerifier::write_line(std::string_view line) {
  inner_.write_line(line);
  batch_.append(line.data(), line.size());
  batch_ += '\n';
  if (batch_.size() >= kBatchBytes) {
    queue_->push(std::move(batch_));
    batch_.clear();
  }
}

SessionIndex ConcurrentVerifier::finish() {
  if (!batch_.empty()) queue_->push(std::move(batch_));
  batch_.clear();
  queue_->close();
  worker_.join();
  if (error_) std::rethrow_exception(error_);
  return std::move(result_);
}

}  // namespace pihydrate
