#include "depgraph/ranks.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kUs = 1000;

// One rank's step: the CPU launches a compute kernel and then the
// collectives; the GPU runs them in order on one stream. `collective_us`
// is the measured NCCL time, waiting included.
struct RankShape {
  int64_t compute_us = 100;
  std::vector<std::pair<std::string, int64_t>> collectives = {
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50}};
  int steps = 1;
};

TaskSpec Spec(TaskKind kind, std::string_view name, ResourceId resource, int64_t duration_ns,
              int32_t step) {
  TaskSpec s{
      .kind = kind, .name = name, .resource = resource, .duration_ns = duration_ns, .step = step,
      .measured_start_ns = 0};
  return s;
}

Graph MakeRank(const RankShape& shape) {
  Graph g;
  const ResourceId cpu = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "thread 1", true});
  const ResourceId gpu = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
  const LayerId layer = g.AddLayer("fc1", LayerId());
  for (int it = 0; it < shape.steps; ++it) {
    g.AddStep({"ProfilerStep#" + std::to_string(it), 0, 0});
    const TaskSpec launch = Spec(TaskKind::kCpuApi, "cudaLaunchKernel", cpu, 5 * kUs, it);
    TaskSpec kernel =
        Spec(TaskKind::kKernel, "volta_sgemm_128x64_nn", gpu, shape.compute_us * kUs, it);
    kernel.layer = layer;
    const TaskId l0 = g.AppendTask(launch);
    g.AddEdge(l0, g.AppendTask(kernel), EdgeKind::kLaunch);
    for (const auto& [name, us] : shape.collectives) {
      const TaskId l = g.AppendTask(launch);
      kernel.name = name;
      kernel.duration_ns = us * kUs;
      g.AddEdge(l, g.AppendTask(kernel), EdgeKind::kLaunch);
    }
  }
  return g;
}

struct Job {
  JobGraph job;
  SimResult sim;
  std::vector<RankTime> ranks;
};

Job CoupleAndRun(const std::vector<const Graph*>& graphs) {
  std::vector<RankInput> in;
  for (size_t r = 0; r < graphs.size(); ++r) in.push_back({graphs[r], "rank" + std::to_string(r)});
  absl::StatusOr<JobGraph> job = CoupleRanks(in);
  EXPECT_TRUE(job.ok()) << job.status();
  Job out{std::move(*job), {}, {}};
  absl::StatusOr<SimResult> sim = Simulate(out.job.graph);
  EXPECT_TRUE(sim.ok()) << sim.status();
  out.sim = std::move(*sim);
  out.ranks = AnalyzeJob(out.job, out.sim);
  return out;
}

int64_t AloneStepNs(const Graph& g) {
  absl::StatusOr<SimResult> sim = Simulate(g);
  EXPECT_TRUE(sim.ok());
  return sim->steps[0].duration_ns();
}

TEST(CoupleRanksTest, IdenticalRanksRunAsEachAlone) {
  const Graph a = MakeRank({}), b = MakeRank({});
  const Job j = CoupleAndRun({&a, &b});
  ASSERT_EQ(j.job.collectives.size(), 1u);
  EXPECT_EQ(j.job.stats.collectives_by_type[static_cast<int>(Collective::kAllReduce)], 1);
  for (const RankTime& r : j.ranks) {
    EXPECT_EQ(r.steps[0].duration_ns(), AloneStepNs(a));
    EXPECT_EQ(r.wait_ns, 0);
    EXPECT_EQ(r.last_arrivals, 0);  // arriving together, nobody is the straggler
  }
  EXPECT_EQ(j.job.graph.layer_count(), 1u);  // one model: layers shared by path
  EXPECT_EQ(j.job.graph.resource_count(), 5u);
  EXPECT_THAT(j.job.graph.resource(ResourceId(2)).name, HasSubstr("rank 1: "));
}

