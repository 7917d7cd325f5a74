// End-to-end tests of `reverie compare` (and the report outputs of
// `reverie report` / `reverie sweep` on a small synthetic trace) through the
// executable: exit statuses, one-line errors naming the file, clean --json.
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "simdjson.h"
#include "base/testing/cli_runner.h"

namespace reverie::testing {
namespace {

constexpr char kCli[] = REVERIE_CLI;

// A small valid Kineto trace: one ProfilerStep, launches of a gemm and a
// relu (`relu_us` long), optionally a conv, and one memcpy.
std::string KinetoTrace(int relu_us, bool with_conv) {
  std::string ev = R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#1",)"
                   R"("pid":1,"tid":1,"ts":0,"dur":400},)";
  auto launch = [&](int corr, int ts, const std::string& kname, const std::string& cat, int dur) {
    ev += R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" +
          std::to_string(ts) + R"(,"dur":5,"args":{"correlation":)" + std::to_string(corr) + "}},";
    ev += R"({"ph":"X","cat":")" + cat + R"(","name":")" + kname + R"(","pid":0,"tid":7,"ts":)" +
          std::to_string(ts + 10) + R"(,"dur":)" + std::to_string(dur) +
          R"(,"args":{"correlation":)" + std::to_string(corr) + R"(,"stream":7,"device":0}},)";
  };
  // One after another on the stream, as a stream runs them.
  launch(1, 10, "volta_sgemm_128x64_nn", "kernel", 100);
  launch(2, 120, "void at::native::vectorized_elementwise_kernel<4, relu>", "kernel", relu_us);
  if (with_conv) launch(3, 190, "implicit_convolve_sgemm", "kernel", 40);
  launch(4, 240, "Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", 20);
  ev.pop_back();
  return R"({"schemaVersion":1,"traceEvents":[)" + ev + "]}";
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

class CompareCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("compare_cli");
    a_ = dir_ + "/a.json";
    b_ = dir_ + "/b.json";
    WriteText(a_, KinetoTrace(50, false));
    WriteText(b_, KinetoTrace(30, true));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A malformed input must fail with exit 2 and one stderr line naming it.
  void ExpectBadInput(const std::string& bad, bool bad_is_first) {
    const CliResult r = RunCli(kCli,
                               bad_is_first ? std::vector<std::string>{"compare", bad, b_}
                                            : std::vector<std::string>{"compare", a_, bad},
                               dir_);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }

  std::string dir_, a_, b_;
};

TEST_F(CompareCliTest, JsonReportsDifferences) {
  const CliResult r = RunCli(kCli, {"compare", a_, b_, "--json"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(doc["a"]["steps"].get_int64().value(), 1);
  EXPECT_DOUBLE_EQ(doc["step_diff_us"].get_double().value(), 0.0);
  // relu: 50 us in A, 30 us in B.
  bool found = false;
  simdjson::dom::array classes = doc["classes"].get_array().value();
  for (simdjson::dom::element c : classes) {
    if (c["name"].get_string().value() == "activation") {
      found = true;
      EXPECT_NEAR(c["diff_us"].get_double().value(), 20.0, 1e-6);
    }
  }
  EXPECT_TRUE(found);
  simdjson::dom::array only_b = doc["only_in_b"].get_array().value();
  ASSERT_EQ(only_b.size(), 1u);
  EXPECT_EQ(only_b.at(0)["name"].get_string().value(), "implicit_convolve_sgemm");
  EXPECT_EQ(doc["only_in_a_count"].get_int64().value(), 0);
}

TEST_F(CompareCliTest, TextOutput) {
  const CliResult r = RunCli(kCli, {"compare", a_, b_}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel classes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("implicit_convolve_sgemm"), std::string::npos);
}

// A timeline's measured run against the trace it came from: the same
// kernels, so the same classes. The timeline keeps no op spans, so both
// sides are read by name (the trace's Adam kernels read as `optimizer`
// from their Optimizer.step span, the timeline's as `elementwise`, once).
TEST_F(CompareCliTest, ATimelineAgainstItsTraceHasTheSameClasses) {
  const std::string tiny = std::string(REVERIE_SOURCE_DIR) + "/examples/tiny_mlp_training.json";
  const std::string tl = dir_ + "/tl.json";
  ASSERT_EQ(
      RunCli(kCli, {"predict", tiny, "--script", "identity.lua", "--timeline", tl}, dir_).exit_code,
      0);
  const CliResult r = RunCli(kCli, {"compare", tl, tiny, "--a-pid", "1", "--json"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(r.out);
  EXPECT_TRUE(doc["classes_by_name_only"].get_bool().value());
  int classes = 0;
  for (simdjson::dom::element c : doc["classes"].get_array()) {
    EXPECT_NEAR(c["a_us"].get_double().value(), c["b_us"].get_double().value(), 1e-3)
        << c["name"].get_string().value();
    ++classes;
  }
  EXPECT_GT(classes, 5);
}

TEST_F(CompareCliTest, MissingFile) { ExpectBadInput(dir_ + "/nope.json", true); }

TEST_F(CompareCliTest, EmptyFile) {
  WriteText(dir_ + "/empty.json", "");
  ExpectBadInput(dir_ + "/empty.json", false);
}

TEST_F(CompareCliTest, TruncatedJson) {
  const std::string t = KinetoTrace(50, false);
  WriteText(dir_ + "/trunc.json", t.substr(0, t.size() / 2));
  ExpectBadInput(dir_ + "/trunc.json", true);
}

TEST_F(CompareCliTest, NotATrace) {
  WriteText(dir_ + "/garbage.pb", std::string("\x07\x01garbage\xff\xfe", 11));
  ExpectBadInput(dir_ + "/garbage.pb", false);
  WriteText(dir_ + "/list.json", "[1,2,3]");
  ExpectBadInput(dir_ + "/list.json", true);
}

TEST_F(CompareCliTest, BadArguments) {
  EXPECT_EQ(RunCli(kCli, {"compare", a_}, dir_).exit_code, 2);
  EXPECT_EQ(RunCli(kCli, {"compare", a_, b_, "--frobnicate"}, dir_).exit_code, 2);
  EXPECT_EQ(RunCli(kCli, {"compare", a_, b_, "--top"}, dir_).exit_code, 2);
}

// A script that only declares parameters: the prediction equals the
// baseline, which pins down the plumbing of report / sweep without depending
// on any optimization's effect.
constexpr char kNoopScript[] = R"(
local p = reverie.params{
  workers = {default = 1, doc = "workers"},
  bandwidth = {default = 10, doc = "GB/s"},
}
reverie.log("workers=" .. tostring(p.workers))
)";

class ReportSweepCliTest : public CompareCliTest {
 protected:
  void SetUp() override {
    CompareCliTest::SetUp();
    script_ = dir_ + "/noop.lua";
    WriteText(script_, kNoopScript);
  }
  std::string script_;
};

TEST_F(ReportSweepCliTest, SweepJsonGridAndSvg) {
  const std::string svg = dir_ + "/sweep.svg";
  const CliResult r = RunCli(kCli,
                             {"sweep", a_, "--script", script_, "--set", "workers=1,2,4", "--set",
                              "bandwidth=10,25", "--json", "--svg", svg},
                             dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  simdjson::dom::array points = doc["points"].get_array().value();
  ASSERT_EQ(points.size(), 6u);
  const double base = doc["baseline_us"].get_double().value();
  EXPECT_GT(base, 0);
  for (simdjson::dom::element p : points) {
    EXPECT_NEAR(p["predicted_us"].get_double().value(), base, 1e-6);
    EXPECT_NEAR(p["speedup"].get_double().value(), 1.0, 1e-9);
  }
  EXPECT_EQ(points.at(1)["settings"]["bandwidth"].get_string().value(), "25");
  const std::string chart = ReadFile(svg);
  EXPECT_NE(chart.find("<svg"), std::string::npos);
  EXPECT_EQ(std::count(chart.begin(), chart.end(), '\n') > 10, true);
  EXPECT_NE(chart.find("bandwidth=25"), std::string::npos);
}

TEST_F(ReportSweepCliTest, SweepRejectsBadInput) {
  EXPECT_EQ(RunCli(kCli, {"sweep", a_, "--script", script_}, dir_).exit_code, 2);
  EXPECT_EQ(RunCli(kCli, {"sweep", a_, "--script", script_, "--set", "workers"}, dir_).exit_code,
            2);
  const CliResult r = RunCli(
      kCli, {"sweep", dir_ + "/missing.json", "--script", script_, "--set", "workers=1,2"}, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;
}

TEST_F(ReportSweepCliTest, ReportIsSelfContained) {
  const std::string html = dir_ + "/report.html";
  const std::string timeline = dir_ + "/timeline.json";
  const CliResult r = RunCli(
      kCli,
      {"report", a_, "--script", script_, "--set", "workers=2", "-o", html, "--timeline", timeline},
      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string h = ReadFile(html);
  EXPECT_NE(h.find("<svg"), std::string::npos);
  EXPECT_EQ(h.find("http://"), std::string::npos);
  EXPECT_EQ(h.find("https://"), std::string::npos);
  EXPECT_EQ(h.find("src="), std::string::npos);
  EXPECT_NE(h.find("noop.lua"), std::string::npos);
  EXPECT_NE(h.find("1.000x"), std::string::npos);
  EXPECT_NE(ReadFile(timeline).find("\"ac2g\""), std::string::npos);
  // The timeline is itself a trace compare can read.
  // The timeline is itself a trace compare can read; its predicted run
  // (pid 3) matches the measured trace's kernels one for one.
  const CliResult c = RunCli(kCli, {"compare", timeline, a_, "--a-pid", "3", "--json"}, dir_);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(c.out).get(doc), simdjson::SUCCESS) << c.out;
  EXPECT_EQ(doc["only_in_a_count"].get_int64().value(), 0);
  EXPECT_EQ(doc["only_in_b_count"].get_int64().value(), 0);
  EXPECT_EQ(doc["kernel_count"].get_int64().value(), 3);
}

TEST_F(ReportSweepCliTest, ReportTimelineStep) {
  const std::string html = dir_ + "/report.html";
  CliResult r = RunCli(
      kCli, {"report", a_, "--script", script_, "-o", html, "--timeline-step", "0"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(html).find("\"open_step\":0"), std::string::npos);
  // The trace has one step: step 1 does not exist, and nothing is written.
  std::filesystem::remove(html);
  r = RunCli(kCli, {"report", a_, "--script", script_, "-o", html, "--timeline-step", "1"}, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(a_ + " has 1 step (0-0)"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(html));
  r = RunCli(kCli, {"report", a_, "--script", script_, "-o", html, "--timeline-step", "x"}, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--timeline-step expects a step number (0 = the first step), got 'x'"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace reverie::testing
