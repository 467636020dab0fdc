// Reading a session file or stream line by line, with positions and a cap on the longest line.
#include "pihydrate/line_reader.h"

#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "pihydrate/errors.h"

namespace pihydrate {
namespace {

// Past the data: a '\0' for a last line without '\n', then the padding.
constexpr std::size_t kSpare = 1 + kLinePadding;

class FdSource final : public ByteSource {
 public:
  FdSource(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  std::size_t read(char* buffer, std::size_t size) override {
    for (;;) {
      ssize_t n = ::read(fd_, buffer, size);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno == EINTR) continue;
      throw IoError("cannot read " + name_ + ": " + std::strerror(errno));
    }
  }

 private:
  int fd_;
  std::string name_;
};

class IstreamSource final : public ByteSource {
 public:
  explicit IstreamSource(std::istream& in) : in_(in) {}
  std::size_t read(char* buffer, std::size_t size) override {
    in_.read(buffer, static_cast<std::streamsize>(size));
    return static_cast<std::size_t>(in_.gcount());
  }

 private:
  std::istream& in_;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  std::size_t read(char* buffer, std::size_t size) override {
    std::size_t n = std::min(size, bytes_.size() - pos_);
    std::memcpy(buffer, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> make_fd_source(int fd, std::string name) {
  return std::make_unique<FdSource>(fd, std::move(name));
}
std::unique_ptr<ByteSource> make_istream_source(std::istream& in) { return std::make_unique<IstreamSource>(in); }
std::unique_ptr<ByteSource> make_memory_source(std::string_view bytes) { return std::make_unique<MemorySource>(bytes); }

LineReader::LineReader(ByteSource& source, LineReaderOptions options) : source_(source), options_(options) {
  if (options_.max_line_bytes > kMaxLineBytesLimit) options_.max_line_bytes = kMaxLineBytesLimit;
  if (options_.read_chunk == 0) options_.read_chunk = 1;
  buffer_.resize(options_.read_chunk + kSpare);
  data_ = buffer_.data();
}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ == end_) {
    // Nothing pending: whole lines the source lends are read where they are,
    // not copied first.
    std::size_t size = 0;
    if (char* lent = source_.lend(size); lent != nullptr && size > 0) {
      data_ = lent;
      begin_ = 0;
      end_ = size;
      return true;
    }
  }
  std::size_t pending = end_ - begin_;
  if (data_ != buffer_.data()) {
    // Leaving lent bytes: what is left of them moves into the own buffer.
    if (buffer_.size() < pending + options_.read_chunk + kSpare) buffer_.resize(pending + options_.read_chunk + kSpare);
    std::memcpy(buffer_.data(), data_ + begin_, pending);
    data_ = buffer_.data();
  } else if (begin_ > 0) {
    // Move the unconsumed tail to the front, then grow if there is no room.
    std::memmove(buffer_.data(), buffer_.data() + begin_, pending);
  }
  begin_ = 0;
  end_ = pending;
  // Spare bytes past the data: the last line's '\0', and the padding.
  if (buffer_.size() - end_ < options_.read_chunk + kSpare) {
    buffer_.resize(end_ + options_.read_chunk + kSpare);
    data_ = buffer_.data();
  }
  std::size_t n = source_.read(buffer_.data() + end_, buffer_.size() - end_ - kSpare);
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  return true;
}

bool LineReader::next(Line& line) {
  std::size_t scanned = 0;  // bytes after begin_ already known to hold no '\n'
  for (;;) {
    const char* start = data_ + begin_;
    const void* nl = std::memchr(start + scanned, '\n', end_ - begin_ - scanned);
    std::size_t available = end_ - begin_;
    if (nl != nullptr || (eof_ && available > 0) || available > options_.max_line_bytes) {
      if (nl == nullptr && available > options_.max_line_bytes) break;  // too long
      std::size_t len = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - start) : available;
      char* writable = data_ + begin_;
      writable[len] = '\0';  // the '\n', or the spare byte after the last line
      line.data = writable;
      line.bytes = std::string_view(start, len);
      line.number = ++line_number_;
      line.offset = consumed_;
      line.length = len;
      line.has_newline = nl != nullptr;
      line.too_long = len > options_.max_line_bytes;
      if (line.too_long) line.bytes = std::string_view(), line.data = nullptr;
      std::size_t step = len + (nl ? 1 : 0);
      begin_ += step;
      consumed_ += step;
      return true;
    }
    if (eof_) return false;
    scanned = available;
    if (!fill()) {
      if (end_ - begin_ == 0) return false;
    }
  }
  // The line is longer than the cap: discard bytes until its end, keeping
  // memory flat, and report only its position and length.
  std::uint64_t length = 0;
  line.number = ++line_number_;
  line.offset = consumed_;
  for (;;) {
    const char* start = data_ + begin_;
    std::size_t available = end_ - begin_;
    const void* nl = std::memchr(start, '\n', available);
    if (nl != nullptr) {
      std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      length += len;
      begin_ += len + 1;
      consumed_ += len + 1;
      line.has_newline = true;
      break;
    }
    length += available;
    consumed_ += available;
    begin_ = end_ = 0;
    if (!fill()) {
      line.has_newline = false;
      break;
    }
  }
  line.bytes = std::string_view();
  line.data = nullptr;
  line.length = length;
  line.too_long = true;
  return true;
}

}  // namespace pihydrate
