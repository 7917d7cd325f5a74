// Acceptance on the real ResNet trace (label real_traces): compare a trace
// with itself, sweep and report with the amp.lua library script, and render
// the report with headless Chromium. Skips when the trace, the script or
// Chromium is missing, saying which.
#include <cstdio>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/common/real_traces.h"
#include "report/testing/chromium.h"
#include "base/testing/cli_runner.h"

namespace reverie::testing {
namespace {

constexpr char kCli[] = REVERIE_CLI;

std::string FindScript(const std::string& name) {
  for (const char* sub : {"scripts/lib/", "scripts/", "examples/"}) {
    const std::string p = std::string(REVERIE_SOURCE_DIR) + "/" + sub + name;
    if (std::filesystem::exists(p)) return p;
  }
  return "";
}

TEST(ReportCliRealTest, CompareTraceWithItself) {
  REVERIE_REQUIRE_TRACE(path, testing::kRtxResnetTrace);
  const std::string dir = TempDir("cmp_real");
  const CliResult r = RunCli(kCli, {"compare", path, path, "--json"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(doc["relative_error"].get_double().value(), 0.0);
  EXPECT_GT(doc["a"]["step_us"].get_double().value(), 0.0);
  EXPECT_GT(doc["kernel_count"].get_int64().value(), 10);
  EXPECT_EQ(doc["only_in_a_count"].get_int64().value(), 0);
  std::filesystem::remove_all(dir);
}

TEST(ReportCliRealTest, AmpReportRendersInChromium) {
  REVERIE_REQUIRE_TRACE(path, testing::kRtxResnetTrace);
  const std::string amp = FindScript("amp.lua");
  if (amp.empty()) GTEST_SKIP() << "amp.lua not found in the script library";
  const std::string dir = TempDir("report_real");
  const std::string html = dir + "/report.html", timeline = dir + "/timeline.json";
  const CliResult r =
      RunCli(kCli, {"report", path, "--script", amp, "-o", html, "--timeline", timeline}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::printf("%s", r.out.c_str());
  const std::string h = ReadFile(html);
  EXPECT_NE(h.find("<svg"), std::string::npos);
  EXPECT_EQ(h.find("http://"), std::string::npos);
  EXPECT_EQ(h.find("https://"), std::string::npos);
  EXPECT_EQ(h.find("src="), std::string::npos);
  EXPECT_NE(h.find("amp.lua"), std::string::npos);
  // The timeline holds the three runs and re-imports.
  const CliResult info = RunCli(kCli, {"info", timeline}, dir);
  EXPECT_EQ(info.exit_code, 0) << info.err;
  // Its measured run (pid 1) is the original trace again, kernel for kernel.
  const CliResult cmp = RunCli(kCli, {"compare", timeline, path, "--a-pid", "1", "--json"}, dir);
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(cmp.out).get(doc), simdjson::SUCCESS);
  EXPECT_NEAR(doc["relative_error"].get_double().value(), 0.0, 1e-9);
  EXPECT_EQ(doc["only_in_a_count"].get_int64().value(), 0);
  EXPECT_EQ(doc["only_in_b_count"].get_int64().value(), 0);

  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    GTEST_SKIP()
        << "chromium not installed (Debian package `chromium`): HTML checked, not rendered";
  }
  const std::string png = dir + "/report.png";
  ASSERT_EQ(RenderWithChromium(chromium, html, png, dir), 0) << ReadFile(dir + "/chromium.log");
  EXPECT_GT(std::filesystem::file_size(png), 20000u);
  std::filesystem::copy_file(png, std::string(REVERIE_BINARY_DIR) + "/report_resnet_amp.png",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reverie::testing
