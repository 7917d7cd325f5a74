// The one step-time definition (step_time.h) on synthetic traces built by
// the builder: the profiler overview's rule, measured and simulated alike.
#include "depgraph/step_time.h"

#include <vector>

#include "depgraph/simulator.h"
#include "depgraph/test_trace.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

using test_trace::T;

constexpr int64_t kUs = 1000;

// Three steps whose CPU part (100 us, two launches) runs far ahead of their
// GPU work (two 1000 us kernels), with no sync: the CPU span is no step time.
T AsyncSteps() {
  T t;
  uint64_t corr = 1;
  for (int s = 0; s < 3; ++s) {
    const int64_t a = s * 100 * kUs;
    t.Step(s + 1, 1, a, a + 100 * kUs);
    for (int k = 0; k < 2; ++k) {
      const int64_t call = a + (10 + 10 * k) * kUs;
      t.Api("cudaLaunchKernel", 1, call, call + 5 * kUs, corr);
      const int64_t begin = (20 + (2 * s + k) * 1000) * kUs;
      t.Gpu("gemm", 7, begin, begin + 1000 * kUs, corr);
      ++corr;
    }
  }
  return t;
}

TEST(StepTimeTest, AnAsyncStepIsItsGpuPeriodNotItsCpuSpan) {
  T t = AsyncSteps();
  const Graph g = t.Build();
  const std::vector<StepTime> m = MeasuredSteps(g);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].duration_ns(), 2020 * kUs);  // from a_1 to its last kernel's end
  EXPECT_EQ(m[1].duration_ns(), 2000 * kUs);  // from step 1's end to its own
  EXPECT_EQ(m[2].duration_ns(), 2000 * kUs);
  const StepStats st = SummarizeSteps(m);
  EXPECT_EQ(st.counted, 3);
  EXPECT_NEAR(st.mean_ns, 6020.0 * kUs / 3, 1);
  EXPECT_EQ(st.min_ns, 2000 * kUs);
  EXPECT_EQ(st.max_ns, 2020 * kUs);
  absl::StatusOr<SimResult> sim = Simulate(g);
  ASSERT_TRUE(sim.ok());
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(sim->steps[i].duration_ns(), m[i].duration_ns());
}

TEST(StepTimeTest, AFasterGpuShortensAnAsyncStepInSimulation) {
  T t = AsyncSteps();
  Graph g = t.Build();
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    if (g.kind(TaskId(i)) == TaskKind::kKernel) g.set_duration_ns(TaskId(i), 500 * kUs);
  }
  absl::StatusOr<SimResult> sim = Simulate(g);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(sim->steps[1].duration_ns(), 1000 * kUs);
  EXPECT_EQ(sim->steps[2].duration_ns(), 1000 * kUs);
}

TEST(StepTimeTest, AStepThatSyncsIsItsCpuSpan) {
  T t;
  t.Step(1, 1, 0, 500 * kUs);
  t.Api("cudaLaunchKernel", 1, 10 * kUs, 15 * kUs, 1);
  t.Gpu("k", 7, 20 * kUs, 220 * kUs, 1);
  t.Api("cudaStreamSynchronize", 1, 30 * kUs, 221 * kUs, 2);
  t.Step(2, 1, 500 * kUs, 900 * kUs);
  t.Api("cudaLaunchKernel", 1, 510 * kUs, 515 * kUs, 3);
  t.Gpu("k", 7, 520 * kUs, 720 * kUs, 3);
  t.Api("cudaStreamSynchronize", 1, 530 * kUs, 721 * kUs, 4);
  const Graph g = t.Build();
  const std::vector<StepTime> m = MeasuredSteps(g);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].duration_ns(), 500 * kUs);
  EXPECT_EQ(m[1].duration_ns(), 400 * kUs);
  absl::StatusOr<SimResult> sim = Simulate(g);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(sim->steps[0].duration_ns(), 500 * kUs);
  EXPECT_EQ(sim->steps[1].duration_ns(), 400 * kUs);
}

TEST(StepTimeTest, TrailingStepsWithoutAllTheirGpuWorkAreNotCounted) {
  T t = AsyncSteps();
  // A fourth step that launched one kernel (< 0.8x the two before), a fifth none.
  t.Step(4, 1, 300 * kUs, 400 * kUs);
  t.Api("cudaLaunchKernel", 1, 310 * kUs, 315 * kUs, 99);
  t.Gpu("gemm", 7, 6020 * kUs, 6100 * kUs, 99);
  t.Step(5, 1, 400 * kUs, 500 * kUs);
  t.Api("cudaMalloc", 1, 410 * kUs, 415 * kUs);
  BuildStats stats;
  const Graph g = t.Build(&stats);
  const std::vector<StepTime> m = MeasuredSteps(g);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_TRUE(m[2].counted);
  EXPECT_FALSE(m[3].counted);
  EXPECT_FALSE(m[4].counted);
  EXPECT_EQ(stats.Get(BuildCounter::steps_not_counted), 2);
  EXPECT_EQ(SummarizeSteps(m).counted, 3);
}

