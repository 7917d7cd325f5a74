// The report's interactive timeline in a real browser: headless Chromium
// (Debian package `chromium`) driven through the DevTools protocol
// (report/testing/devtools.h) with real wheel, drag and hover input. The
// expected tooltip is read from the document the page embeds (whose match
// with the graph report/timeline_view_test.cc checks). Skips when Chromium
// is not installed.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/testing/cli_runner.h"
#include "depgraph/simulator.h"
#include "gtest/gtest.h"
#include "report/html.h"
#include "report/testing/chromium.h"
#include "report/testing/devtools.h"
#include "report/testing/synthetic_step.h"
#include "report/timeline_view.h"
#include "simdjson.h"

namespace reverie::testing {
namespace {

// A number the page evaluates `expr` to.
double Number(DevTools& dt, const std::string& expr) {
  absl::StatusOr<std::string> v = dt.Evaluate(expr);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? std::strtod(v->c_str(), nullptr) : NAN;
}

// The page's state after its next frame.
constexpr char kAfterFrame[] =
    "new Promise((r) => { const s = () => r(reverieTimeline.state());"
    " requestAnimationFrame(s); setTimeout(s, 1000); })";

class TimelineBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) {
      GTEST_SKIP() << "chromium not installed (Debian package `chromium`): cannot test the "
                      "report's timeline in a browser";
    }
    dir_ = TempDir("timeline_browser");
  }
  void TearDown() override {
    dt_.reset();
    if (!dir_.empty() && !HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Opens `html` and waits for the timeline's hook.
  void Open(const std::string& html) {
    absl::StatusOr<std::unique_ptr<DevTools>> dt = DevTools::Launch(chromium_, dir_ + "/browser");
    ASSERT_TRUE(dt.ok()) << dt.status();
    dt_ = std::move(*dt);
    absl::Status s = dt_->OpenPage("file://" + html, 1280, 900);
    ASSERT_TRUE(s.ok()) << s << "\n" << ReadFile(dt_->log_path());
    ASSERT_EQ(Number(*dt_, "typeof reverieTimeline === 'object' ? 1 : 0"), 1)
        << "the timeline script did not start:\n"
        << ReadFile(dt_->log_path());
  }

  simdjson::dom::element State(const char* expr = kAfterFrame) {
    absl::StatusOr<std::string> v = dt_->Evaluate(expr);
    EXPECT_TRUE(v.ok()) << v.status();
    state_json_ = v.ok() ? *v : "{}";
    return parser_.parse(state_json_).value();
  }

  std::string chromium_, dir_, state_json_;
  std::unique_ptr<DevTools> dt_;
  simdjson::dom::parser parser_;
};

// The document embedded in a report page.
std::string EmbeddedJson(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"tl-data\">";
  const size_t a = html.find(open);
  if (a == std::string::npos) return "";
  const size_t b = html.find("</script>", a);
  return html.substr(a + open.size(), b - a - open.size());
}

// The task the test hovers, and the tooltip lines it must produce, read from
// the page's document: the baseline's longest GPU task in a layer in the
// opening step (the longest of all when none has a layer).
struct HoverTarget {
  int64_t lane = -1, index = -1;
  std::string name, layer_line, phase_kind_line, duration_line;
};

HoverTarget PickTarget(simdjson::dom::element doc) {
  HoverTarget t;
  const int64_t open = doc["open_step"].get_int64().value();
  simdjson::dom::element view =
      doc["views"].at(doc["steps"].at(open)["views"].at(0).get_int64().value());
  simdjson::dom::array lanes = view["lanes"].get_array().value();
  int64_t best = -1;
  for (size_t l = 0; l < lanes.size(); ++l) {
    if (lanes.at(l)["kind"].get_string().value() != "stream") continue;
    simdjson::dom::array d = lanes.at(l)["d"].get_array().value();
    simdjson::dom::array layer_of = lanes.at(l)["l"].get_array().value();
    for (size_t i = 0; i < d.size(); ++i) {
      const int64_t rank = d.at(i).get_int64().value() +
                           (layer_of.at(i).get_int64().value() > 0 ? int64_t{1} << 40 : 0);
      if (rank > best)
        best = rank, t.lane = static_cast<int64_t>(l), t.index = static_cast<int64_t>(i);
    }
  }
  if (t.lane < 0) return t;
  simdjson::dom::element lane = lanes.at(t.lane);
  const int64_t k = lane["k"].at(t.index).get_int64().value();
  const int64_t layer = lane["l"].at(t.index).get_int64().value();
  t.name =
      std::string(doc["names"].at(lane["n"].at(t.index).get_int64().value()).get_string().value());
  t.layer_line =
      "layer: " + (layer == 0 ? std::string("(none)")
                              : std::string(doc["layers"].at(layer).get_string().value()));
  t.phase_kind_line = "phase: " + std::string(doc["phases"].at(k & 7).get_string().value()) +
                      " · kind: " + std::string(doc["kinds"].at(k >> 3).get_string().value());
  char duration[64];
  std::snprintf(duration, sizeof(duration), "duration: %.3f us",
                lane["d"].at(t.index).get_int64().value() / 1e3);
  t.duration_line = duration;
  return t;
}

// The example trace's report with amp.lua, open in the browser.
class ExampleReportTest : public TimelineBrowserTest {
 protected:
  void SetUp() override {
    TimelineBrowserTest::SetUp();
    if (IsSkipped()) return;
    const std::string html = dir_ + "/report.html";
    const CliResult r =
        RunCli(REVERIE_CLI,
               {"report", std::string(REVERIE_SOURCE_DIR) + "/examples/tiny_mlp_training.json",
                "--script", "amp.lua", "-o", html},
               dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json_ = EmbeddedJson(ReadFile(html));
    doc_ = doc_parser_.parse(json_).value();
    ASSERT_NO_FATAL_FAILURE(Open(html));
  }

  // Zooms with the wheel over task `index` of baseline lane `lane`, at least
  // three times and until it is 30 px wide, checking each time that the time
  // under the cursor stays put. Returns where the task is, in whole pixels.
  std::pair<double, double> WheelOnto(int64_t lane, int64_t index) {
    const std::string locate = absl::StrCat("reverieTimeline.locate(0,", lane, ",", index, ")");
    double x = 0, y = 0;
    for (int i = 0; i < 12; ++i) {
      x = std::round(Number(*dt_, locate + ".x")), y = std::round(Number(*dt_, locate + ".y"));
      if (i >= 3 && Number(*dt_, locate + ".width") >= 30) return {x, y};
      simdjson::dom::element st = State("reverieTimeline.state()");
      const double before =
          st["t0"].get_double().value() +
          (x - st["plotLeft"].get_double().value()) * st["nsPerPx"].get_double().value();
      EXPECT_TRUE(dt_->Mouse("mouseWheel", x, y, "\"deltaX\":0,\"deltaY\":-400").ok());
      st = State();
      const double px = st["nsPerPx"].get_double().value();
      const double after =
          st["t0"].get_double().value() + (x - st["plotLeft"].get_double().value()) * px;
      EXPECT_NEAR(after, before, 1.0 + px) << "zoom moved the time under the cursor";
    }
    ADD_FAILURE() << "the wheel did not zoom onto the task";
    return {x, y};
  }

  std::string json_;
  simdjson::dom::parser doc_parser_;
  simdjson::dom::element doc_;
};

TEST_F(ExampleReportTest, OpensOnTheFirstCountedStepWithTheCriticalPath) {
  simdjson::dom::element st = State();
  EXPECT_EQ(st["step"].get_int64().value(), doc_["open_step"].get_int64().value());
  ASSERT_EQ(st["lanes"].get_array().size(), 2u) << "baseline and prediction";
  EXPECT_GT(st["lanes"].at(0).get_int64().value(), 1);
  EXPECT_GT(st["stats"]["rects"].get_int64().value(), 0);
  EXPECT_GT(st["stats"]["path"].get_int64().value(), 0) << "critical path drawn";
  EXPECT_EQ(st["stats"]["arrows"].get_int64().value(), 0) << "launch arrows are off by default";
}

TEST_F(ExampleReportTest, WheelZoomsAndHoverDescribesTheTask) {
  const HoverTarget target = PickTarget(doc_);
  ASSERT_GE(target.lane, 0) << "no GPU task in the opening step";
  simdjson::dom::element st = State("reverieTimeline.state()");
  const double span = st["t1"].get_double().value() - st["t0"].get_double().value();
  const auto [x, y] = WheelOnto(target.lane, target.index);
  st = State("reverieTimeline.state()");
  EXPECT_LT(st["t1"].get_double().value() - st["t0"].get_double().value(), span / 4);

  ASSERT_TRUE(dt_->Mouse("mouseMoved", x, y).ok());
  absl::StatusOr<std::string> tip = dt_->Evaluate(
      "(() => { const t = document.getElementById('tl-tip');"
      " return t.style.display === 'block' ? t.textContent : 'hidden'; })()");
  ASSERT_TRUE(tip.ok()) << tip.status();
  simdjson::dom::parser tip_parser;
  const std::string text(tip_parser.parse(*tip).value().get_string().value());
  EXPECT_EQ(text.substr(0, text.find('\n')), target.name) << text;
  EXPECT_NE(text.find(target.layer_line + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find(target.phase_kind_line), std::string::npos) << text;
  EXPECT_NE(text.find(target.duration_line), std::string::npos) << text;
  // A picture for people to look at, beside the build.
  EXPECT_TRUE(dt_->Screenshot(std::string(REVERIE_BINARY_DIR) + "/report_timeline_hover.png").ok());
}

TEST_F(ExampleReportTest, DragPans) {
  const double x = std::round(Number(*dt_, "reverieTimeline.locate(0,0,0).x")) + 50;
  const double y = std::round(Number(*dt_, "reverieTimeline.locate(0,0,0).y"));
  ASSERT_TRUE(dt_->Evaluate("reverieTimeline.zoomTo(0, 100000)").ok());
  simdjson::dom::element st = State("reverieTimeline.state()");
  const double t0 = st["t0"].get_double().value(), px = st["nsPerPx"].get_double().value();
  // Dragging 200 px to the right shows what was 200 px to the left.
  ASSERT_TRUE(
      dt_->Mouse("mousePressed", x, y, "\"button\":\"left\",\"buttons\":1,\"clickCount\":1").ok());
  ASSERT_TRUE(dt_->Mouse("mouseMoved", x + 200, y, "\"button\":\"left\",\"buttons\":1").ok());
  ASSERT_TRUE(
      dt_->Mouse("mouseReleased", x + 200, y, "\"button\":\"left\",\"buttons\":0,\"clickCount\":1")
          .ok());
  st = State();
  EXPECT_NEAR(st["t0"].get_double().value(), t0 - 200 * px, px);
  EXPECT_DOUBLE_EQ(st["nsPerPx"].get_double().value(), px) << "a drag does not zoom";
}

TEST_F(ExampleReportTest, LaunchArrowsOnDemandAndStepSelector) {
  ASSERT_TRUE(dt_->Evaluate("document.querySelector('input[data-key=arrows]').click()").ok());
  simdjson::dom::element st = State();
  const int64_t arrows = st["stats"]["arrows"].get_int64().value();
  EXPECT_GT(arrows, 0);
  simdjson::dom::array views =
      doc_["steps"].at(doc_["open_step"].get_int64().value())["views"].get_array().value();
  int64_t launches = 0;
  for (simdjson::dom::element v : views) {
    launches += static_cast<int64_t>(
        doc_["views"].at(v.get_int64().value())["launch"].get_array().size() / 4);
  }
  EXPECT_LE(arrows, launches);
  ASSERT_TRUE(dt_->Evaluate("document.querySelector('input[data-key=arrows]').click()").ok());
  EXPECT_EQ(State()["stats"]["arrows"].get_int64().value(), 0);

  const int64_t other = doc_["open_step"].get_int64().value() == 0 ? 1 : 0;
  ASSERT_TRUE(
      dt_->Evaluate(absl::StrCat("(() => { const s = document.querySelector('.tl-bar select');"
                                 " s.value = '",
                                 other, "'; s.dispatchEvent(new Event('change')); })()"))
          .ok());
  st = State();
  EXPECT_EQ(st["step"].get_int64().value(), other);
  EXPECT_GT(st["stats"]["rects"].get_int64().value(), 0);
}

// A step of about 100k tasks: the page merges sub-pixel tasks, so a frame
// draws far fewer rectangles than the step has tasks, and a task is still
// found and described once zoomed in.
TEST_F(TimelineBrowserTest, LargeStepIsDecimated) {
  const depgraph::Graph g = SyntheticStepGraph(1, 47'000);
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g);
  ASSERT_TRUE(sim.ok());
  absl::StatusOr<std::string> json =
      report::RenderTimelineViewJson({{"baseline (simulated)", &g, &*sim}}, {});
  ASSERT_TRUE(json.ok()) << json.status();
  report::ReportData d;
  d.trace_path = "synthetic";
  d.timeline_json = *json;
  const std::string html = dir_ + "/large.html";
  std::ofstream(html) << report::RenderHtmlReport(d);

  ASSERT_NO_FATAL_FAILURE(Open(html));
  simdjson::dom::element st = State();
  const int64_t rects = st["stats"]["rects"].get_int64().value();
  const int64_t boxes = st["stats"]["boxes"].get_int64().value();
  EXPECT_GT(rects, 0);
  EXPECT_LT(boxes, 20'000) << "the whole-step view should draw a decimation level";
  EXPECT_LT(rects, 3 * 1280) << "at most a few rectangles per pixel column and lane";
  // Without merging every task is a rectangle (the critical path is turned
  // off first: drawn unmerged, it takes seconds a frame).
  ASSERT_TRUE(dt_->Evaluate("document.querySelector('input[data-key=path]').click()").ok());
  ASSERT_TRUE(dt_->Evaluate("document.querySelector('input[data-key=decimate]').click()").ok());
  st = State();
  EXPECT_GT(st["stats"]["rects"].get_int64().value(), 99'000);

  // Zoomed onto kernel 20,000 of the compute stream, it is drawn and named.
  simdjson::dom::parser doc_parser;
  simdjson::dom::element doc = doc_parser.parse(*json).value();
  simdjson::dom::element lane = doc["views"].at(0)["lanes"].at(1);
  ASSERT_EQ(lane["name"].get_string().value(), "stream 7 (gpu 0)");
  constexpr size_t kIndex = 20'000;
  int64_t start = 0;
  for (size_t i = 0; i <= kIndex; ++i) start += lane["s"].at(i).get_int64().value();
  const int64_t dur = lane["d"].at(kIndex).get_int64().value();
  ASSERT_TRUE(dt_->Evaluate("document.querySelector('input[data-key=decimate]').click()").ok());
  ASSERT_TRUE(dt_->Evaluate("reverieTimeline.zoomTo(" + std::to_string(start - 10 * dur) + "," +
                            std::to_string(start + 11 * dur) + ")")
                  .ok());
  const std::string locate = "reverieTimeline.locate(0,1," + std::to_string(kIndex) + ")";
  const double x = Number(*dt_, locate + ".x"), y = Number(*dt_, locate + ".y");
  EXPECT_GT(Number(*dt_, locate + ".width"), 20);
  ASSERT_TRUE(dt_->Mouse("mouseMoved", x, y).ok());
  absl::StatusOr<std::string> tip = dt_->Evaluate("document.getElementById('tl-tip').textContent");
  ASSERT_TRUE(tip.ok()) << tip.status();
  const std::string name(
      doc["names"].at(lane["n"].at(kIndex).get_int64().value()).get_string().value());
  EXPECT_EQ(tip->substr(1, name.size()), name) << *tip;
}

}  // namespace
}  // namespace reverie::testing
