#include "report/plots.h"

#include <cmath>

#include "gtest/gtest.h"
#include "report/xml_check.h"

namespace reverie::report {
namespace {

using testing::CheckWellFormed;
using testing::Count;
using testing::CountTag;

// Data bars and points carry a <title> tooltip; axes, grid and legends don't.
int DataMarks(const std::string& s) { return Count(s, "</title>"); }

TEST(PlotsTest, StackedBreakdownHasOneBarPerSeriesAndStep) {
  BarChart c;
  c.title = "Runtime breakdown";
  c.x_label = "step";
  c.y_label = "time (ms)";
  c.stacked = true;
  c.categories = {"ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"};
  c.series = {"CPU only", "GPU only", "CPU + GPU", "idle"};
  c.values = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {0.5, 0.5, 0.5}};
  const std::string s = RenderBarChart(c).Str();
  EXPECT_EQ(CheckWellFormed(s), "") << s;
  EXPECT_EQ(DataMarks(s), 12);
  for (const char* label :
       {"Runtime breakdown", "time (ms)", "step", "CPU only", "idle", "ProfilerStep#2"}) {
    EXPECT_NE(s.find(label), std::string::npos) << label;
  }
  // Highest stack is 18.5 ms: the top tick (step 5) must reach it.
  EXPECT_NE(s.find(">20</text>"), std::string::npos) << s;
}

TEST(PlotsTest, GroupedBarsEscapeNames) {
  BarChart c;
  c.title = "baseline vs predicted";
  c.y_label = "step time (ms)";
  c.categories = {"amp.lua", "a<b>&c.lua"};
  c.series = {"baseline", "predicted"};
  c.values = {{10, 10}, {6, 12}};
  const std::string s = RenderBarChart(c).Str();
  EXPECT_EQ(CheckWellFormed(s), "") << s;
  EXPECT_EQ(DataMarks(s), 4);
  EXPECT_NE(s.find("a&lt;b&gt;&amp;c.lua"), std::string::npos);
}

TEST(PlotsTest, HBarKeepsTopNByMagnitude) {
  HBarChart c;
  c.title = "per-layer change";
  c.x_label = "change (ms)";
  c.top_n = 3;
  c.labels = {"a", "b", "c", "d", "e"};
  c.values = {0.1, -5, 2, -0.2, 3};
  const std::string s = RenderHBarChart(c).Str();
  EXPECT_EQ(CheckWellFormed(s), "") << s;
  EXPECT_EQ(DataMarks(s), 3);
  EXPECT_NE(s.find(">b</text>"), std::string::npos);
  EXPECT_NE(s.find(">e</text>"), std::string::npos);
  EXPECT_NE(s.find(">c</text>"), std::string::npos);
  EXPECT_EQ(s.find(">a</text>"), std::string::npos);
}

TEST(PlotsTest, LineChartOneLinePerSeriesSkipsMissing) {
  LineChart c;
  c.title = "sweep";
  c.x_label = "workers";
  c.y_label = "step time (ms)";
  c.x = {1, 2, 4, 8};
  c.series = {{"bw=10", {10, 6, 4, 3}}, {"bw=25", {10, 5, NAN, 2}}};
  const std::string s = RenderLineChart(c).Str();
  EXPECT_EQ(CheckWellFormed(s), "") << s;
  EXPECT_EQ(CountTag(s, "polyline"), 2);
  EXPECT_EQ(CountTag(s, "circle"), 7);
  EXPECT_NE(s.find("bw=25"), std::string::npos);
  EXPECT_NE(s.find(">8</text>"), std::string::npos);
}

TEST(PlotsTest, EmptyChartsStillWellFormed) {
  EXPECT_EQ(CheckWellFormed(RenderBarChart({}).Str()), "");
  EXPECT_EQ(CheckWellFormed(RenderHBarChart({}).Str()), "");
  EXPECT_EQ(CheckWellFormed(RenderLineChart({}).Str()), "");
}

}  // namespace
}  // namespace reverie::report
