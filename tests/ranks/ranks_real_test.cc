// Multi-rank coupling (depgraph/ranks.h) on real DDP traces. No shared trace
// holds two ranks of one job, so the properties are checked that any pair
// must show: two copies of one rank (HTA's nccl_data, A100, all-reduce and
// broadcast kernels) run exactly as each alone; slowing one copy's compute
// (TraceLens' GPU-bound MI300X ResNet, RCCL generic kernels) makes it the
// straggler and holds the other back, and the job is no faster than the slow
// rank alone; and ranks of different jobs are refused by name.
// Label real_traces: skips when ../shared/traces is absent.
#include <algorithm>
#include <string>
#include <vector>

#include "depgraph/builder.h"
#include "depgraph/kernel_class.h"
#include "depgraph/ranks.h"
#include "depgraph/simulator.h"
#include "frameworks/trace_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"

namespace reverie::testing {
namespace {

using depgraph::Graph;
using depgraph::TaskId;

Graph Build(const std::string& path) {
  absl::StatusOr<Trace> trace = LoadTraceFile(path);
  EXPECT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<Graph> g = depgraph::BuildGraph(*trace);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : Graph();
}

double AloneMeanNs(const Graph& g) {
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim->mean_step_ns();
}

struct JobRun {
  depgraph::JobGraph job;
  depgraph::SimResult sim;
  std::vector<depgraph::RankTime> ranks;
};

JobRun Couple(const Graph& a, const Graph& b) {
  const std::vector<depgraph::RankInput> in = {{&a, "rank0"}, {&b, "rank1"}};
  absl::StatusOr<depgraph::JobGraph> job = depgraph::CoupleRanks(in);
  EXPECT_TRUE(job.ok()) << job.status();
  JobRun run{std::move(*job), {}, {}};
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(run.job.graph);
  EXPECT_TRUE(sim.ok()) << sim.status();
  run.sim = std::move(*sim);
  run.ranks = depgraph::AnalyzeJob(run.job, run.sim);
  return run;
}

TEST(RanksRealTest, TwoCopiesOfOneRankRunAsItDoesAlone) {
  REVERIE_REQUIRE_TRACE(path, testing::kNcclTrace);
  const Graph g = Build(path);
  const JobRun run = Couple(g, g);
  using depgraph::Collective;
  EXPECT_EQ(run.job.stats.collectives_by_type[static_cast<int>(Collective::kAllReduce)], 15);
  EXPECT_EQ(run.job.stats.collectives_by_type[static_cast<int>(Collective::kBroadcast)], 6);
  EXPECT_EQ(run.job.stats.steps, static_cast<int32_t>(g.step_count()));
  EXPECT_EQ(run.job.stats.measured_misaligned, 0);
  EXPECT_EQ(run.job.stats.measured_checked, run.job.stats.collectives);
  absl::StatusOr<depgraph::SimResult> alone = depgraph::Simulate(g);
  ASSERT_TRUE(alone.ok());
  for (const depgraph::RankTime& r : run.ranks) {
    ASSERT_EQ(r.steps.size(), alone->steps.size());
    for (size_t i = 0; i < r.steps.size(); ++i) {
      EXPECT_EQ(r.steps[i].duration_ns(), alone->steps[i].duration_ns()) << i;
    }
    EXPECT_EQ(r.wait_ns, 0);
    EXPECT_EQ(r.last_arrivals, 0);
  }
}

TEST(RanksRealTest, ASlowerRankIsTheStragglerAndTheOtherWaits) {
  REVERIE_REQUIRE_TRACE(path, testing::kMi300DdpTrace);
  const Graph fast = Build(path);
  Graph slow = fast;
  for (uint32_t v = 0; v < slow.task_count(); ++v) {
    const TaskId t(v);
    if (slow.removed(t) || slow.kind(t) != depgraph::TaskKind::kKernel ||
        depgraph::IsCommunicationTask(slow, t)) {
      continue;
    }
    slow.set_duration_ns(t, slow.duration_ns(t) * 13 / 10);  // a 30% slower GPU
  }
  const JobRun run = Couple(fast, slow);
  const double fast_alone = AloneMeanNs(fast), slow_alone = AloneMeanNs(slow);
  ASSERT_GT(slow_alone, fast_alone);
  EXPECT_GT(run.ranks[0].wait_ns, 0);
  EXPECT_GT(run.ranks[1].last_arrivals, run.ranks[0].last_arrivals);
  // The fast rank is held back; no rank of the job beats the slow rank alone
  // by more than the rounding of the shorter collectives (both copies keep
  // their recorded durations, so the shortest is each one's own).
  EXPECT_GT(run.ranks[0].mean_step_ns, fast_alone);
  EXPECT_GE(run.sim.mean_step_ns(), slow_alone * 0.999);
  EXPECT_LE(run.ranks[0].mean_step_ns, run.sim.mean_step_ns());
}

TEST(RanksRealTest, RanksOfDifferentJobsAreRefusedByName) {
  REVERIE_REQUIRE_TRACE(a, testing::kNcclTrace);
  REVERIE_REQUIRE_TRACE(b, testing::kDfIndexResolverTrace);
  const Graph ga = Build(a), gb = Build(b);
  const std::vector<depgraph::RankInput> in = {{&ga, "nccl_data"}, {&gb, "df_index_resolver"}};
  const absl::StatusOr<depgraph::JobGraph> job = depgraph::CoupleRanks(in);
  ASSERT_EQ(job.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(job.status().message()),
              ::testing::AllOf(::testing::HasSubstr("df_index_resolver has"),
                               ::testing::HasSubstr("nccl_data has"),
                               ::testing::HasSubstr("do not cover the same steps")));
}

}  // namespace
}  // namespace reverie::testing
