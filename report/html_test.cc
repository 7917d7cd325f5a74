#include "report/html.h"

#include "gtest/gtest.h"
#include "report/xml_check.h"

namespace reverie::report {
namespace {

TEST(HtmlTest, SelfContainedAndWellFormed) {
  ReportData d;
  d.trace_path = "/traces/<odd>&name.json";
  d.measured_step_ns = 105e6;
  d.baseline_ns = 100e6;
  d.baseline_breakdown = {{"ProfilerStep#1", 10e6, 60e6, 20e6, 10e6}};
  ScriptOutcome amp;
  amp.name = "amp.lua";
  amp.predicted_ns = 60e6;
  amp.layers = {{"layer1.conv", 20e6, 10e6, 1, 1}, {"fc", 5e6, 5e6, 1, 1}};
  amp.kernels = {{"volta_sgemm<float>", 30e6, 12e6, 10, 10}};
  amp.breakdown = {{"ProfilerStep#1", 10e6, 30e6, 15e6, 5e6}};
  d.scripts.push_back(amp);
  ScriptOutcome bad;
  bad.name = "broken.lua";
  bad.error = "line 3: attempt to index nil";
  d.scripts.push_back(bad);
  d.critical_path = {{"length (ms)", "98.0"}, {"GPU share", "80%"}};
  d.anomalies = {{"kineto.unmatched_flow", 3}};
  d.settings = {{"scale", "0.5"}};
  const std::string h = RenderHtmlReport(d);
  EXPECT_EQ(testing::CheckWellFormed(h, /*html=*/true), "");
  EXPECT_EQ(h.find("http://"), std::string::npos);
  EXPECT_EQ(h.find("https://"), std::string::npos);
  EXPECT_EQ(h.find("src="), std::string::npos);
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("<link"), std::string::npos);
  // baseline-vs-predicted, two breakdowns, one per-layer chart.
  EXPECT_EQ(testing::CountTag(h, "svg"), 4);
  EXPECT_NE(h.find("1.667x"), std::string::npos);
  EXPECT_NE(h.find("&lt;odd&gt;&amp;name"), std::string::npos);
  EXPECT_NE(h.find("volta_sgemm&lt;float&gt;"), std::string::npos);
  EXPECT_NE(h.find("attempt to index nil"), std::string::npos);
  EXPECT_NE(h.find("kineto.unmatched_flow"), std::string::npos);
  EXPECT_NE(h.find("-10.000"), std::string::npos);  // layer1.conv change
}

}  // namespace
}  // namespace reverie::report
