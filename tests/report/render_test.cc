// Renders a report built from synthetic numbers with headless Chromium: the
// HTML must be a page a browser lays out (not just well-formed text). Skips
// when Chromium is not installed (Debian package `chromium`).
#include <cstdint>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "report/html.h"
#include "report/testing/chromium.h"
#include "base/testing/cli_runner.h"

namespace reverie::report {
namespace {

ReportData SyntheticReport() {
  ReportData d;
  d.trace_path = "synthetic.json";
  d.measured_step_ns = 105e6;
  d.baseline_ns = 100e6;
  for (int i = 1; i <= 3; ++i) {
    d.baseline_breakdown.push_back(
        {"ProfilerStep#" + std::to_string(i), 10e6, 60e6 + i * 1e6, 20e6, 10e6 - i * 1e6});
  }
  ScriptOutcome amp;
  amp.name = "amp.lua";
  amp.predicted_ns = 62e6;
  for (int l = 0; l < 20; ++l) {
    amp.layers.push_back({"layer" + std::to_string(l) + ".conv", 5e6, 5e6 - l * 2e5, 1, 1});
  }
  amp.kernels = {{"volta_sgemm_128x64_nn", 30e6, 12e6, 10, 10},
                 {"void at::native::vectorized_elementwise_kernel<4>", 3e6, 3.5e6, 80, 80}};
  amp.breakdown = d.baseline_breakdown;
  d.scripts.push_back(amp);
  d.critical_path = {{"length (ms)", "98.0"}, {"GPU tasks on path", "412"}};
  d.anomalies = {{"trace: kineto.unmatched_flow", 3}};
  return d;
}

uint32_t BigEndian32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

TEST(ReportRenderTest, ChromiumRendersSyntheticReport) {
  const std::string chromium = testing::FindChromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "chromium not installed (Debian package `chromium`): cannot render the "
                    "HTML report to a PNG";
  }
  const std::string dir = testing::TempDir("render");
  const std::string html = dir + "/report.html", png = dir + "/report.png";
  {
    std::ofstream f(html);
    f << RenderHtmlReport(SyntheticReport());
  }
  ASSERT_EQ(testing::RenderWithChromium(chromium, html, png, dir), 0)
      << testing::ReadFile(dir + "/chromium.log");
  const std::string bytes = testing::ReadFile(png);
  ASSERT_GT(bytes.size(), 20000u) << "PNG too small to hold the charts";
  ASSERT_EQ(bytes.substr(1, 3), "PNG");
  EXPECT_EQ(BigEndian32(bytes, 16), 1280u);  // IHDR width
  EXPECT_EQ(BigEndian32(bytes, 20), 2000u);  // IHDR height
  // Keep a copy beside the build for people to look at.
  std::filesystem::copy_file(png, std::string(REVERIE_BINARY_DIR) + "/report_render_test.png",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reverie::report