// A real pair: rank 1 computes 100 us longer, so rank 0's NCCL kernel spun
// 100 us waiting for it (150 us measured against rank 1's 50 us).
TEST(CoupleRanksTest, TheFastRankWaitsForTheSlowOne) {
  const Graph fast = MakeRank({.compute_us = 100, .collectives = {{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 150}}});
  const Graph slow = MakeRank({.compute_us = 200, .collectives = {{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50}}});
  const Job j = CoupleAndRun({&fast, &slow});
  ASSERT_EQ(j.job.collectives.size(), 1u);
  EXPECT_EQ(j.job.collectives[0].duration_ns, 50 * kUs);  // the transfer: the shortest
  // The measured step of either rank is reproduced: 5 us launch + 200 + 50.
  EXPECT_EQ(AloneStepNs(fast), 255 * kUs);
  EXPECT_EQ(j.ranks[0].steps[0].duration_ns(), 255 * kUs);
  EXPECT_EQ(j.ranks[1].steps[0].duration_ns(), 255 * kUs);
  EXPECT_EQ(j.ranks[0].wait_ns, 100 * kUs);
  EXPECT_EQ(j.ranks[1].wait_ns, 0);
  EXPECT_EQ(j.ranks[0].last_arrivals, 0);
  EXPECT_EQ(j.ranks[1].last_arrivals, 1);
}

// The waiting is re-derived, not replayed: with the straggler as fast as its
// peer (what a script would do to it), rank 0 no longer waits, although its
// own trace recorded 150 us of NCCL.
TEST(CoupleRanksTest, SpeedingTheStragglerUpShortensEveryRank) {
  const Graph fast = MakeRank({.compute_us = 100, .collectives = {{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 150}}});
  Graph slow = MakeRank({.compute_us = 200, .collectives = {{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50}}});
  slow.set_duration_ns(TaskId(1), 100 * kUs);  // its compute kernel
  const Job j = CoupleAndRun({&fast, &slow});
  EXPECT_EQ(j.ranks[0].steps[0].duration_ns(), 155 * kUs);
  EXPECT_EQ(j.ranks[1].steps[0].duration_ns(), 155 * kUs);
  EXPECT_EQ(j.ranks[0].wait_ns, 0);
  EXPECT_EQ(AloneStepNs(fast), 255 * kUs);  // alone, rank 0 keeps its recorded wait
}

TEST(CoupleRanksTest, CollectivesMatchPerTypeInOrder) {
  const RankShape shape{.collectives = {{"ncclDevKernel_AllGather_RING_LL", 10},
                                        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20},
                                        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 30}}};
  const Graph a = MakeRank(shape), b = MakeRank(shape), c = MakeRank(shape);
  const Job j = CoupleAndRun({&a, &b, &c});
  ASSERT_EQ(j.job.collectives.size(), 3u);
  EXPECT_EQ(j.job.stats.collectives_by_type[static_cast<int>(Collective::kAllReduce)], 2);
  EXPECT_EQ(j.job.stats.collectives_by_type[static_cast<int>(Collective::kAllGather)], 1);
  for (const CollectiveGroup& group : j.job.collectives) {
    ASSERT_EQ(group.tasks.size(), 3u);
    for (TaskId t : group.tasks) {
      EXPECT_EQ(CollectiveOfName(j.job.graph.name(t)), group.type);
      EXPECT_EQ(j.job.graph.duration_ns(t), group.duration_ns);
    }
  }
  // The i-th all-reduce of every rank is one collective: 20 us, then 30 us.
  EXPECT_EQ(j.job.collectives[0].duration_ns, 20 * kUs);
  EXPECT_EQ(j.job.collectives[1].duration_ns, 30 * kUs);
  EXPECT_EQ(j.ranks[2].steps[0].duration_ns(), AloneStepNs(a));
}

TEST(CoupleRanksTest, CountsThatDifferNameBothTraces) {
  const Graph a = MakeRank({});
  const Graph b = MakeRank({.collectives = {{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50},
                                            {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50}}});
  const std::vector<RankInput> in = {{&a, "a.json"}, {&b, "b.json"}};
  const absl::StatusOr<JobGraph> job = CoupleRanks(in);
  ASSERT_EQ(job.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(job.status().message()),
              HasSubstr("b.json has 2 AllReduce collectives on its 1st communication stream, a.json has 1"));
}

TEST(CoupleRanksTest, OrdersThatCannotAllHoldAreACycle) {
  const Graph a = MakeRank({.collectives = {{"ncclDevKernel_AllGather_RING_LL", 10},
                                            {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10}}});
  const Graph b = MakeRank({.collectives = {{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10},
                                            {"ncclDevKernel_AllGather_RING_LL", 10}}});
  const std::vector<RankInput> in = {{&a, "a"}, {&b, "b"}};
  const absl::StatusOr<JobGraph> job = CoupleRanks(in);
  ASSERT_EQ(job.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(job.status().message()), HasSubstr("cannot all hold"));
}

