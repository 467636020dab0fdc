// A RapidJSON input stream over a byte range that never reads past its end:
// Peek() there yields '\0', which RapidJSON treats as the end of input.
// (RapidJSON 1.1.0's StringStream can read past a buffer's end on invalid
// UTF-8, Tencent/rapidjson#1636; callers reject NUL bytes before parsing, so
// '\0' is never ambiguous.)
#pragma once

#include <cstddef>
#include <string_view>

namespace pihydrate {

class BoundedStream {
 public:
  using Ch = char;
  explicit BoundedStream(std::string_view bytes, std::size_t start = 0)
      : begin_(bytes.data()), cur_(begin_ + start), end_(begin_ + bytes.size()) {}
  Ch Peek() const { return cur_ < end_ ? *cur_ : '\0'; }
  Ch Take() { return cur_ < end_ ? *cur_++ : '\0'; }
  std::size_t Tell() const { return static_cast<std::size_t>(cur_ - begin_); }
  const char* data() const { return begin_; }
  std::size_t size() const { return static_cast<std::size_t>(end_ - begin_); }
  // The write side of RapidJSON's stream concept; the Reader never uses it.
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }

 private:
  const char* begin_;
  const char* cur_;
  const char* end_;
};

}  // namespace pihydrate
