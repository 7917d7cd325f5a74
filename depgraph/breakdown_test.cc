#include "depgraph/breakdown.h"

#include "depgraph/critical_path.h"
#include "depgraph/simulator.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

// thread: A [0,10] launches K; B [10,20] (gap 0)
// stream: K [10,40]            -> cpu-only 10, overlap 10, gpu-only 20.
struct Fixture {
  Fixture() {
    th = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
    st = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "s", true});
    g.AddStep({"step", 0, 0});
    a = Add(th, TaskKind::kCpuApi, "cudaLaunchKernel", 10, 0, Phase::kForward);
    b = Add(th, TaskKind::kCpuApi, "cudaMemsetAsync", 10, 10, Phase::kBackward);
    k = Add(st, TaskKind::kKernel, "volta_sgemm_128x64_nn", 30, 10, Phase::kForward);
    g.AddEdge(a, k, EdgeKind::kLaunch, 0);
    g.set_layer(k, g.AddLayer("fc", LayerId::Invalid()));
  }
  TaskId Add(ResourceId r, TaskKind kind, const char* name, int64_t dur, int64_t measured,
             Phase phase) {
    TaskSpec s{
        .kind = kind, .name = name, .resource = r, .duration_ns = dur, .phase = phase, .step = 0,
        .measured_start_ns = measured};
    return g.AppendTask(s);
  }
  Graph g;
  ResourceId th, st;
  TaskId a, b, k;
};

TEST(BreakdownTest, SplitsTheStepSpan) {
  Fixture f;
  absl::StatusOr<SimResult> sim = Simulate(f.g);
  ASSERT_TRUE(sim.ok());
  const GraphBreakdown b = ComputeBreakdown(f.g, *sim);
  ASSERT_EQ(b.steps.size(), 1u);
  for (const TimeSplit* s : {&b.steps[0].measured, &b.steps[0].simulated}) {
    EXPECT_EQ(s->cpu_only_ns, 10);
    EXPECT_EQ(s->overlap_ns, 10);
    EXPECT_EQ(s->gpu_only_ns, 20);
    EXPECT_EQ(s->idle_ns, 0);
    EXPECT_EQ(s->total_ns(), 40);
  }
  ASSERT_EQ(b.by_phase.size(), 2u);
  EXPECT_EQ(b.by_phase[0].name, "forward");
  EXPECT_EQ(b.by_phase[0].cpu_ns, 10);
  EXPECT_EQ(b.by_phase[0].gpu_ns, 30);
  EXPECT_EQ(b.by_phase[1].name, "backward");
  ASSERT_FALSE(b.by_layer.empty());
  EXPECT_EQ(b.by_layer[0].name, "fc");
  EXPECT_EQ(b.by_layer[0].gpu_ns, 30);
}

TEST(BreakdownTest, GapsAreCpuTimeButWaitsAreIdle) {
  Fixture f;
  f.g.set_gap_ns(f.a, 5);  // untraced CPU work after A: CPU-busy [10, 15]
  // B blocks on K (a sync), and K starts 20 after A: idle while K is pending.
  f.g.AddEdge(f.k, f.b, EdgeKind::kSync, 0);
  for (EdgeId e(0); e.value() < f.g.edge_count(); e = EdgeId(e.value() + 1)) {
    if (f.g.edge(e).kind == EdgeKind::kLaunch) f.g.set_edge_delay_ns(e, 20);
  }
  absl::StatusOr<SimResult> sim = Simulate(f.g);
  ASSERT_TRUE(sim.ok());
  // A [0,10] + gap [10,15]; K [30,60]; B [60,70].
  const TimeSplit s = ComputeBreakdown(f.g, *sim).steps[0].simulated;
  EXPECT_EQ(s.total_ns(), 70);
  EXPECT_EQ(s.cpu_only_ns, 25);
  EXPECT_EQ(s.gpu_only_ns, 30);
  EXPECT_EQ(s.overlap_ns, 0);
  EXPECT_EQ(s.idle_ns, 15);  // [15, 30]
}

TEST(CriticalPathTest, GpuBoundChainThroughTheLaunch) {
  Fixture f;
  absl::StatusOr<SimResult> sim = Simulate(f.g);
  ASSERT_TRUE(sim.ok());
  EdgeId via;
  EXPECT_EQ(BindingPredecessor(f.g, *sim, f.k, &via), f.a);
  EXPECT_TRUE(via.valid());
  const std::vector<CriticalPath> paths = CriticalPaths(f.g, *sim);
  ASSERT_EQ(paths.size(), 1u);
  const CriticalPath& p = paths[0];
  ASSERT_EQ(p.tasks.size(), 2u);
  EXPECT_EQ(p.tasks[0], f.a);
  EXPECT_EQ(p.tasks[1], f.k);
  EXPECT_EQ(p.cpu_ns, 10);
  EXPECT_EQ(p.gpu_ns, 30);
  EXPECT_EQ(p.verdict, Bound::kGpu);
  ASSERT_FALSE(p.by_kernel_class.empty());
  EXPECT_EQ(p.by_kernel_class[0].name, "gemm");
  EXPECT_DOUBLE_EQ(p.by_kernel_class[0].pct, 75.0);
}

TEST(CriticalPathTest, CpuBoundWhenTheGpuWaitsForLaunches) {
  Fixture f;
  f.g.set_duration_ns(f.k, 1);
  f.g.set_duration_ns(f.b, 500);
  absl::StatusOr<SimResult> sim = Simulate(f.g);
  ASSERT_TRUE(sim.ok());
  const CriticalPath p = CriticalPaths(f.g, *sim)[0];
  EXPECT_EQ(p.tasks.back(), f.b);
  EXPECT_EQ(p.verdict, Bound::kCpu);
  EXPECT_EQ(p.cpu_ns, 510);
}

TEST(CriticalPathTest, CommunicationBoundThroughAChannel) {
  Graph g;
  const ResourceId th = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const ResourceId ch = g.AddResource({ResourceKind::kCommChannel, 1, 0, -1, "c", false});
  TaskSpec s{.kind = TaskKind::kCpuWork, .resource = th, .duration_ns = 5};
  const TaskId w = g.AppendTask(s);
  s.resource = ch;
  s.kind = TaskKind::kComm;
  s.duration_ns = 100;
  const TaskId c1 = g.AppendTask(s);
  const TaskId c2 = g.AppendTask(s);
  g.AddEdge(w, c1, EdgeKind::kComm);
  g.AddEdge(w, c2, EdgeKind::kComm);
  absl::StatusOr<SimResult> sim = Simulate(g);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(BindingPredecessor(g, *sim, c2, nullptr), c1);  // held the channel
  const CriticalPath p = CriticalPaths(g, *sim)[0];
  EXPECT_EQ(p.tasks.size(), 3u);
  EXPECT_EQ(p.comm_ns, 200);
  EXPECT_EQ(p.verdict, Bound::kCommunication);
}

}  // namespace
}  // namespace reverie::depgraph
