// The measure never points the wrong way (docs/ACCURACY.md, "A prediction
// is read in its baseline's frame"): on every shared trace, a graph whose
// work only shrinks or goes away never reports a longer step, a later task
// or a longer run.
//
// Each trace gets random trials: random subsets of kernels, copies, CPU
// tasks and CPU gaps shrunk by random factors, and in some trials a random
// subset of GPU tasks removed (transforms/remove.h). The simulator is
// max-plus over ordered resources, so every surviving task must end no
// later than in the baseline, and the step read in the baseline's frame
// must be no longer. The trials run on the graph directly (what Predict
// does after a script) and, once per trace, through whatif::Predict with a
// Lua script, so the pipeline is held to it too.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "depgraph/builder.h"
#include "depgraph/simulator.h"
#include "depgraph/step_time.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"
#include "transforms/remove.h"
#include "transforms/selection.h"
#include "whatif/pipeline.h"

namespace reverie {
namespace {

using depgraph::Graph;
using depgraph::SimResult;
using depgraph::TaskId;
using depgraph::TaskKind;

// What a trial changed: durations and gaps only shrink, tasks only go.
struct Trial {
  double p_kernel, p_copy, p_cpu, p_gap, p_remove;
};

void Shrink(const Trial& tr, std::mt19937_64& rng, Graph* g) {
  std::uniform_real_distribution<double> coin(0, 1), factor(1, 4);
  std::vector<TaskId> gone;
  for (uint32_t i = 0; i < g->task_count(); ++i) {
    const TaskId t(i);
    if (g->removed(t) || g->is_step_mark(t)) continue;
    const TaskKind k = g->kind(t);
    const double p = k == TaskKind::kKernel ? tr.p_kernel
                     : depgraph::IsGpuKind(k) ? tr.p_copy
                                              : tr.p_cpu;
    if (coin(rng) < p) {
      g->set_duration_ns(t, static_cast<int64_t>(g->duration_ns(t) / factor(rng)));
    }
    if (depgraph::IsCpuKind(k) && coin(rng) < tr.p_gap) {
      g->set_gap_ns(t, static_cast<int64_t>(g->gap_ns(t) / factor(rng)));
    }
    if (depgraph::IsGpuKind(k) && coin(rng) < tr.p_remove) gone.push_back(t);
  }
  if (!gone.empty()) {
    ASSERT_TRUE(transforms::RemoveTasks(*g, transforms::Selection::FromSorted(gone)).ok());
  }
}

class NeverSlowerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NeverSlowerTest, LessWorkNeverReportsALongerStep) {
  if (GetParam().empty()) GTEST_SKIP() << "no shared traces under " << testing::TracesDir();
  REVERIE_REQUIRE_TRACE(path, GetParam());
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> base =
      whatif::LoadAndSimulate(path, {.host_sensitivity = true});
  if (!base.ok()) {
    // A trace without GPU work or API calls is refused in one line: nothing
    // to shrink, and the refusal must say so.
    EXPECT_EQ(base.status().code(), absl::StatusCode::kInvalidArgument) << base.status();
    EXPECT_EQ(std::string(base.status().message()).find('\n'), std::string::npos);
    return;
  }
  const SimResult& b = (*base)->baseline;
  const double base_step = b.mean_step_ns();
  const Trial trials[] = {
      {1, 1, 1, 1, 0},      {0.5, 0.5, 0, 0, 0},  {0, 0, 1, 1, 0},    {0.2, 0.2, 0.2, 0.2, 0},
      {1, 0, 0, 0, 0},      {0, 1, 0, 0, 0},      {0.1, 0.1, 0.5, 0, 0.05},
      {0.5, 0.5, 0.5, 0.5, 0.2},
  };
  std::mt19937_64 rng(std::hash<std::string>()(GetParam()));
  depgraph::SimOptions opts;
  opts.step_frame = &b.steps;
  for (size_t n = 0; n < std::size(trials); ++n) {
    Graph g = (*base)->graph;
    Shrink(trials[n], rng, &g);
    absl::StatusOr<SimResult> s = depgraph::Simulate(g, opts);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_LE(s->mean_step_ns(), base_step) << "trial " << n;
    EXPECT_LE(s->makespan_ns, b.makespan_ns) << "trial " << n;
    int later = 0;
    for (uint32_t i = 0; i < g.task_count(); ++i) {
      if (!g.removed(TaskId(i)) && s->end_ns[i] > b.end_ns[i]) ++later;
    }
    EXPECT_EQ(later, 0) << "trial " << n << ": tasks that end later with less work";
  }
  // The frame read on the baseline itself changes nothing.
  absl::StatusOr<SimResult> same = depgraph::Simulate((*base)->graph, opts);
  ASSERT_TRUE(same.ok());
  ASSERT_EQ(same->steps.size(), b.steps.size());
  for (size_t i = 0; i < b.steps.size(); ++i) {
    EXPECT_EQ(same->steps[i].start_ns, b.steps[i].start_ns) << "step " << i;
    EXPECT_EQ(same->steps[i].end_ns, b.steps[i].end_ns) << "step " << i;
  }
  // A slower host never shortens a step either (the sensitivity every
  // prediction reports), and measuring it gives the graph back as built.
  EXPECT_GE((*base)->host_sensitivity_pct, 0);
  absl::StatusOr<Graph> fresh = depgraph::BuildGraph((*base)->trace);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_EQ(fresh->task_count(), (*base)->graph.task_count());
  int changed = 0;
  for (uint32_t i = 0; i < fresh->task_count(); ++i) {
    changed += fresh->duration_ns(TaskId(i)) != (*base)->graph.duration_ns(TaskId(i)) ||
               fresh->gap_ns(TaskId(i)) != (*base)->graph.gap_ns(TaskId(i));
  }
  EXPECT_EQ(changed, 0) << "tasks whose duration or gap the sensitivity left changed";
  // Through the pipeline: a script that shrinks every kernel, copy and CPU task.
  whatif::ScriptSpec spec;
  spec.scripts = {"shrink_all"};
  spec.sources = {{"shrink_all", "graph:select{kind = 'gpu'}:shrink(1.7)\n"
                                 "graph:select{kind = 'cpu'}:shrink(1.3)\n"}};
  absl::StatusOr<whatif::Prediction> p = whatif::Predict(**base, spec);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_LE(p->sim.mean_step_ns(), base_step);
  EXPECT_GE(p->host_sensitivity_pct, 0);
  std::printf("%s: baseline %.1f us, everything shrunk %.1f us\n", GetParam().c_str(),
              base_step / 1e3, p->sim.mean_step_ns() / 1e3);
}

INSTANTIATE_TEST_SUITE_P(Shared, NeverSlowerTest, ::testing::ValuesIn(testing::AllKinetoTraces()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::TraceTestName(info.index, info.param);
                         });

}  // namespace
}  // namespace reverie
