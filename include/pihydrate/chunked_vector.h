// A growable array in fixed-size chunks: elements never move, and growing
// never holds two copies. std::vector doubles by copying, so an index of N
// entries briefly needed room for 3N/2..2N of them; here the peak is N plus
// one chunk.
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace pihydrate {

template <typename T, std::size_t kChunk = 4096>
class ChunkedVector {
 public:
  ChunkedVector() = default;
  // A moved-from vector is empty (not a size without chunks).
  ChunkedVector(ChunkedVector&& other) noexcept
      : chunks_(std::move(other.chunks_)), size_(std::exchange(other.size_, 0)) {
    other.chunks_.clear();
  }
  ChunkedVector& operator=(ChunkedVector&& other) noexcept {
    chunks_ = std::move(other.chunks_);
    other.chunks_.clear();
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  T& operator[](std::size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  const T& operator[](std::size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T value) {
    if (size_ % kChunk == 0 && size_ / kChunk == chunks_.size()) chunks_.push_back(std::make_unique<T[]>(kChunk));
    (*this)[size_++] = std::move(value);
  }

  // Moves `other`'s elements to the end, each passed through `adjust`, and
  // frees each of its chunks once copied: appending N elements never needs
  // room for more than N plus one chunk of them at once.
  template <typename Adjust>
  void append_consuming(ChunkedVector&& other, Adjust adjust) {
    other.consume_each([&](T& value) {
      adjust(value);
      push_back(std::move(value));
    });
  }
  // Hands each element to `take`, in order, and frees each chunk once its
  // elements are handed over; the vector is then empty.
  template <typename Take>
  void consume_each(Take take) {
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const std::size_t first = c * kChunk;
      for (std::size_t i = first; i < size_ && i < first + kChunk; ++i) take(chunks_[c][i - first]);
      chunks_[c].reset();
    }
    chunks_.clear();
    size_ = 0;
  }

  template <typename Owner, typename Value>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = Value*;
    using reference = Value&;
    Iterator(Owner* owner, std::size_t i) : owner_(owner), i_(i) {}
    reference operator*() const { return (*owner_)[i_]; }
    pointer operator->() const { return &(*owner_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return i_ == other.i_; }
    bool operator!=(const Iterator& other) const { return i_ != other.i_; }

   private:
    Owner* owner_;
    std::size_t i_;
  };
  using iterator = Iterator<ChunkedVector, T>;
  using const_iterator = Iterator<const ChunkedVector, const T>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace pihydrate
