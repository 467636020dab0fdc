// A regular file mapped copy-on-write, for reading a big thread export in
// place: pages the converter is done with are dropped (madvise), so peak
// memory does not follow the file's size. Pages the converter rewrote are
// kept. A file that shrinks while mapped raises SIGBUS on access; a caller
// that opts in (ProcessHooks::exit_on_shrunk_input, as the CLI does) has
// that reported as PH904 and exit 1.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "readers/thread_export.h"

namespace pihydrate {

class MappedFile final : public ExportResidency {
 public:
  // Maps the whole regular file `fd` (private, writable). Returns null when
  // it cannot be mapped (not a regular file, empty, or mmap fails); the
  // caller then reads it instead.
  static std::unique_ptr<MappedFile> map(int fd);
  ~MappedFile() override;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  char* data() { return data_; }
  std::size_t size() const { return size_; }

  void release_before(std::size_t offset) override;
  void rewritten(std::size_t begin, std::size_t end) override;
  void release_range(std::size_t begin, std::size_t end) override;

 private:
  MappedFile(char* data, std::size_t size) : data_(data), size_(size) {}
  void drop(std::size_t begin_page, std::size_t end_page);  // [begin, end) in pages, pinned pages kept
  char* data_;
  std::size_t size_;
  std::size_t released_ = 0;         // bytes before it were dropped by the last call
  std::vector<std::size_t> pinned_;  // page numbers holding rewritten bytes, sorted
};

}  // namespace pihydrate
