// Atomic, verified output: lines go to a temporary file (mode 0600) in the
// target's directory, which is fsynced and renamed over the target only when
// everything succeeded. On any failure the temporary file is removed, and on
// SIGINT/SIGTERM/SIGHUP too when the owner of the process asks for it: no
// partial or empty session is ever left behind.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "pihydrate/hydrate.h"

namespace pihydrate {

// Writes all of [data, data + size) to `fd`, retrying short and interrupted
// writes. Throws IoError ("cannot write NAME: reason").
void write_all(int fd, const char* data, std::size_t size, const std::string& name);
// Reads exactly `size` bytes at `offset` of `fd` into `out`, retrying short
// and interrupted reads. Throws IoError ("cannot read NAME: reason"), and
// InputShrankError when the file ends before them.
void pread_all(int fd, char* out, std::uint64_t size, std::uint64_t offset, const std::string& name);

// Lines written to a std::ostream as they come (`-o -`).
class StreamSink final : public LineSink {
 public:
  explicit StreamSink(std::ostream& out) : out_(out) {}
  void write_line(std::string_view line) override;
  void write_lines(std::string_view lines) override;

 private:
  std::ostream& out_;
};

class OutputFile final : public LineSink {
 public:
  // Creates the temporary file in `directory`. Throws IoError. With
  // `remove_on_signals` (opt-in: process-wide, for a program that owns its
  // process), SIGINT, SIGTERM and SIGHUP, unless ignored, remove it and end
  // the process as the signal would, and SIGPIPE is ignored from then on;
  // the handlers stay installed. One such OutputFile at a time.
  explicit OutputFile(const std::string& directory, bool remove_on_signals = false);
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write_line(std::string_view line) override;
  void write_lines(std::string_view lines) override;
  // Reserves the file's blocks ahead (see output_file.cc); what is not
  // written is given back by finish().
  void expect_bytes(std::uint64_t bytes) override;
  // Writes out what is buffered; the temporary file can then be read back
  // through fd() (verification reads it before it is synced).
  void flush();
  int fd() const { return fd_; }
  // Flushes and fsyncs, once: later calls do nothing. It may run on
  // another thread while this one reads the file through fd() (the
  // verification), but nothing else may use the OutputFile meanwhile.
  void finish();
  const std::string& temp_path() const { return temp_path_; }
  // Renames the temporary file to `target` (refusing an existing one unless
  // `overwrite`) and fsyncs the directory. Throws IoError.
  void commit(const std::string& target, bool overwrite);
  // Hands the written lines to `sink` (a verified output for a sink),
  // flushed but not synced; the destructor removes the file.
  void copy_to(LineSink& sink);
  // Copies the finished (synced) file to `out`; throws IoError when `out`
  // fails. The destructor removes the file.
  void copy_to(std::ostream& out);

 private:
  std::string temp_path_;
  std::string directory_;
  int fd_ = -1;
  void start_writeback();
  std::string buffer_;
  std::uint64_t written_ = 0;                                        // bytes written to the temporary file
  bool reserved_ = false;                                            // expect_bytes reserved blocks past the end
  std::uint64_t writeback_started_ = 0;                              // bytes whose writeback was started
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;  // written out when it holds this much
  static constexpr std::uint64_t kWritebackStep = std::uint64_t{8} << 20;
  bool done_ = false;
  bool finished_ = false;
  bool remove_on_signals_ = false;
};

// Refusals shared by every writer: a target that is a symlink, that is the
// input itself, or that exists without `overwrite`. Throws IoError.
void check_output_target(const std::string& target, const std::string& input_path, bool overwrite);

}  // namespace pihydrate
