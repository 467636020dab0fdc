// MappedFile: a thread export mapped copy-on-write, and its pages dropped behind the converter.
#include "core/mapped_file.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace pihydrate {
namespace {

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// Dropping pages costs a walk of the page table: done at most every 4 MiB
// of progress, which bounds what stays resident between two calls.
constexpr std::size_t kReleaseStep = std::size_t{4} << 20;

}  // namespace

std::unique_ptr<MappedFile> MappedFile::map(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return nullptr;
  const auto size = static_cast<std::size_t>(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  ::madvise(p, size, MADV_RANDOM);  // no read-around: pages come in only where a pass reads
  return std::unique_ptr<MappedFile>(new MappedFile(static_cast<char*>(p), size));
}

MappedFile::~MappedFile() { ::munmap(data_, size_); }

void MappedFile::rewritten(std::size_t begin, std::size_t end) {
  if (end <= begin) return;
  for (std::size_t page = begin / page_size(); page <= (end - 1) / page_size(); ++page) {
    auto at = std::lower_bound(pinned_.begin(), pinned_.end(), page);
    if (at == pinned_.end() || *at != page) pinned_.insert(at, page);
  }
}

void MappedFile::release_before(std::size_t offset) {
  offset = std::min(offset, size_);
  if (offset < released_) released_ = 0;  // a new pass from the front
  if (offset < released_ + kReleaseStep && offset < size_) return;
  // Whole pages before `offset` only; the page holding it may be in use.
  drop(0, offset == size_ ? (size_ + page_size() - 1) / page_size() : offset / page_size());
  released_ = offset;
}

void MappedFile::release_range(std::size_t begin, std::size_t end) {
  // Whole pages inside the range only, and no bookkeeping: madvise may run
  // on several threads, and pinned_ does not change once the converter reads.
  end = std::min(end, size_);
  const std::size_t first = (begin + page_size() - 1) / page_size();
  const std::size_t last = end == size_ ? (size_ + page_size() - 1) / page_size() : end / page_size();
  if (first < last) drop(first, last);
}

void MappedFile::drop(std::size_t begin_page, std::size_t end_page) {
  // Rewritten pages are private copies: dropping them would bring back the
  // file's bytes, so the range is cut around them.
  auto pin = std::lower_bound(pinned_.begin(), pinned_.end(), begin_page);
  for (std::size_t page = begin_page; page < end_page;) {
    const std::size_t stop = (pin != pinned_.end() && *pin < end_page) ? *pin : end_page;
    if (stop > page) ::madvise(data_ + page * page_size(), (stop - page) * page_size(), MADV_DONTNEED);
    if (stop == end_page) break;
    page = stop + 1;
    ++pin;
  }
}

}  // namespace pihydrate
