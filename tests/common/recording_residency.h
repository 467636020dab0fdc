// An ExportResidency that records what it is told, for tests of page dropping.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "readers/thread_export.h"

namespace pihydrate {
namespace test_support {

class RecordingResidency final : public ExportResidency {
 public:
  void release_before(std::size_t offset) override { released.push_back(offset); }
  void rewritten(std::size_t begin, std::size_t end) override { rewrites.emplace_back(begin, end); }
  void release_range(std::size_t begin, std::size_t end) override { ranges.emplace_back(begin, end); }
  std::vector<std::size_t> released;
  std::vector<std::pair<std::size_t, std::size_t>> rewrites, ranges;
};

}  // namespace test_support
}  // namespace pihydrate
