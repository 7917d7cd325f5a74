// The primitives of transforms/ on the real ResNet trace: selections agree
// with the trace, and structural edits keep the graph valid and simulable.
#include <string>

#include "gtest/gtest.h"
#include "tests/lua/real_graph.h"
#include "transforms/edit.h"
#include "transforms/ops.h"
#include "transforms/remove.h"
#include "transforms/select.h"
#include "transforms/session.h"
#include "transforms/structure.h"

namespace reverie::transforms {
namespace {

using depgraph::Graph;
using depgraph::TaskKind;

Selection Sel(const Graph& g, const TaskQuery& q) {
  absl::StatusOr<Selection> s = Select(g, q);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : Selection();
}

TEST(PrimitivesRealTest, SelectionsAgreeWithTheTrace) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kRtxResnetTrace);
  const Graph& g = rg->graph;
  TaskQuery q;
  q.kinds = KindBit(TaskKind::kKernel);
  EXPECT_EQ(Sel(g, q).size(), 9628u);  // kernels in the trace (reverie info)
  q.kinds = *ParseKindMask("gpu");
  EXPECT_EQ(Sel(g, q).size(), 9628u + 123 + 362);
  // A keyword selection equals a scan of the names.
  q.names = {"sgemm"};
  size_t scan = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const depgraph::TaskId t(i);
    if (!g.removed(t) && depgraph::IsGpuKind(g.kind(t)) &&
        g.name(t).find("sgemm") != std::string_view::npos) {
      ++scan;
    }
  }
  EXPECT_EQ(Sel(g, q).size(), scan);
  EXPECT_GT(scan, 1000u);
  // Phases partition the tasks.
  size_t by_phase = 0;
  for (int p = 0; p < depgraph::kPhaseCount; ++p) {
    TaskQuery pq;
    pq.phases = PhaseBit(static_cast<depgraph::Phase>(p));
    by_phase += Sel(g, pq).size();
  }
  EXPECT_EQ(by_phase, g.live_task_count());
}

TEST(PrimitivesRealTest, RemovingTheUpdatePhaseKeepsAValidFasterGraph) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kRtxResnetTrace);
  Graph g = rg->graph;
  TaskQuery q;
  q.phases = PhaseBit(depgraph::Phase::kUpdate);
  q.kinds = KindBit(TaskKind::kKernel);
  const Selection k = Sel(g, q);
  ASSERT_GT(k.size(), 100u);
  const Selection both = k.Union(LaunchesOf(g, k));
  // The launches' ops issue nothing else: their own CPU time goes too.
  const size_t with_ops = WithOrphanedOpTime(g, both).size();
  EXPECT_GT(with_ops, 2 * k.size());
  absl::StatusOr<RemoveResult> r = RemoveTasks(g, both);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->removed, static_cast<int64_t>(with_ops));
  ASSERT_TRUE(g.Validate().ok());
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g);
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_LE(sim->makespan_ns, rg->baseline.makespan_ns);
}

TEST(PrimitivesRealTest, RemovingEveryTenthTaskKeepsTheGraphValid) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kRtxResnetTrace);
  Graph g = rg->graph;
  const Selection tenth = SelectIf(g, [](depgraph::TaskId t) { return t.value() % 10 == 3; });
  const size_t with_ops = WithOrphanedOpTime(g, tenth).size();
  absl::StatusOr<RemoveResult> r = RemoveTasks(g, tenth);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(static_cast<size_t>(r->removed), with_ops);
  EXPECT_TRUE(g.Validate().ok());
  EXPECT_TRUE(depgraph::Simulate(g).ok());
}

TEST(PrimitivesRealTest, InsertingKernelsWithLaunchesKeepsTheGraphValid) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kRtxResnetTrace);
  Graph g = rg->graph;
  TaskQuery q;
  q.kinds = KindBit(TaskKind::kKernel);
  q.names = {"bn_fw"};
  const Selection bn = Sel(g, q);
  ASSERT_GT(bn.size(), 100u);
  const LaunchModel model = InferLaunchModel(g);
  EXPECT_GT(model.kernel_launch_samples, 9000);
  for (depgraph::TaskId t : bn) {
    depgraph::TaskSpec s{.kind = TaskKind::kKernel, .name = "extra", .duration_ns = 10'000};
    ASSERT_TRUE(InsertGpuTask(g, Where::After(t), s, LaunchOptions{}, model).ok());
  }
  EXPECT_EQ(g.live_task_count(), rg->graph.live_task_count() + 2 * bn.size());
  EXPECT_TRUE(g.Validate().ok());
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g);
  ASSERT_TRUE(sim.ok());
  EXPECT_GE(sim->makespan_ns, rg->baseline.makespan_ns);
}

TEST(PrimitivesRealTest, ACycleOnTheRealGraphIsRejectedAtomically) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kRtxResnetTrace);
  Graph g = rg->graph;
  EditSession s(g);
  ASSERT_TRUE(ScaleDuration(s.graph(), SelectAll(s.graph()), 0.5).ok());
  TaskQuery q;
  q.kinds = KindBit(TaskKind::kKernel);
  const Selection k = Sel(s.graph(), q);
  // The checked primitive refuses it...
  EXPECT_EQ(AddDependency(s.graph(), k[k.size() - 1], k[0]).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // ...and a raw edge is caught at commit, leaving the graph as it was.
  s.graph().AddEdge(k[k.size() - 1], k[0], depgraph::EdgeKind::kUser);
  EXPECT_EQ(s.Commit(&g, nullptr).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Diff(rg->graph, g).empty());
}

}  // namespace
}  // namespace reverie::transforms
