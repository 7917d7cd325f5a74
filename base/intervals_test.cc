#include "base/intervals.h"

#include <vector>

#include "gtest/gtest.h"

namespace reverie {
namespace {

TEST(IntervalsTest, OverlappingAndTouchingMergeEmptyOnesAreDropped) {
  const std::vector<Interval> merged =
      MergeIntervals({{50, 60}, {0, 10}, {10, 20}, {5, 8}, {30, 30}, {40, 35}, {55, 70}});
  EXPECT_EQ(merged, (std::vector<Interval>{{0, 20}, {50, 70}}));
}

TEST(IntervalsTest, CoversHalfOpenIntervals) {
  const std::vector<Interval> merged = MergeIntervals({{0, 10}, {20, 30}});
  EXPECT_TRUE(Covers(merged, 0));
  EXPECT_TRUE(Covers(merged, 9));
  EXPECT_FALSE(Covers(merged, 10));
  EXPECT_FALSE(Covers(merged, -1));
  EXPECT_TRUE(Covers(merged, 25));
  EXPECT_FALSE(Covers(merged, 30));
  EXPECT_FALSE(Covers({}, 0));
}

}  // namespace
}  // namespace reverie
