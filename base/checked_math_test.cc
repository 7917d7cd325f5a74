#include "base/checked_math.h"

#include <limits>

#include "gtest/gtest.h"

namespace reverie {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedMathTest, CheckedOpsReportOverflow) {
  int64_t r = 7;
  EXPECT_TRUE(CheckedAdd(1, 2, &r));
  EXPECT_EQ(r, 3);
  EXPECT_FALSE(CheckedAdd(kMax, 1, &r));
  EXPECT_EQ(r, 3);  // untouched
  EXPECT_FALSE(CheckedSub(kMin, 1, &r));
  EXPECT_FALSE(CheckedMul(int64_t{1} << 40, int64_t{1} << 30, &r));
  EXPECT_TRUE(CheckedMul(-(int64_t{1} << 31), int64_t{1} << 31, &r));
  EXPECT_EQ(r, -(int64_t{1} << 62));
}

TEST(CheckedMathTest, TimeSumsSaturateInsteadOfWrapping) {
  EXPECT_EQ(SatAddNs(5, 6), 11);
  EXPECT_EQ(SatAddNs(kMax, kMax), kSaturatedNs);
  EXPECT_EQ(SatAddNs(kMin, -1), -kSaturatedNs);
  EXPECT_EQ(SatAddNs(kSaturatedNs, 1), kSaturatedNs);
  EXPECT_EQ(SatSubNs(0, kMin), kSaturatedNs);
  EXPECT_EQ(SatSubNs(-5, kMax), -kSaturatedNs);
  // A saturated clock plus a few bounded durations still does not overflow.
  int64_t t = kSaturatedNs;
  for (int i = 0; i < 4; ++i) t = SatAddNs(t, kMaxDurationNs);
  EXPECT_EQ(t, kSaturatedNs);
}

TEST(CheckedMathTest, CountersSaturateAtTheLimits) {
  EXPECT_EQ(SatAdd(kMax, 1), kMax);
  EXPECT_EQ(SatAdd(kMin, -1), kMin);
  EXPECT_EQ(SatAdd(-3, 4), 1);
}

TEST(CheckedMathTest, DoublesOutsideTheLimitAreRefused) {
  int64_t r = 0;
  EXPECT_TRUE(DoubleToInt64(1.6, kMaxDurationNs, &r));
  EXPECT_EQ(r, 2);
  EXPECT_FALSE(DoubleToInt64(9.2e18, kMaxDurationNs, &r));
  EXPECT_FALSE(DoubleToInt64(std::numeric_limits<double>::infinity(), kMaxDurationNs, &r));
  EXPECT_FALSE(DoubleToInt64(std::numeric_limits<double>::quiet_NaN(), kMaxDurationNs, &r));
  EXPECT_TRUE(DoubleToInt64(-1e3, kMaxDurationNs, &r));
  EXPECT_EQ(r, -1000);
}

TEST(CheckedMathTest, BoundsLeaveRoomForTheirSums) {
  int64_t r = 0;
  // Any two timestamps' difference, and a timestamp plus a duration, fit.
  EXPECT_TRUE(CheckedSub(kMaxAbsTimestampNs - 1, -(kMaxAbsTimestampNs - 1), &r));
  EXPECT_TRUE(CheckedAdd(kMaxAbsTimestampNs, kMaxDurationNs, &r));
  // Blocks times threads per block fits.
  EXPECT_TRUE(CheckedMul(kMaxGridBlocks, kMaxBlockThreads, &r));
}

// Issue 29, D21: a range's size as e - f + 1 wrapped to about -2^63.
TEST(CheckedMathTest, RangeCountAndSatMulSaturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(RangeCount(1, 10), 10);
  EXPECT_EQ(RangeCount(5, 4), 0);
  EXPECT_EQ(RangeCount(-2, kMax), kMax);
  EXPECT_EQ(RangeCount(kMin, kMax), kMax);
  EXPECT_EQ(RangeCount(kMin, -1), kMax);
  EXPECT_EQ(RangeCount(kMin + 1, -1), kMax);
  EXPECT_EQ(RangeCount(kMin + 2, -1), kMax - 1);
  EXPECT_EQ(SatMul(4, kMax / 2), kMax);
  EXPECT_EQ(SatMul(-4, kMax / 2), kMin);
  EXPECT_EQ(SatMul(kMin, -1), kMax);
  EXPECT_EQ(SatMul(48, 1000), 48000);
}

}  // namespace
}  // namespace reverie
