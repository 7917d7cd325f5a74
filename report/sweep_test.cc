#include "report/sweep.h"

#include "gtest/gtest.h"
#include "report/xml_check.h"

namespace reverie::report {
namespace {

TEST(SweepTest, ParsesParam) {
  absl::StatusOr<SweepParam> p = ParseSweepParam("workers= 1, 2 ,4");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->key, "workers");
  EXPECT_EQ(p->values, (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_FALSE(ParseSweepParam("workers").ok());
  EXPECT_FALSE(ParseSweepParam("=1").ok());
  EXPECT_FALSE(ParseSweepParam("k=1,,2").ok());
}

TEST(SweepTest, GridIsCartesianLastFastest) {
  const auto grid = SweepGrid({{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}});
  ASSERT_EQ(grid.size(), 6u);
  EXPECT_EQ(grid[0], (std::vector<Setting>{{"a", "1"}, {"b", "x"}}));
  EXPECT_EQ(grid[1], (std::vector<Setting>{{"a", "1"}, {"b", "y"}}));
  EXPECT_EQ(grid[5], (std::vector<Setting>{{"a", "2"}, {"b", "z"}}));
  EXPECT_EQ(SweepGrid({}).size(), 1u);
}

TEST(SweepTest, RendersTableJsonAndChart) {
  SweepResult r;
  r.trace_path = "t.json";
  r.scripts = {"ddp.lua"};
  r.baseline_ns = 100e6;
  r.params = {{"workers", {"2", "4"}}, {"bandwidth", {"10", "25"}}};
  for (const auto& s : SweepGrid(r.params)) r.points.push_back({s, 50e6, ""});
  r.points[3].error = "boom";
  r.points[1].work_factor = 4;  // 4x the samples in a step half as long
  const std::string t = SweepTable(r);
  EXPECT_NE(t.find("2.000x"), std::string::npos) << t;
  EXPECT_NE(t.find("2.000x      8.000x"), std::string::npos) << t;
  EXPECT_NE(t.find("error: boom"), std::string::npos);
  const std::string j = SweepJson(r);
  EXPECT_NE(j.find("\"speedup\":2"), std::string::npos) << j;
  EXPECT_NE(j.find("\"work_per_step\":4,\"throughput_speedup\":8"), std::string::npos) << j;
  EXPECT_NE(j.find("\"error\":\"boom\""), std::string::npos);
  const std::string svg = SweepChart(r).Str();
  EXPECT_EQ(testing::CheckWellFormed(svg), "");
  // One line per bandwidth value plus the baseline.
  EXPECT_EQ(testing::CountTag(svg, "polyline"), 3);
  EXPECT_NE(svg.find("bandwidth=25"), std::string::npos);
}

}  // namespace
}  // namespace reverie::report
