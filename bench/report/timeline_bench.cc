// report_timeline_bench: the report's interactive timeline (report/timeline_view.h)
// on one step of about 100k tasks, opened in headless Chromium through the
// DevTools protocol. Measures the time to build the page's JSON, the page's
// size and load time, and the mean frame time (drawing plus rasterisation:
// each frame reads a pixel back) at several zooms with decimation and, as
// the same-run baseline, without it (every task its own rectangle).
//
//   report_timeline_bench [--ops N] [--trace TRACE [--tasks N]] [--frames F] [--reps R]
//                         [--keep FILE.html] [--png FILE.png]
//
// Each figure is the best of R runs (default 3) of up to F frames (default
// 20, fewer when a frame takes long: at least 2 and about a second's worth).
//
// Default: the synthetic graph of report/testing/synthetic_step.h with N =
// 47,000 ops (~100k tasks in one step). With --trace, the trace's graph
// replicated back to back (depgraph/replicate.h) until it has --tasks tasks
// (default 100,000), all of them made one step. The page shows the step twice,
// baseline and a prediction whose kernels take half as long, as a report does.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "bench/graph/bench_graph.h"
#include "depgraph/replicate.h"
#include "depgraph/simulator.h"
#include "report/html.h"
#include "report/testing/chromium.h"
#include "report/testing/devtools.h"
#include "report/testing/synthetic_step.h"
#include "report/timeline_view.h"
#include "simdjson.h"

