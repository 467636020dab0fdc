// PageWindow: what a phase's walk over a mapped export lets go, and when.
#include "hydrate/page_window.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace pihydrate {
namespace {

class Recorder final : public ExportResidency {
 public:
  void release_before(std::size_t offset) override { before.push_back(offset); }
  void rewritten(std::size_t, std::size_t) override {}
  void release_range(std::size_t begin, std::size_t end) override { ranges.emplace_back(begin, end); }
  std::vector<std::size_t> before;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
};

constexpr std::size_t kStep = PageWindow::kStep;

TEST(PageWindowTest, TheOwnerLetsEverythingGoOnceAStepAway) {
  Recorder r;
  PageWindow window(&r, 100 * kStep, /*shared=*/false);
  for (std::size_t at = 0; at < kStep; at += 4096) window.reading(at);
  EXPECT_TRUE(r.before.empty()) << "still within a step";
  window.reading(kStep);
  ASSERT_EQ(r.before.size(), 1u);
  EXPECT_EQ(r.before[0], 100 * kStep);
  window.reading(kStep + 10);
  EXPECT_EQ(r.before.size(), 1u) << "a new step starts where the last release happened";
  window.reading(0);  // far back: also a step away
  EXPECT_EQ(r.before.size(), 2u);
  EXPECT_TRUE(r.ranges.empty());
}

TEST(PageWindowTest, ASharedWindowLetsGoOnlyWhatItRead) {
  Recorder r;
  PageWindow window(&r, 100 * kStep, /*shared=*/true);
  window.reading(50 * kStep);  // the first read is a step from 0: nothing read yet goes
  window.reading(50 * kStep + 100);
  window.reading(51 * kStep + 200);
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(r.ranges[1], std::make_pair(50 * kStep, 50 * kStep + 100 + kStep));
  EXPECT_TRUE(r.before.empty()) << "never the owner's pages";
}

}  // namespace
}  // namespace pihydrate
