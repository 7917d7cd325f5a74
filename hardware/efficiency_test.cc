#include "hardware/efficiency.h"

#include <vector>

#include "gtest/gtest.h"

namespace reverie::hardware {
namespace {

TEST(EfficiencyTest, RecoversALineFromKernelsOfManySizes) {
  // T = 4 us + R / 0.6 over sizes from 0.1 us to 2 ms of roofline time.
  std::vector<EfficiencySample> s;
  for (double r = 100; r < 2e6; r *= 1.7) s.push_back({r, 4000 + r / 0.6});
  const EfficiencyCurve c = FitEfficiency(s, 0.75, 1000);
  EXPECT_FALSE(c.slope_from_prior);
  EXPECT_NEAR(c.fixed_ns, 4000, 1);
  EXPECT_NEAR(c.ceiling(), 0.6, 1e-6);
  EXPECT_EQ(c.samples, static_cast<int64_t>(s.size()));
  // A bigger kernel runs closer to peak.
  EXPECT_LT(c.Efficiency(1e3), c.Efficiency(1e6));
  EXPECT_NEAR(c.Efficiency(1e9), 0.6, 1e-3);
}

TEST(EfficiencyTest, SmallKernelsAloneLeaveTheSlopeToThePrior) {
  // Every kernel is mostly fixed cost: 5 us for at most 0.5 us of work.
  std::vector<EfficiencySample> s;
  for (double r = 10; r < 500; r *= 1.5) s.push_back({r, 5000 + r});
  const EfficiencyCurve c = FitEfficiency(s, 0.75, 1000);
  EXPECT_TRUE(c.slope_from_prior);
  EXPECT_NEAR(c.ceiling(), 0.75, 1e-9);
  EXPECT_NEAR(c.fixed_ns, 5000, 200);
}

TEST(EfficiencyTest, OneSizeGivesTheSlopeFromTheRest) {
  // 100 copies of 4 MB at 6 GB/s on a 31.5 GB/s link: R = 133 us, T = 699 us.
  std::vector<EfficiencySample> s(100, {4194304 / 31.5, 1000 + 4194304 / 6.0});
  const EfficiencyCurve c = FitEfficiency(s, 0.4, 1000);
  EXPECT_FALSE(c.slope_from_prior);
  EXPECT_NEAR(c.ceiling() * 31.5, 6.0, 1e-6);
  EXPECT_DOUBLE_EQ(c.fixed_ns, 1000);
}

TEST(EfficiencyTest, NothingToFit) {
  const EfficiencyCurve c = FitEfficiency({}, 0.8, 1500);
  EXPECT_TRUE(c.slope_from_prior);
  EXPECT_EQ(c.samples, 0);
  EXPECT_DOUBLE_EQ(c.fixed_ns, 1500);
  EXPECT_NEAR(c.ceiling(), 0.8, 1e-12);
  // Zero, negative and non-finite samples are skipped.
  const EfficiencySample bad[] = {{0, 5}, {5, -1}, {1.0 / 0.0, 3}};
  EXPECT_EQ(FitEfficiency(bad, 0.8, 1500).samples, 0);
}

TEST(EfficiencyTest, NoKernelBeatsThePeak) {
  // Data faster than the roofline (a work estimate that is too high) do not
  // make a slope below 1.
  std::vector<EfficiencySample> s;
  for (double r = 100; r < 1e6; r *= 2) s.push_back({r, 100 + 0.5 * r});
  const EfficiencyCurve c = FitEfficiency(s, 0.75, 1000);
  EXPECT_GE(c.slope, 1.0);
}

}  // namespace
}  // namespace reverie::hardware