namespace {

using reverie::bench::Clock;
using reverie::bench::Seconds;
using reverie::depgraph::Graph;
using reverie::depgraph::SimResult;
using reverie::depgraph::TaskId;

int Fail(const std::string& msg) {
  std::fprintf(stderr, "report_timeline_bench: %s\n", msg.c_str());
  return 1;
}

std::optional<Graph> TraceStep(const std::string& path, size_t tasks) {
  std::optional<Graph> base = reverie::bench::LoadGraph("report_timeline_bench", path);
  if (!base) return std::nullopt;
  const int copies =
      static_cast<int>((tasks + base->live_task_count() - 1) / base->live_task_count());
  Graph g = reverie::depgraph::ReplicateGraph(*base, copies);
  // One step: every task (its markers included) in step 0.
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    if (!g.removed(TaskId(i))) g.set_step(TaskId(i), 0);
  }
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  int ops = 47'000, frames = 20, reps = 3;
  size_t tasks = 100'000;
  std::string trace, keep, png;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--ops")
      ops = std::atoi(v.c_str());
    else if (a == "--trace")
      trace = v;
    else if (a == "--tasks")
      tasks = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--frames")
      frames = std::atoi(v.c_str());
    else if (a == "--reps")
      reps = std::max(1, std::atoi(v.c_str()));
    else if (a == "--keep")
      keep = v;
    else if (a == "--png")
      png = v;
    else
      return Fail("unknown option " + a);
  }
  const std::string chromium = reverie::testing::FindChromium();
  if (chromium.empty()) return Fail("chromium not installed (Debian package `chromium`)");

  std::optional<Graph> base =
      trace.empty() ? std::optional<Graph>(reverie::testing::SyntheticStepGraph(1, ops))
                    : TraceStep(trace, tasks);
  if (!base) return 2;
  Graph fast = *base;
  for (uint32_t i = 0; i < fast.task_count(); ++i) {
    const TaskId t(i);
    if (!fast.removed(t) && fast.kind(t) == reverie::depgraph::TaskKind::kKernel) {
      fast.set_duration_ns(t, fast.duration_ns(t) / 2);
    }
  }
  absl::StatusOr<SimResult> s0 = reverie::depgraph::Simulate(*base);
  absl::StatusOr<SimResult> s1 = reverie::depgraph::Simulate(fast);
  if (!s0.ok() || !s1.ok()) return Fail("simulation failed");

  auto t = Clock::now();
  absl::StatusOr<std::string> json = reverie::report::RenderTimelineViewJson(
      {{"baseline (simulated)", &*base, &*s0}, {"kernels x0.5", &fast, &*s1}}, {.step = 0});
  const double json_s = Seconds(t, Clock::now());
  if (!json.ok()) return Fail(std::string(json.status().message()));
  const reverie::report::StepView view = reverie::report::TimelineIndex(*base, *s0).View(0);
  reverie::report::ReportData d;
  d.trace_path = trace.empty() ? "synthetic" : trace;
  d.timeline_json = *json;
  d.baseline_ns = s0->mean_step_ns();
  const std::string scratch = reverie::testing::TempDir("timeline_bench");
  const std::string html = keep.empty() ? scratch + "/bench.html" : keep;
  const std::string page = reverie::report::RenderHtmlReport(d);
  std::ofstream(html) << page;

  absl::StatusOr<std::unique_ptr<reverie::testing::DevTools>> dt =
      reverie::testing::DevTools::Launch(chromium, scratch + "/browser");
  if (!dt.ok()) return Fail(std::string(dt.status().message()));
  if (absl::Status s = (*dt)->OpenPage("file://" + html, 1280, 900); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  simdjson::dom::parser parser;
  absl::StatusOr<std::string> state = (*dt)->Evaluate("reverieTimeline.state()");
  if (!state.ok()) return Fail(std::string(state.status().message()));
  const double load_ms = parser.parse(*state).value()["loadMs"].get_double().value();

  std::printf("step: %zu tasks per run (%zu lanes), shown twice (baseline + prediction)\n",
              view.task_count(), view.lanes.size());
  std::printf(
      "JSON: %.1f ms to build, page %.2f MiB, timeline ready %.0f ms after navigation (HTML and "
      "JSON parsed, laid out)\n",
      json_s * 1e3, page.size() / 1048576.0, load_ms);
  // Per zoom and overlay: decimated, then every task its own rectangle and
  // every path task and arrow its own shape (the baseline).
  struct Overlay {
    const char* name;
    bool path, arrows;
  };
  constexpr Overlay kOverlays[] = {
      {"tasks", false, false}, {"+ critical path", true, false}, {"+ launch arrows", true, true}};
  std::printf(
      "\nms per frame, decimated / every task (ratio); rectangles drawn, decimated / every "
      "task; boxes visited when decimated\n\n| zoom |");
  for (const Overlay& o : kOverlays) std::printf(" %s |", o.name);
  std::printf(" rectangles | boxes |\n|---|---|---|---|---|---|\n");
  for (int zoom : {1, 10, 100, 1000}) {
    std::printf("| %dx |", zoom);
    int64_t rects[2] = {0, 0}, boxes = 0;
    for (const Overlay& o : kOverlays) {
      double ms[2] = {1e300, 1e300};
      for (int rep = 0; rep < reps; ++rep)
        for (int dec = 1; dec >= 0; --dec) {
          absl::StatusOr<std::string> r =
              (*dt)->Evaluate(absl::StrCat("reverieTimeline.bench({frames:", frames, ",zoom:", zoom,
                                           ",decimate:", dec ? "true" : "false",
                                           ",path:", o.path ? "true" : "false",
                                           ",arrows:", o.arrows ? "true" : "false", "})"),
                              /*timeout_ms=*/600'000);
          if (!r.ok()) return Fail(std::string(r.status().message()));
          simdjson::dom::element e = parser.parse(*r).value();
          ms[dec] = std::min(ms[dec], e["msPerFrame"].get_double().value());
          rects[dec] = e["rects"].get_int64().value();
          if (dec) boxes = e["boxes"].get_int64().value();
        }
      std::printf(" %.2f / %.2f (%.1fx) |", ms[1], ms[0], ms[0] / ms[1]);
    }
    std::printf(" %lld / %lld | %lld |\n", static_cast<long long>(rects[1]),
                static_cast<long long>(rects[0]), static_cast<long long>(boxes));
  }
  if (!png.empty()) {
    (void)(*dt)->Evaluate(
        "(() => { const c = document.querySelector('#tl canvas');"
        " c.scrollIntoView(); reverieTimeline.draw(); })()");
    if (absl::Status s = (*dt)->Screenshot(png); !s.ok()) return Fail(std::string(s.message()));
  }
  dt->reset();
  if (keep.empty()) std::filesystem::remove_all(scratch);
  return 0;
}
