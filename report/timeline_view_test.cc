#include "report/timeline_view.h"

#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "depgraph/simulator.h"
#include "gtest/gtest.h"
#include "report/html.h"
#include "simdjson.h"
#include "report/testing/synthetic_step.h"

namespace reverie::report {
namespace {

using depgraph::Graph;
using depgraph::SimResult;
using depgraph::TaskId;

SimResult Sim(const Graph& g) {
  absl::StatusOr<SimResult> s = depgraph::Simulate(g);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : SimResult{};
}

int64_t Sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

TEST(TimelineViewTest, DecimationKeepsBusyTimeAndCountAndBoundsBoxes) {
  // 100k tasks of 1-9 ns, 10 ns apart, with a wide task every 10k.
  TimelineLane lane;
  int64_t t = 0;
  for (int i = 0; i < 100'000; ++i) {
    lane.start_ns.push_back(t);
    lane.duration_ns.push_back(i % 10'000 == 0 ? 50'000 : 1 + i % 9);
    t += lane.duration_ns.back() + 10;
  }
  TimelineLevel level;
  level.start_ns = lane.start_ns;
  for (size_t i = 0; i < lane.start_ns.size(); ++i) {
    level.end_ns.push_back(lane.start_ns[i] + lane.duration_ns[i]);
    level.count.push_back(1);
    level.longest.push_back(static_cast<int32_t>(i));
  }
  level.busy_ns = lane.duration_ns;
  const int64_t busy = Sum(lane.duration_ns);
  for (int64_t resolution : {int64_t{50}, t / 2048, t / 512}) {
    level = Decimate(level, lane.duration_ns, resolution);
    EXPECT_EQ(Sum(level.busy_ns), busy) << "resolution " << resolution;
    EXPECT_EQ(std::accumulate(level.count.begin(), level.count.end(), 0), 100'000);
    for (size_t i = 1; i < level.size(); ++i) ASSERT_GE(level.start_ns[i], level.end_ns[i - 1]);
    for (size_t i = 0; i < level.size(); ++i) {
      ASSERT_GE(level.end_ns[i] - level.start_ns[i], level.busy_ns[i]);
      // The longest member of a box of the wide task is the wide task.
      if (level.busy_ns[i] >= 50'000) {
        EXPECT_EQ(lane.duration_ns[level.longest[i]], 50'000);
      }
    }
  }
  // Each box but the last spans at least a resolution or holds a wide task,
  // so the coarsest level has at most one box per resolution of the lane.
  EXPECT_LE(level.size(), static_cast<size_t>(t / (t / 512)) + 1);
  EXPECT_GT(level.size(), 100u);
}

TEST(TimelineViewTest, StepViewHoldsTheStepsTasksPerLane) {
  const Graph g = testing::SyntheticStepGraph(3, 400);
  const SimResult sim = Sim(g);
  const TimelineIndex index(g, sim);
  ASSERT_EQ(index.step_count(), 3u);
  EXPECT_EQ(DefaultTimelineStep(sim), 0);
  const StepView v = index.View(1);
  EXPECT_EQ(v.window_start_ns, sim.steps[1].start_ns);
  EXPECT_EQ(v.window_ns, sim.steps[1].duration_ns());
  ASSERT_EQ(v.lanes.size(), 3u);
  EXPECT_EQ(v.lanes[0].kind, depgraph::ResourceKind::kCpuThread);
  EXPECT_EQ(v.lanes[1].name, "stream 7 (gpu 0)");
  absl::flat_hash_set<uint32_t> in_view;
  for (const TimelineLane& lane : v.lanes) {
    ASSERT_EQ(lane.tasks.size(), lane.start_ns.size());
    for (size_t i = 0; i < lane.tasks.size(); ++i) {
      const TaskId id = lane.tasks[i];
      EXPECT_FALSE(g.is_step_mark(id));
      EXPECT_EQ(g.resource_of(id), lane.resource);
      EXPECT_EQ(lane.start_ns[i], sim.start_ns[id.value()] - v.window_start_ns);
      EXPECT_EQ(lane.duration_ns[i], sim.end_ns[id.value()] - sim.start_ns[id.value()]);
      if (i > 0) {
        EXPECT_GE(lane.start_ns[i], lane.start_ns[i - 1]);
      }
      in_view.insert(id.value());
    }
    for (const TimelineLevel& lv : lane.levels) {
      EXPECT_EQ(Sum(lv.busy_ns), Sum(lane.duration_ns)) << lane.name << " @" << lv.resolution_ns;
    }
  }
  // Exactly the tasks of the step's window: every task of step 1 (the
  // window spans its CPU markers and its GPU work), none of steps 0 and 2.
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.is_step_mark(t)) continue;
    EXPECT_EQ(in_view.contains(i), g.step_of(t) == 1) << g.name(t) << " #" << i;
  }
}

TEST(TimelineViewTest, CriticalPathAndLaunchesPointAtTheRightTasks) {
  const Graph g = testing::SyntheticStepGraph(2, 300);
  const SimResult sim = Sim(g);
  const std::vector<depgraph::CriticalPath> paths = depgraph::CriticalPaths(g, sim);
  const StepView v = TimelineIndex(g, sim).View(1);
  std::vector<TaskId> expected;
  for (TaskId t : paths[1].tasks) {
    if (!g.is_step_mark(t)) expected.push_back(t);
  }
  ASSERT_GT(expected.size(), 100u);  // the GPU-bound step: its kernels
  std::vector<TaskId> got;
  for (const LaneTask& lt : v.critical_path) got.push_back(v.lanes[lt.lane].tasks[lt.index]);
  EXPECT_EQ(got, expected);

  int launches = 0;
  for (uint32_t e = 0; e < g.edge_count(); ++e) {
    const depgraph::Edge& edge = g.edge(depgraph::EdgeId(e));
    if (edge.kind == depgraph::EdgeKind::kLaunch && g.step_of(edge.src) == 1) ++launches;
  }
  ASSERT_EQ(v.launches.size(), static_cast<size_t>(launches));
  for (const TimelineLaunch& a : v.launches) {
    const TaskId call = v.lanes[a.call.lane].tasks[a.call.index];
    const TaskId task = v.lanes[a.task.lane].tasks[a.task.index];
    EXPECT_EQ(g.kind(call), depgraph::TaskKind::kCpuApi);
    EXPECT_TRUE(depgraph::IsGpuKind(g.kind(task)));
    bool edge_found = false;
    for (const depgraph::Edge& e : g.edges()) {
      edge_found |=
          !e.removed && e.kind == depgraph::EdgeKind::kLaunch && e.src == call && e.dst == task;
    }
    EXPECT_TRUE(edge_found) << g.name(call) << " -> " << g.name(task);
  }
}

// Parses the document with simdjson and checks it against the views it was
// made from.
TEST(TimelineViewTest, JsonParsesAndMatchesTheViews) {
  Graph g = testing::SyntheticStepGraph(3, 200);
  g.set_name(TaskId(5), "kernel</script><b>");  // must not end the page's script
  const SimResult sim = Sim(g);
  Graph fast = g;
  for (uint32_t i = 0; i < fast.task_count(); ++i) {
    if (fast.kind(TaskId(i)) == depgraph::TaskKind::kKernel) {
      fast.set_duration_ns(TaskId(i), fast.duration_ns(TaskId(i)) / 2);
    }
  }
  const SimResult fast_sim = Sim(fast);
  absl::StatusOr<std::string> doc =
      RenderTimelineViewJson({{"baseline (simulated)", &g, &sim}, {"half.lua", &fast, &fast_sim}},
                             TimelineViewOptions{.step = 2});
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->find('<'), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(*doc).get(root), simdjson::SUCCESS);
  EXPECT_EQ(root["open_step"].get_int64().value(), 2);
  simdjson::dom::array steps = root["steps"].get_array().value();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps.at(2)["label"].get_string().value(), "ProfilerStep#3");
  simdjson::dom::array names = root["names"].get_array().value();
  simdjson::dom::array layers = root["layers"].get_array().value();
  simdjson::dom::array views = root["views"].get_array().value();
  ASSERT_EQ(views.size(), 6u);  // every step fits the default budget, both runs
  size_t levels_seen = 0;
  for (int run = 0; run < 2; ++run) {
    const Graph& rg = run == 0 ? g : fast;
    const SimResult& rs = run == 0 ? sim : fast_sim;
    const StepView expected = TimelineIndex(rg, rs).View(2);
    const int64_t vi = steps.at(2)["views"].at(run).get_int64().value();
    simdjson::dom::element view = views.at(vi);
    EXPECT_EQ(view["run"].get_int64().value(), run);
    EXPECT_EQ(view["span"].get_int64().value(), expected.window_ns);
    EXPECT_EQ(root["runs"].at(run)["step_ns"].at(2).get_int64().value(),
              rs.steps[2].duration_ns());
    simdjson::dom::array lanes = view["lanes"].get_array().value();
    ASSERT_EQ(lanes.size(), expected.lanes.size());
    for (size_t l = 0; l < expected.lanes.size(); ++l) {
      const TimelineLane& el = expected.lanes[l];
      simdjson::dom::element lane = lanes.at(l);
      EXPECT_EQ(lane["name"].get_string().value(), el.name);
      int64_t start = 0, busy = 0;
      for (size_t i = 0; i < el.tasks.size(); ++i) {
        start += lane["s"].at(i).get_int64().value();
        ASSERT_EQ(start, el.start_ns[i]);
        ASSERT_EQ(lane["d"].at(i).get_int64().value(), el.duration_ns[i]);
        busy += el.duration_ns[i];
        const TaskId t = el.tasks[i];
        ASSERT_EQ(names.at(lane["n"].at(i).get_int64().value()).get_string().value(), rg.name(t));
        const int64_t layer = lane["l"].at(i).get_int64().value();
        ASSERT_EQ(layers.at(layer).get_string().value(),
                  rg.layer_of(t).valid() ? rg.layer(rg.layer_of(t)).path : "");
        ASSERT_EQ(lane["k"].at(i).get_int64().value(),
                  static_cast<int>(rg.kind(t)) * 8 + static_cast<int>(rg.phase(t)));
      }
      simdjson::dom::array levels = lane["levels"].get_array().value();
      ASSERT_EQ(levels.size(), el.levels.size());
      levels_seen += levels.size();
      for (size_t j = 0; j < el.levels.size(); ++j) {
        const TimelineLevel& want = el.levels[j];
        simdjson::dom::element lv = levels.at(j);
        EXPECT_EQ(lv["r"].get_int64().value(), want.resolution_ns);
        ASSERT_EQ(lv["b"].get_array().size(), want.size());
        int64_t level_busy = 0, box_start = 0;
        for (size_t b = 0; b < want.size(); ++b) {
          level_busy += lv["b"].at(b).get_int64().value();
          box_start += lv["s"].at(b).get_int64().value();
          ASSERT_EQ(box_start, want.start_ns[b]);
          ASSERT_EQ(lv["w"].at(b).get_int64().value(), want.end_ns[b] - want.start_ns[b]);
          // A box is drawn in the colour of its longest task.
          ASSERT_EQ(lv["k"].at(b).get_int64().value(),
                    lane["k"].at(want.longest[b]).get_int64().value());
        }
        EXPECT_EQ(level_busy, busy) << el.name;
      }
    }
    simdjson::dom::array path = view["path"].get_array().value();
    ASSERT_EQ(path.size(), 2 * expected.critical_path.size());
    for (size_t i = 0; i < expected.critical_path.size(); ++i) {
      EXPECT_EQ(path.at(2 * i).get_int64().value(), expected.critical_path[i].lane);
      EXPECT_EQ(path.at(2 * i + 1).get_int64().value(), expected.critical_path[i].index);
    }
    EXPECT_EQ(view["launch"].get_array().size(), 4 * expected.launches.size());
  }
  EXPECT_GT(levels_seen, 0u) << "no lane was decimated: the level checks ran on nothing";
  // The renamed task's name survives the escaping.
  bool found = false;
  for (simdjson::dom::element n : names) found |= n.get_string().value() == "kernel</script><b>";
  EXPECT_TRUE(found);
}

