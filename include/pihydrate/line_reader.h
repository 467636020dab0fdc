// Streaming JSONL line splitting. Memory stays bounded by the longest line
// (or by the line cap), never by the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pihydrate {

// Where bytes come from: a file descriptor, an std::istream or memory.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes; returns 0 at end of input. Throws IoError.
  virtual std::size_t read(char* buffer, std::size_t size) = 0;
  // Optionally, instead of read: the next bytes in the source's own
  // writable memory, whole lines ending with '\n', followed by at least
  // kLinePadding more addressable bytes (Line::data). The caller may change
  // them (a line reader parses them in place) and uses them until it calls
  // the source again. nullptr when the source has no such bytes to lend:
  // read goes on from where the source is.
  virtual char* lend(std::size_t& size) {
    size = 0;
    return nullptr;
  }
};

std::unique_ptr<ByteSource> make_fd_source(int fd, std::string name);
std::unique_ptr<ByteSource> make_istream_source(std::istream& in);
std::unique_ptr<ByteSource> make_memory_source(std::string_view bytes);

// Bytes that stay addressable past a line's '\0'. RapidJSON's SSE2 scans of
// an in-place string load aligned 16-byte blocks, so they may read up to 15
// bytes past the '\0' (never acting on them); padded buffers keep those
// loads inside the allocation, where AddressSanitizer has nothing to report.
constexpr std::size_t kLinePadding = 16;

struct Line {
  std::string_view bytes;  // without the '\n' (a '\r' before it is kept)
  // The same bytes, writable, with a '\0' right after them (where the '\n'
  // was) and kLinePadding bytes after that: in-place parsers may use the
  // line as their buffer.
  char* data = nullptr;
  std::uint64_t number = 0;  // 1-based physical line number
  std::uint64_t offset = 0;  // byte offset of the line's first byte
  std::uint64_t length = 0;  // true length in bytes, even when too_long
  bool has_newline = false;  // false only for a last line without '\n'
  bool too_long = false;     // longer than the cap: `bytes` is empty
};

// The highest cap on a line's length (512 MiB - 2): byte columns of an
// index then fit in 29 bits (session_index.h). Larger caps are clamped.
constexpr std::size_t kMaxLineBytesLimit = (std::size_t{1} << 29) - 2;

struct LineReaderOptions {
  std::size_t max_line_bytes = std::size_t{256} << 20;  // 256 MiB; at most kMaxLineBytesLimit
  std::size_t read_chunk = std::size_t{1} << 20;        // 1 MiB
};

class LineReader {
 public:
  LineReader(ByteSource& source, LineReaderOptions options = {});

  // Fills `line` with the next line; returns false at the end of input.
  // `line.bytes` stays valid until the next call.
  bool next(Line& line);

  std::uint64_t bytes_read() const { return consumed_; }

 private:
  bool fill();  // reads more bytes; false at end of input

  ByteSource& source_;
  LineReaderOptions options_;
  std::vector<char> buffer_;
  char* data_;             // buffer_'s bytes, or those the source lent
  std::size_t begin_ = 0;  // start of unconsumed bytes in data_
  std::size_t end_ = 0;    // end of valid bytes in data_
  bool eof_ = false;
  std::uint64_t line_number_ = 0;
  std::uint64_t consumed_ = 0;  // file offset of data_[begin_]
};

}  // namespace pihydrate
