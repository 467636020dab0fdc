// A LineSource that reads ahead: lines asked for in file order (a path, a
// tree) come out of a window of about a MiB read at once, not with a system
// call each. Out-of-order or long lines still work, at one read each.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "pihydrate/hydrate.h"

namespace pihydrate {

class ReadAheadLines final : public LineSource {
 public:
  // `size`: the source's size in bytes; no window reaches past it.
  ReadAheadLines(LineSource& inner, std::uint64_t size) : inner_(inner), size_(size) {}

  // A view of the window, valid until the next read.
  std::string_view read(std::uint64_t offset, std::uint64_t length, std::string&) override {
    if (offset < window_at_ || offset + length > window_at_ + window_.size()) {
      const std::uint64_t wanted = std::max(length, kWindowBytes);
      const std::uint64_t bytes = size_ >= offset + length ? std::min(wanted, size_ - offset) : length;
      window_ = inner_.read(offset, bytes, buffer_);
      window_at_ = offset;
    }
    return window_.substr(static_cast<std::size_t>(offset - window_at_), static_cast<std::size_t>(length));
  }

 private:
  static constexpr std::uint64_t kWindowBytes = std::uint64_t{1} << 20;
  LineSource& inner_;
  std::uint64_t size_;
  std::string buffer_;
  std::string_view window_;
  std::uint64_t window_at_ = 0;
};

}  // namespace pihydrate
