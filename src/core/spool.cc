// The spool: a converted session written in blocks to a temp file, runs borrowed from the export.
#include "pihydrate/spool.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "pihydrate/errors.h"
#include "pihydrate/hydrate.h"
#include "pihydrate/output_file.h"

namespace pihydrate {

void SpoolLayout::add_block(const SpoolBlock& block) {
  for (const BorrowedRun& r : block.borrowed) {
    Run run;
    run.run = r;
    run.run.at += session_size_;
    run.borrowed_before = borrowed_size_;
    runs_.push_back(run);
    borrowed_size_ += r.length;
  }
  session_size_ += block.bytes.size();
}

std::size_t SpoolLayout::first_ending_after(std::uint64_t at) const {
  auto it = std::upper_bound(runs_.begin(), runs_.end(), at,
                             [](std::uint64_t x, const Run& r) { return x < r.run.at + r.run.length; });
  return static_cast<std::size_t>(it - runs_.begin());
}

bool SpoolLayout::borrowed_at(std::uint64_t at, std::uint64_t& export_offset, std::uint64_t& left) const {
  const std::size_t k = first_ending_after(at);
  if (k == runs_.size() || runs_[k].run.at > at) return false;
  const BorrowedRun& r = runs_[k].run;
  export_offset = r.export_offset + (at - r.at);
  left = r.at + r.length - at;
  return true;
}

std::uint64_t SpoolLayout::stored_offset(std::uint64_t at) const {
  const std::size_t k = first_ending_after(at);
  if (k == runs_.size()) return at - borrowed_size_;
  const Run& r = runs_[k];
  // `at` is before run k, or inside it: the runs before k lie wholly before it.
  return std::min(at, r.run.at) - r.borrowed_before;
}

namespace {

// A borrowed run's bytes to read from the export into place.
struct Piece {
  char* to;
  std::uint64_t from;
  std::uint64_t length;
};

// Reads exactly the bytes `iov` describes, from `offset` on; like pread_all.
void preadv_all(int fd, std::vector<iovec>& iov, std::uint64_t offset, const std::string& name) {
  std::size_t first = 0;
  while (first < iov.size()) {
    const ssize_t n =
        ::preadv(fd, iov.data() + first, static_cast<int>(iov.size() - first), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) throw InputShrankError("cannot read " + name + ": it shrank");
    offset += static_cast<std::uint64_t>(n);
    for (std::size_t left = static_cast<std::size_t>(n); left > 0 && first < iov.size();) {
      const std::size_t taken = std::min(left, iov[first].iov_len);
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + taken;
      iov[first].iov_len -= taken;
      left -= taken;
      if (iov[first].iov_len == 0) ++first;
    }
    while (first < iov.size() && iov[first].iov_len == 0) ++first;
  }
}

// A MiB of session holds a hundred borrowed runs or more, and consecutive
// ones nearly always lie in order in the export, a few hundred bytes apart
// (the envelope around a message, the entries that give no line): such a
// group is read with one preadv, the bytes between runs into a scratch
// buffer, instead of with a pread per run.
void read_pieces(int fd, const std::vector<Piece>& pieces, const std::string& name) {
  constexpr std::uint64_t kMaxGap = std::uint64_t{64} << 10;
  constexpr std::size_t kMaxIov = 1024;  // Linux's UIO_MAXIOV
  std::vector<char> gap;
  std::vector<iovec> iov;
  for (std::size_t i = 0; i < pieces.size();) {
    const std::uint64_t start = pieces[i].from;
    std::uint64_t at = start;
    iov.clear();
    std::size_t j = i;
    for (; j < pieces.size() && iov.size() + 2 <= kMaxIov; ++j) {
      const Piece& p = pieces[j];
      if (p.from < at || p.from - at > kMaxGap) break;
      if (p.from > at) {
        if (gap.empty()) gap.resize(kMaxGap);
        iov.push_back({gap.data(), static_cast<std::size_t>(p.from - at)});
      }
      iov.push_back({p.to, static_cast<std::size_t>(p.length)});
      at = p.from + p.length;
    }
    preadv_all(fd, iov, start, name);
    i = j;
  }
}

}  // namespace

std::string_view SpoolLayout::read(int spool_fd, int export_fd, const std::string& name, std::uint64_t offset,
                                   std::uint64_t length, std::string& scratch) const {
  // The stored bytes of the range are contiguous in the spool file: they
  // are read at once, behind the range's own bytes in `scratch`, and the
  // borrowed runs are read from the export straight into place.
  const std::uint64_t end = offset + length;
  const std::uint64_t stored_begin = stored_offset(offset), stored_end = stored_offset(end);
  const std::uint64_t stored = stored_end - stored_begin;
  if (scratch.size() < length + stored) scratch.resize(static_cast<std::size_t>(length + stored));
  char* const out = scratch.data();
  const char* from_spool = out + length;
  pread_all(spool_fd, out + length, stored, stored_begin, name);
  std::vector<Piece> pieces;
  std::uint64_t at = offset;
  for (std::size_t k = first_ending_after(offset); at < end;) {
    if (k < runs_.size() && runs_[k].run.at <= at) {
      const BorrowedRun& r = runs_[k].run;
      const std::uint64_t stop = std::min(end, r.at + r.length);
      pieces.push_back({out + (at - offset), r.export_offset + (at - r.at), stop - at});
      at = stop;
      ++k;
    } else {
      const std::uint64_t stop = k < runs_.size() ? std::min(end, runs_[k].run.at) : end;
      std::memcpy(out + (at - offset), from_spool, stop - at);
      from_spool += stop - at;
      at = stop;
    }
  }
  read_pieces(export_fd, pieces, name);
  return std::string_view(out, static_cast<std::size_t>(length));
}

namespace {

class SpoolLineSource final : public LineSource {
 public:
  SpoolLineSource(int spool_fd, int export_fd, SpoolLayout layout, std::string name)
      : spool_fd_(spool_fd), export_fd_(export_fd), layout_(std::move(layout)), name_(std::move(name)) {}
  std::string_view read(std::uint64_t offset, std::uint64_t length, std::string& scratch) override {
    if (offset + length > layout_.session_size()) throw InputShrankError("cannot read " + name_ + ": it shrank");
    return layout_.read(spool_fd_, export_fd_, name_, offset, length, scratch);
  }

 private:
  int spool_fd_;
  int export_fd_;
  SpoolLayout layout_;
  std::string name_;
};

}  // namespace

std::unique_ptr<LineSource> make_spool_line_source(int spool_fd, int export_fd, SpoolLayout layout, std::string name) {
  return std::make_unique<SpoolLineSource>(spool_fd, export_fd, std::move(layout), std::move(name));
}

}  // namespace pihydrate
