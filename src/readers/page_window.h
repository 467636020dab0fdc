// Fast path: dropping a mapped export's pages behind the converter's phases.
// Each phase walks the entries front to back and says where it reads
// (reading); once it has moved a step from where the last release happened,
// the pages it is done with go (ExportResidency). JSON lookups know nothing
// of it: the phases call it between entries.
#pragma once

#include <cstddef>

#include "readers/thread_export.h"

namespace pihydrate {

class PageWindow {
 public:
  static constexpr std::size_t kStep = std::size_t{4} << 20;
  PageWindow() = default;  // releases nothing
  // `export_size`: everything a release lets go of (the pages read since
  // fault back in when read again).
  PageWindow(ExportResidency* residency, std::size_t export_size) : residency_(residency), export_size_(export_size) {}

  void reading(std::size_t offset) {
    if (!residency_) return;
    if (offset >= anchor_ + kStep || offset + kStep <= anchor_) {
      residency_->release_before(export_size_);
      anchor_ = offset;
    }
  }

 private:
  ExportResidency* residency_ = nullptr;
  std::size_t export_size_ = 0;
  // About one step of the export stays resident: reads since the last
  // release lie within a step of `anchor_`.
  std::size_t anchor_ = 0;
};

}  // namespace pihydrate