// A kernel launched before the first step runs past the step's start.
T WarmupBeforeAStep() {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 5 * kUs, 1);  // before any step
  t.Gpu("warmup", 7, 10 * kUs, 300 * kUs, 1);
  t.Step(1, 1, 100 * kUs, 200 * kUs);
  t.Api("cudaLaunchKernel", 1, 110 * kUs, 115 * kUs, 2);
  t.Gpu("k", 8, 400 * kUs, 500 * kUs, 2);
  return t;
}

TEST(StepTimeTest, GpuWorkOfNoStepBeforeTheFirstStepDelaysItsStart) {
  const Graph g = WarmupBeforeAStep().Build();
  const std::vector<StepTime> m = MeasuredSteps(g);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].start_ns, 300 * kUs);  // raised to the warm-up kernel's end
  EXPECT_EQ(m[0].end_ns, 500 * kUs);
}

// A prediction read in its baseline's frame (step_time.h). `prelude` us of
// CPU call before three steps whose GPU work runs behind their CPU part.
T StepsAfterAPrelude(int64_t prelude) {
  T t;
  t.Api("cudaMalloc", 1, 0, prelude * kUs);
  const int64_t at = prelude + 10;
  uint64_t corr = 1;
  for (int s = 0; s < 3; ++s) {
    const int64_t a = (at + s * 100) * kUs;
    t.Step(s + 1, 1, a, a + 100 * kUs);
    const int64_t call = a + 10 * kUs;
    t.Api("cudaLaunchKernel", 1, call, call + 5 * kUs, corr);
    const int64_t begin = (at + 20 + s * 1000) * kUs;
    t.Gpu("gemm", 7, begin, begin + 1000 * kUs, corr++);
  }
  return t;
}

TaskId Named(const Graph& g, std::string_view name) {
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    if (g.name(TaskId(i)) == name) return TaskId(i);
  }
  return TaskId(0);
}

// A run that only moved earlier (the call before the first step got
// shorter) keeps its steps: the frame once pinned the first step's start to
// the baseline's, after its work had run, and read it as 0 us.
TEST(StepTimeTest, ARunThatOnlyMovedEarlierKeepsItsStepsInTheFrame) {
  Graph g = StepsAfterAPrelude(50'000).Build();
  absl::StatusOr<SimResult> base = Simulate(g);
  ASSERT_TRUE(base.ok());
  ASSERT_EQ(base->steps.size(), 3u);
  const TaskId prelude = Named(g, "cudaMalloc");
  ASSERT_EQ(g.duration_ns(prelude), 50'000 * kUs);
  g.set_duration_ns(prelude, kUs);
  SimOptions in_frame;
  in_frame.step_frame = &base->steps;
  absl::StatusOr<SimResult> moved = Simulate(g, in_frame);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->makespan_ns, base->makespan_ns - 49'999 * kUs);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(moved->steps[i].duration_ns(), base->steps[i].duration_ns()) << "step " << i;
    EXPECT_EQ(moved->steps[i].start_ns, base->steps[i].start_ns - 49'999 * kUs) << "step " << i;
  }
}

// The frame's reason (issue 26): shorter GPU work before the first step,
// whose end started that step, must not lengthen the step while the run
// ends no earlier; and a step that ends earlier by less than the run moved
// keeps the baseline's start less the least any step's end moved.
TEST(StepTimeTest, ShorterWorkBeforeTheFirstStepNeverLengthensItInTheFrame) {
  Graph g = WarmupBeforeAStep().Build();
  absl::StatusOr<SimResult> base = Simulate(g);
  ASSERT_TRUE(base.ok());
  ASSERT_EQ(base->steps.size(), 1u);
  EXPECT_EQ(base->steps[0].duration_ns(), 200 * kUs);  // 300..500
  g.set_duration_ns(Named(g, "warmup"), 10 * kUs);
  absl::StatusOr<SimResult> unframed = Simulate(g);  // no frame: the step grows
  ASSERT_TRUE(unframed.ok());
  EXPECT_GT(unframed->steps[0].duration_ns(), base->steps[0].duration_ns());
  SimOptions in_frame;
  in_frame.step_frame = &base->steps;
  absl::StatusOr<SimResult> framed = Simulate(g, in_frame);
  ASSERT_TRUE(framed.ok());
  EXPECT_EQ(framed->steps[0].start_ns, base->steps[0].start_ns);  // k ends no earlier
  EXPECT_EQ(framed->steps[0].duration_ns(), base->steps[0].duration_ns());
  // k 40 us shorter: the step ends 40 us earlier, so it may start up to
  // 40 us earlier, and is no longer than the baseline's.
  g.set_duration_ns(Named(g, "k"), 60 * kUs);
  absl::StatusOr<SimResult> both = Simulate(g, in_frame);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->steps[0].start_ns, base->steps[0].start_ns - 40 * kUs);
  EXPECT_EQ(both->steps[0].duration_ns(), base->steps[0].duration_ns());
}

TEST(StepTimeTest, ATraceWithoutMarkersIsOneStepOverAllItsTasks) {
  T t;
  t.Api("cudaLaunchKernel", 1, 50 * kUs, 55 * kUs, 1);
  t.Gpu("k", 7, 60 * kUs, 260 * kUs, 1);
  const Graph g = t.Build();
  const std::vector<StepTime> m = MeasuredSteps(g);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].start_ns, 50 * kUs);
  EXPECT_EQ(m[0].end_ns, 260 * kUs);
  absl::StatusOr<SimResult> sim = Simulate(g);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(sim->steps[0].duration_ns(), 210 * kUs);
}

