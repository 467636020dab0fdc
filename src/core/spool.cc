#include "pihydrate/spool.h"

#include <algorithm>
#include <cstring>

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
  std::uint64_t at = offset;
  for (std::size_t k = first_ending_after(offset); at < end;) {
    if (k < runs_.size() && runs_[k].run.at <= at) {
      const BorrowedRun& r = runs_[k].run;
      const std::uint64_t stop = std::min(end, r.at + r.length);
      pread_all(export_fd, out + (at - offset), stop - at, r.export_offset + (at - r.at), name);
      at = stop;
      ++k;
    } else {
      const std::uint64_t stop = k < runs_.size() ? std::min(end, runs_[k].run.at) : end;
      std::memcpy(out + (at - offset), from_spool, stop - at);
      from_spool += stop - at;
      at = stop;
    }
  }
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
