// Reading a JSON-lines input record by record without holding it whole: its
// file read in blocks (and again at a record's offset, for a second pass),
// or bytes in memory. The Gemini CLI and Copilot CLI readers stream their
// inputs through it; memory is bounded by the longest line, not the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "readers/jsonl_lines.h"

namespace pihydrate {

class LogSource {
 public:
  virtual ~LogSource() = default;
  // Up to `n` bytes from `offset` into `out`; 0 at the end.
  virtual std::size_t read_at(std::uint64_t offset, char* out, std::size_t n) const = 0;
};

class BytesSource final : public LogSource {
 public:
  explicit BytesSource(std::string bytes) : bytes_(std::move(bytes)) {}
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t n) const override;

 private:
  std::string bytes_;
};

// A file read with pread: the reader's offset is left alone. IoError when a read fails.
class FileSource final : public LogSource {
 public:
  FileSource(int fd, const std::string& name) : fd_(fd), name_(name) {}
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t n) const override;

 private:
  int fd_;
  const std::string& name_;
};

// `size` bytes from `offset`, lone UTF-16 surrogate escapes rewritten as for
// the other inputs; fewer when the input ended (it shrank under the reader).
std::string read_record(const LogSource& source, std::uint64_t offset, std::size_t size);

// Records read again in about the order of the input (a second pass): a
// window of the input, a MiB or the record, is read at once and the records
// inside it are taken from it, instead of a read each.
class RecordWindow {
 public:
  // As read_record; the bytes stay until the next call, and the caller may change them (a parse in place:
  // kLinePadding bytes past them are addressable).
  std::string& read(const LogSource& source, std::uint64_t offset, std::size_t size);

 private:
  std::string window_;
  std::uint64_t window_begin_ = 0;
  std::string record_;
};

// JSONL framing over a source, as for_each_jsonl_line frames a string
// (jsonl_lines.h: LF, a CR before it, a BOM, blank lines skipped), one line
// in memory at a time; offsets and columns are the input's. Calls `visit`
// until it returns false.
void for_each_log_line(const LogSource& source, const std::function<bool(const JsonlLine&)>& visit);

}  // namespace pihydrate
