// whatif::FirstStepShare: how much of a predicted change the first counted
// step holds. A hunt found a change that sat wholly in the first step
// (blueconnect.lua on a loader-bound trace: +34.8 ms there, the five later
// steps unchanged) read as a 3.3% slower step; predict now says so.
#include <vector>

#include "gtest/gtest.h"
#include "whatif/prediction_report.h"

namespace reverie {
namespace {

depgraph::SimResult Steps(const std::vector<int64_t>& durations, int counted) {
  depgraph::SimResult r;
  int64_t t = 0;
  for (size_t i = 0; i < durations.size(); ++i) {
    r.steps.push_back({.step = static_cast<int32_t>(i),
                       .start_ns = t,
                       .end_ns = t + durations[i],
                       .counted = static_cast<int>(i) < counted});
    t += durations[i];
  }
  return r;
}

TEST(FirstStepShareTest, AChangeInTheFirstStepOnlyIsAllOfIt) {
  const depgraph::SimResult base = Steps({100, 100, 100, 100}, 4);
  EXPECT_DOUBLE_EQ(*whatif::FirstStepShare(base, Steps({140, 100, 100, 100}, 4)), 1.0);
  EXPECT_DOUBLE_EQ(*whatif::FirstStepShare(base, Steps({60, 100, 100, 100}, 4)), 1.0);
  // The same change in every step: a quarter.
  EXPECT_DOUBLE_EQ(*whatif::FirstStepShare(base, Steps({110, 110, 110, 110}, 4)), 0.25);
  // Uncounted steps are left out: 10 of 10 + 10 + 10.
  EXPECT_DOUBLE_EQ(
      *whatif::FirstStepShare(Steps({100, 100, 100, 100}, 3), Steps({110, 110, 110, 500}, 3)),
      1.0 / 3);
}

TEST(FirstStepShareTest, UndefinedWithoutThreeStepsOrAChange) {
  EXPECT_FALSE(whatif::FirstStepShare(Steps({100, 100}, 2), Steps({150, 100}, 2)).has_value());
  const depgraph::SimResult base = Steps({100000, 100000, 100000}, 3);
  EXPECT_FALSE(whatif::FirstStepShare(base, base).has_value());
  // Under 0.1% of the steps: noise, no share.
  EXPECT_FALSE(whatif::FirstStepShare(base, Steps({100100, 100000, 100000}, 3)).has_value());
  EXPECT_TRUE(whatif::FirstStepShare(base, Steps({100400, 100000, 100000}, 3)).has_value());
}

}  // namespace
}  // namespace reverie