TEST(CoupleRanksTest, RefusesOneRankAndRanksWithoutCollectives) {
  const Graph a = MakeRank({});
  const std::vector<RankInput> one = {{&a, "a"}};
  EXPECT_EQ(CoupleRanks(one).status().code(), absl::StatusCode::kInvalidArgument);
  const Graph quiet = MakeRank({.collectives = {}});
  const std::vector<RankInput> two = {{&quiet, "a"}, {&quiet, "b"}};
  const absl::StatusOr<JobGraph> job = CoupleRanks(two);
  ASSERT_EQ(job.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(job.status().message()), HasSubstr("nothing couples the ranks"));
}

TEST(CoupleRanksTest, StepsBeyondTheCommonCountAreUntaggedAndCounted) {
  const Graph two = MakeRank({.steps = 2});
  const Graph more = MakeRank({.steps = 2});
  Graph three = MakeRank({.steps = 3});
  // Three steps against two: the collectives differ too, so drop the third
  // step's all-reduce as a profiler window cut short would.
  three.RemoveTask(TaskId(three.task_count() - 1));
  const Job j = CoupleAndRun({&two, &more, &three});
  EXPECT_EQ(j.job.stats.steps, 2);
  EXPECT_EQ(j.job.graph.step_count(), 2u);
  EXPECT_EQ(j.job.stats.untagged_tasks, 3);  // two launches and the compute kernel
  for (const RankTime& r : j.ranks) EXPECT_EQ(r.steps.size(), 2u);
}

TEST(CoupleRanksTest, ScriptCommTasksOnChannelsCoupleToo) {
  Graph a = MakeRank({.collectives = {}});
  const ResourceId channel = a.AddResource({ResourceKind::kCommChannel, 1, 0, -1, "ring", false});
  const TaskId ar =
      a.AppendTask(Spec(TaskKind::kComm, "all-reduce bucket 0", channel, 40 * kUs, 0));
  a.AddEdge(TaskId(1), ar, EdgeKind::kComm);
  Graph b = a;
  b.set_duration_ns(TaskId(1), 300 * kUs);  // rank 1's gradient is ready 200 us later
  // A parameter server's push is the rank's own, not a collective: only one
  // rank having it is no mismatch.
  a.AppendTask(Spec(TaskKind::kComm, "push slice", channel, 10 * kUs, 0));
  const Job j = CoupleAndRun({&a, &b});
  ASSERT_EQ(j.job.collectives.size(), 1u);
  EXPECT_EQ(j.job.collectives[0].type, Collective::kAllReduce);
  EXPECT_EQ(j.ranks[0].wait_ns, 200 * kUs);
  EXPECT_EQ(j.ranks[0].steps[0].duration_ns(), j.ranks[1].steps[0].duration_ns());
}

// The traces' clocks check the matching (never the simulation): rank 1's
// trace lost its first all-reduce and has one more at the end, so the i-th
// kernels are different collectives and do not end together.
TEST(CoupleRanksTest, MeasuredEndsFlagAMatchingOffByOne) {
  const RankShape shape{.collectives = {{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50},
                                        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50},
                                        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50},
                                        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50}}};
  auto with_ends = [&](std::vector<int64_t> ends_us, int64_t clock_offset_us) {
    Graph g = MakeRank(shape);
    for (int k = 0; k < 4; ++k) {  // the all-reduces are tasks 3, 5, 7, 9
      g.set_measured_start_ns(TaskId(3 + 2 * k), (ends_us[k] + clock_offset_us - 50) * kUs);
    }
    return g;
  };
  const Graph a = with_ends({1000, 1500, 4000, 4200}, 0);
  const Graph same = with_ends({1000, 1500, 4000, 4200}, 777);  // another clock
  const Graph shifted = with_ends({1500, 4000, 4200, 9000}, 0);
  const Job ok = CoupleAndRun({&a, &same});
  EXPECT_EQ(ok.job.stats.measured_checked, 4);
  EXPECT_EQ(ok.job.stats.measured_misaligned, 0);
  const Job off = CoupleAndRun({&a, &shifted});
  EXPECT_EQ(off.job.stats.measured_checked, 4);
  EXPECT_EQ(off.job.stats.measured_misaligned, 3);
}

}  // namespace
}  // namespace reverie::depgraph