TEST(TimelineViewTest, BudgetEmbedsTheOpeningStepAndBadStepsAreErrors) {
  const Graph g = testing::SyntheticStepGraph(4, 100);
  const SimResult sim = Sim(g);
  absl::StatusOr<std::string> doc = RenderTimelineViewJson(
      {{"baseline (simulated)", &g, &sim}}, TimelineViewOptions{.step = 3, .task_budget = 10});
  ASSERT_TRUE(doc.ok()) << doc.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(*doc).get(root), simdjson::SUCCESS);
  EXPECT_EQ(root["views"].get_array().size(), 1u);
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(root["steps"].at(s)["views"].at(0).get_int64().value(), s == 3 ? 0 : -1);
  }
  absl::StatusOr<std::string> bad =
      RenderTimelineViewJson({{"baseline (simulated)", &g, &sim}}, TimelineViewOptions{.step = 4});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("4 steps (0-3)"), std::string::npos) << bad.status();
}

TEST(TimelineViewTest, ReportEmbedsTheTimelineInline) {
  const Graph g = testing::SyntheticStepGraph(1, 50);
  const SimResult sim = Sim(g);
  absl::StatusOr<std::string> doc =
      RenderTimelineViewJson({{"baseline (simulated)", &g, &sim}}, TimelineViewOptions{});
  ASSERT_TRUE(doc.ok());
  ReportData d;
  d.trace_path = "t.json";
  d.timeline_json = *doc;
  const std::string html = RenderHtmlReport(d);
  EXPECT_NE(html.find("<script type=\"application/json\" id=\"tl-data\">"), std::string::npos);
  EXPECT_NE(html.find("window.reverieTimeline"), std::string::npos);
  // Self-contained: no URL anywhere, and exactly the two script elements.
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  size_t scripts = 0;
  for (size_t at = html.find("</script"); at != std::string::npos;
       at = html.find("</script", at + 1)) {
    ++scripts;
  }
  EXPECT_EQ(scripts, 2u);
  // Without a timeline the page has no script.
  d.timeline_json.clear();
  EXPECT_EQ(RenderHtmlReport(d).find("<script"), std::string::npos);
}

}  // namespace
}  // namespace reverie::report
