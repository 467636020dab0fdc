// PageWindow: what a phase's walk over a mapped export lets go, and when.
#include "readers/page_window.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace pihydrate {
namespace {

class Recorder final : public ExportResidency {
 public:
  void release_before(std::size_t offset) override { before.push_back(offset); }
  void rewritten(std::size_t, std::size_t) override {}
  std::vector<std::size_t> before;
};

constexpr std::size_t kStep = PageWindow::kStep;

TEST(PageWindowTest, TheOwnerLetsEverythingGoOnceAStepAway) {
  Recorder r;
  PageWindow window(&r, 100 * kStep);
  for (std::size_t at = 0; at < kStep; at += 4096) window.reading(at);
  EXPECT_TRUE(r.before.empty()) << "still within a step";
  window.reading(kStep);
  ASSERT_EQ(r.before.size(), 1u);
  EXPECT_EQ(r.before[0], 100 * kStep);
  window.reading(kStep + 10);
  EXPECT_EQ(r.before.size(), 1u) << "a new step starts where the last release happened";
  window.reading(0);  // far back: also a step away
  EXPECT_EQ(r.before.size(), 2u);
}

}  // namespace
}  // namespace pihydrate
