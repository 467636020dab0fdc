// Fast path: dropping a mapped export's pages behind the converter's phases.
// Each phase walks the entries front to back and says where it reads
// (reading); once it has moved a step from where the last release happened,
// the pages it is done with go (ExportResidency). JSON lookups know nothing
// of it: the phases call it between entries.
#pragma once

#include <algorithm>
#include <cstddef>

#include "hydrate/thread_export.h"

namespace pihydrate {

class PageWindow {
 public:
  static constexpr std::size_t kStep = std::size_t{4} << 20;
  PageWindow() = default;  // releases nothing
  // `export_size`: everything the owner may release. A shared window (a
  // second thread's) releases only the range it read, so the owner's pages
  // stay; it goes through ExportResidency::release_range.
  PageWindow(ExportResidency* residency, std::size_t export_size, bool shared)
      : residency_(residency), export_size_(export_size), shared_(shared) {}

  void reading(std::size_t offset) {
    if (!residency_) return;
    if (offset >= anchor_ + kStep || offset + kStep <= anchor_) {
      if (shared_)
        residency_->release_range(low_, high_ + kStep);
      else
        residency_->release_before(export_size_);
      anchor_ = low_ = high_ = offset;
    } else {
      low_ = std::min(low_, offset);
      high_ = std::max(high_, offset);
    }
  }

 private:
  ExportResidency* residency_ = nullptr;
  std::size_t export_size_ = 0;
  bool shared_ = false;
  // About one step of the export stays resident per window: reads since the
  // last release lie within a step of `anchor_`, in [low_, high_].
  std::size_t anchor_ = 0, low_ = 0, high_ = 0;
};

}  // namespace pihydrate