TEST(StepTimeTest, WithoutGpuWorkTheStepsAreTheirCpuSpans) {
  T t;
  t.Step(1, 1, 0, 100 * kUs);
  t.Api("cudaMalloc", 1, 10 * kUs, 20 * kUs);
  t.Step(2, 1, 100 * kUs, 150 * kUs);
  t.Api("cudaMalloc", 1, 110 * kUs, 120 * kUs);
  const Graph g = t.Build();
  const std::vector<StepTime> m = MeasuredSteps(g);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].duration_ns(), 100 * kUs);
  EXPECT_EQ(m[1].duration_ns(), 50 * kUs);
  EXPECT_TRUE(m[1].counted);  // no GPU work anywhere: every CPU span counts
}

TEST(StepTimeTest, SummaryIsTheMeanAndBandOfCountedSteps) {
  std::vector<StepTime> v = {{0, 0, 10, true}, {1, 10, 40, true}, {2, 40, 41, false}};
  const StepStats s = SummarizeSteps(v);
  EXPECT_EQ(s.counted, 2);
  EXPECT_DOUBLE_EQ(s.mean_ns, 20);
  EXPECT_DOUBLE_EQ(s.min_ns, 10);
  EXPECT_DOUBLE_EQ(s.max_ns, 30);
  EXPECT_DOUBLE_EQ(s.stddev_ns, 10);
  EXPECT_EQ(SummarizeSteps({}).counted, 0);
}

// FirstStepShare: how much of a predicted change the first counted step
// holds. A hunt found a change that sat wholly in the first step
// (blueconnect.lua on a loader-bound trace: +34.8 ms there, the five later
// steps unchanged) read as a 3.3% slower step; predict and advise now say so.
std::vector<StepTime> Spans(const std::vector<int64_t>& durations, int counted) {
  std::vector<StepTime> r;
  int64_t t = 0;
  for (size_t i = 0; i < durations.size(); ++i) {
    r.push_back({.step = static_cast<int32_t>(i),
                 .start_ns = t,
                 .end_ns = t + durations[i],
                 .counted = static_cast<int>(i) < counted});
    t += durations[i];
  }
  return r;
}

TEST(FirstStepShareTest, AChangeInTheFirstStepOnlyIsAllOfIt) {
  const std::vector<StepTime> base = Spans({100, 100, 100, 100}, 4);
  EXPECT_DOUBLE_EQ(*FirstStepShare(base, Spans({140, 100, 100, 100}, 4)), 1.0);
  EXPECT_DOUBLE_EQ(*FirstStepShare(base, Spans({60, 100, 100, 100}, 4)), 1.0);
  EXPECT_DOUBLE_EQ(*FirstStepShare(base, Spans({140, 102, 100, 98}, 4)), 40.0 / 44);
  // Uncounted steps are left out.
  EXPECT_DOUBLE_EQ(
      *FirstStepShare(Spans({100, 100, 100, 100}, 3), Spans({140, 100, 100, 500}, 3)), 1.0);
  // The same change in every step: a quarter. Changes that cancel (-50%,
  // -50%, +50%: their sum is the first step's) are a third, not all of it.
  EXPECT_DOUBLE_EQ(*FirstStepShare(base, Spans({110, 110, 110, 110}, 4)), 0.25);
  EXPECT_DOUBLE_EQ(*FirstStepShare(Spans({100, 100, 100}, 3), Spans({50, 50, 150}, 3)), 1.0 / 3);
}

TEST(FirstStepShareTest, UndefinedWithoutThreeStepsOrAChange) {
  EXPECT_FALSE(FirstStepShare(Spans({100, 100}, 2), Spans({150, 100}, 2)).has_value());
  const std::vector<StepTime> base = Spans({100000, 100000, 100000}, 3);
  EXPECT_FALSE(FirstStepShare(base, base).has_value());
  const std::vector<StepTime> empty = Spans({0, 0, 0}, 3);
  EXPECT_FALSE(FirstStepShare(empty, empty).has_value());  // not 0 / 0
  // Under 0.1% of the steps: noise, no share.
  EXPECT_FALSE(FirstStepShare(base, Spans({100100, 100000, 100000}, 3)).has_value());
  EXPECT_TRUE(FirstStepShare(base, Spans({100400, 100000, 100000}, 3)).has_value());
}

}  // namespace
}  // namespace reverie::depgraph
