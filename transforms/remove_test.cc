#include "transforms/remove.h"

#include <random>

#include "depgraph/simulator.h"
#include "gtest/gtest.h"
#include "transforms/select.h"
#include "transforms/structure.h"
#include "transforms/test_graphs.h"

namespace reverie::transforms {
namespace {

using depgraph::EdgeKind;
using depgraph::Phase;
using depgraph::TaskKind;

class RemoveTest : public ::testing::Test {
 protected:
  depgraph::Graph g_ = testing::MakeTrainingGraph(2);
  const depgraph::ResourceId cpu_{0}, gpu_{1};

  Selection Query(uint32_t kinds, Phase phase, int32_t step = -2) {
    TaskQuery q;
    q.kinds = kinds;
    q.phases = PhaseBit(phase);
    if (step >= -1) q.steps = {step};
    return *Select(g_, q);
  }
  bool HasEdge(TaskId s, TaskId d, EdgeKind* kind = nullptr) {
    for (const depgraph::Edge& e : g_.edges()) {
      if (!e.removed && e.src == s && e.dst == d) {
        if (kind) *kind = e.kind;
        return true;
      }
    }
    return false;
  }
};

TEST_F(RemoveTest, RemovingAKernelClosesUpTheStream) {
  const Selection fwd = Query(KindBit(TaskKind::kKernel), Phase::kForward, 0);
  const TaskId relu = fwd[1];
  const TaskId prev = g_.prev_on_resource(relu), next = g_.next_on_resource(relu);
  const TaskId launch = LauncherOf(g_, relu);
  absl::StatusOr<RemoveResult> r = RemoveTasks(g_, Selection::Of(relu));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->removed, 1);
  EXPECT_EQ(g_.next_on_resource(prev), next);
  EXPECT_EQ(g_.prev_on_resource(next), prev);
  // Its launch call stays and launches nothing; nothing new was needed: the
  // launch's only child was the kernel and the stream closes up.
  EXPECT_FALSE(g_.removed(launch));
  EXPECT_EQ(r->edges_added, 0);
  EXPECT_TRUE(g_.Validate().ok());
}

TEST_F(RemoveTest, RemovingALaunchCallHandsItsKernelToThePreviousCall) {
  const Selection fwd = Query(KindBit(TaskKind::kKernel), Phase::kForward, 0);
  const TaskId gemm = fwd[2];
  const TaskId launch = LauncherOf(g_, gemm);
  const TaskId before = g_.prev_on_resource(launch);
  ASSERT_TRUE(RemoveTasks(g_, Selection::Of(launch)).ok());
  EdgeKind kind;
  ASSERT_TRUE(HasEdge(before, gemm, &kind));
  EXPECT_EQ(kind, EdgeKind::kLaunch);  // the kernel had no other launcher
  EXPECT_TRUE(g_.Validate().ok());
}

TEST_F(RemoveTest, RemovingTheUpdatePhaseKeepsTheSyncWaitingForTheGpu) {
  // What fused_adam does first: drop every update kernel and its launch.
  const Selection k = Query(KindBit(TaskKind::kKernel), Phase::kUpdate, 0);
  ASSERT_EQ(k.size(), 3u);
  const Selection victims = k.Union(LaunchesOf(g_, k));
  const TaskId last_bwd = g_.prev_on_resource(k[0]);
  const TaskId sync = g_.next_on_resource(LauncherOf(g_, k[2]));
  ASSERT_EQ(g_.name(sync), "cudaStreamSynchronize");
  absl::StatusOr<RemoveResult> r = RemoveTasks(g_, victims);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->removed, 6);
  EdgeKind kind;
  ASSERT_TRUE(HasEdge(last_bwd, sync, &kind));  // sync now waits for the backward
  EXPECT_EQ(kind, EdgeKind::kSync);
  EXPECT_TRUE(g_.Validate().ok());
  // The simulated sync still starts after the GPU work it waited for.
  const depgraph::SimResult sim = *depgraph::Simulate(g_);
  EXPECT_GE(sim.start_ns[sync.value()], sim.end_ns[last_bwd.value()]);
}

TEST_F(RemoveTest, RemovingABlockInTheMiddleKeepsCrossResourceOrder) {
  // Remove the whole backward of step 0 (launches and kernels): the
  // first update kernel must still wait for the forward's last kernel (by the
  // stream) and for the launch call before the block (by a new edge).
  const Selection bwd = Query(0, Phase::kBackward, 0);
  ASSERT_EQ(bwd.size(), 6u);
  const Selection upd = Query(KindBit(TaskKind::kKernel), Phase::kUpdate, 0);
  const Selection fwd_k = Query(KindBit(TaskKind::kKernel), Phase::kForward, 0);
  const int64_t before = depgraph::Simulate(g_)->makespan_ns;
  ASSERT_TRUE(RemoveTasks(g_, bwd).ok());
  EXPECT_EQ(g_.next_on_resource(fwd_k[2]), upd[0]);
  EXPECT_TRUE(g_.Validate().ok());
  const depgraph::SimResult sim = *depgraph::Simulate(g_);
  EXPECT_LT(sim.makespan_ns, before);
  EXPECT_GE(sim.start_ns[upd[0].value()], sim.end_ns[fwd_k[2].value()]);
}

TEST_F(RemoveTest, TransitiveDependenciesThroughRemovedTasksSurvive) {
  // a (thread 2) -> x (thread 2) -> b (gpu): removing x must keep a -> b.
  const depgraph::ResourceId t2 = AddCpuThread(g_, "t2");
  depgraph::TaskSpec s{.kind = TaskKind::kCpuWork, .name = "a", .duration_ns = 1'000'000};
  const TaskId a = *InsertTask(g_, Where::OnResource(t2), s);
  s.name = "x";
  const TaskId x = *InsertTask(g_, Where::OnResource(t2), s);
  const TaskId b = g_.first_on_resource(gpu_);
  ASSERT_TRUE(AddDependency(g_, x, b, EdgeKind::kUser, 7).ok());
  ASSERT_TRUE(RemoveTasks(g_, Selection::Of(x)).ok());
  EdgeKind kind;
  ASSERT_TRUE(HasEdge(a, b, &kind));
  EXPECT_EQ(kind, EdgeKind::kUser);
  const depgraph::SimResult sim = *depgraph::Simulate(g_);
  EXPECT_GE(sim.start_ns[b.value()], sim.end_ns[a.value()] + 7);
}

TEST_F(RemoveTest, RemovedAndEmptySelectionsAreNoOps) {
  const size_t live = g_.live_task_count();
  EXPECT_EQ(RemoveTasks(g_, Selection())->removed, 0);
  const TaskId t = g_.first_on_resource(cpu_);
  ASSERT_EQ(RemoveTasks(g_, Selection::Of(t))->removed, 1);
  EXPECT_EQ(RemoveTasks(g_, Selection::Of(t))->removed, 0);
  EXPECT_EQ(g_.live_task_count(), live - 1);
}

TEST_F(RemoveTest, EverythingCanGo) {
  ASSERT_EQ(RemoveTasks(g_, SelectAll(g_))->removed, 38);
  EXPECT_EQ(g_.live_task_count(), 0u);
  EXPECT_EQ(g_.live_edge_count(), 0u);
  EXPECT_FALSE(g_.first_on_resource(cpu_).valid());
  EXPECT_TRUE(g_.Validate().ok());
}

// Issue 29, D25: a hub between n producers and n consumers rewires into
// n * n edges. Past a bound RemoveTasks refuses, says which bound, and
// leaves the graph as it was.
TEST_F(RemoveTest, RewiringIsBoundedAndCounted) {
  const depgraph::ResourceId p = AddCommChannel(g_, "p"), h = AddCommChannel(g_, "h"),
                             c = AddCommChannel(g_, "c");
  auto comm = [this](depgraph::ResourceId r, const char* name) {
    depgraph::TaskSpec spec{.kind = TaskKind::kComm, .name = name, .duration_ns = 1};
    return *InsertTask(g_, Where::OnResource(r), spec);
  };
  const TaskId hub = comm(h, "hub");
  constexpr int kN = 50;
  std::vector<Dependency> deps;
  for (int i = 0; i < kN; ++i) {
    deps.push_back({comm(p, "a"), hub, EdgeKind::kComm});
    deps.push_back({hub, comm(c, "b"), EdgeKind::kComm});
  }
  ASSERT_TRUE(AddDependencies(g_, deps).ok());
  const size_t edges = g_.live_edge_count();
  RemoveLimitHit hit = RemoveLimitHit::kNone;
  RemoveLimits few_edges;
  few_edges.max_new_edges = kN * kN - 1;
  absl::StatusOr<RemoveResult> r = RemoveTasks(g_, Selection::Of(hub), few_edges, &hit);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_EQ(hit, RemoveLimitHit::kNewEdges);
  EXPECT_FALSE(g_.removed(hub));
  EXPECT_EQ(g_.live_edge_count(), edges);
  RemoveLimits little_work;
  little_work.max_work = kN * kN / 2;
  r = RemoveTasks(g_, Selection::Of(hub), little_work, &hit);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_EQ(hit, RemoveLimitHit::kWork);
  EXPECT_FALSE(g_.removed(hub));
  r = RemoveTasks(g_, Selection::Of(hub), {}, &hit);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(hit, RemoveLimitHit::kNone);
  EXPECT_EQ(r->edges_added, kN * kN);
  EXPECT_GE(r->work, kN * kN);
  EXPECT_TRUE(g_.removed(hub));
}

// Kernels launched from many threads onto one stream, all removed but the
// last: the survivor waits for the latest launch of every thread, and the
// rewiring's work grows with the kernels and threads, not their product
// (each removed kernel's ancestors are handed on to the next, not copied).
depgraph::Graph ManyThreadsOneStream(int threads, int kernels) {
  depgraph::Graph g;
  std::vector<depgraph::ResourceId> cpu;
  for (int t = 0; t < threads; ++t) {
    cpu.push_back(g.AddResource({.kind = depgraph::ResourceKind::kCpuThread, .native_id = t}));
  }
  const depgraph::ResourceId gpu =
      g.AddResource({.kind = depgraph::ResourceKind::kGpuStream, .native_id = 7, .device = 0});
  for (int k = 0; k < kernels; ++k) {
    const TaskId launch = g.AppendTask({.kind = TaskKind::kCpuApi,
                                        .name = "cudaLaunchKernel",
                                        .resource = cpu[k % threads],
                                        .duration_ns = 5});
    const TaskId kernel = g.AppendTask({.kind = TaskKind::kKernel,
                                        .name = k + 1 < kernels ? "add" : "gemm",
                                        .resource = gpu,
                                        .duration_ns = 3});
    g.AddEdge(launch, kernel, EdgeKind::kLaunch);
  }
  return g;
}

TEST(RemoveChainTest, AChainOfKernelsFromManyThreadsIsHandedOn) {
  int64_t work_at[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const int threads = 200 << i, kernels = 20 * threads;
    depgraph::Graph g = ManyThreadsOneStream(threads, kernels);
    TaskQuery q;
    q.kinds = KindBit(TaskKind::kKernel);
    q.names = {"add"};
    absl::StatusOr<RemoveResult> r = RemoveTasks(g, *Select(g, q));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->removed, kernels - 1);
    // One edge from every other thread's last launch; the survivor's own
    // thread orders its earlier launches already.
    EXPECT_EQ(r->edges_added, threads - 1);
    const TaskId gemm = g.first_on_resource(depgraph::ResourceId(threads));
    ASSERT_TRUE(gemm.valid());
    EXPECT_EQ(g.next_on_resource(gemm), TaskId());
    for (int t = 0; t < threads; ++t) {
      const TaskId last = g.last_on_resource(depgraph::ResourceId(t));
      if (last == LauncherOf(g, gemm)) continue;
      bool found = false;
      for (const depgraph::Edge& e : g.edges())
        found |= !e.removed && e.src == last && e.dst == gemm;
      EXPECT_TRUE(found) << "thread " << t;
    }
    EXPECT_TRUE(g.Validate().ok());
    work_at[i] = r->work;
  }
  // Twice the threads and twice the kernels: about twice the work (the
  // product would be four times).
  EXPECT_LT(work_at[1], 3 * work_at[0]) << work_at[0] << " -> " << work_at[1];
}

// A random graph: threads, streams and channels (ordered or not), tasks
// appended at random to them, edges of every kind and delay from an earlier
// task to a later one (so acyclic).
depgraph::Graph RandomGraph(std::mt19937& rng, std::vector<TaskId>* tasks) {
  depgraph::Graph g;
  std::vector<depgraph::ResourceId> res;
  const int resources = 1 + static_cast<int>(rng() % 6);
  for (int r = 0; r < resources; ++r) {
    depgraph::Resource x;
    x.kind = static_cast<depgraph::ResourceKind>(rng() % 3);  // thread, stream, channel
    x.native_id = r;
    x.device = x.kind == depgraph::ResourceKind::kGpuStream ? 0 : -1;
    x.ordered = x.kind != depgraph::ResourceKind::kCommChannel || rng() % 2 == 0;
    res.push_back(g.AddResource(x));
  }
  const int n = 4 + static_cast<int>(rng() % 36);
  for (int i = 0; i < n; ++i) {
    const depgraph::ResourceId r = res[rng() % res.size()];
    const depgraph::ResourceKind k = g.resource(r).kind;
    const TaskKind kind = k == depgraph::ResourceKind::kGpuStream     ? TaskKind::kKernel
                          : k == depgraph::ResourceKind::kCommChannel ? TaskKind::kComm
                          : rng() % 2 == 0                            ? TaskKind::kCpuApi
                                                                      : TaskKind::kCpuWork;
    tasks->push_back(g.AppendTask({.kind = kind, .name = "t", .resource = r, .duration_ns = 1}));
  }
  for (int e = 0; e < 2 * n; ++e) {
    size_t a = rng() % tasks->size(), b = rng() % tasks->size();
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    g.AddEdge((*tasks)[a], (*tasks)[b], static_cast<EdgeKind>(rng() % 6),
              static_cast<int32_t>(rng() % 3));
  }
  return g;
}

// Removal keeps every ordering among the tasks that stay and adds none: on
// random graphs, one survivor reaches another after the removal exactly
// when it did before (edges and ordered resources; transforms/structure.h).
TEST(RemovePropertyTest, SurvivorsReachEachOtherExactlyAsBefore) {
  std::mt19937 rng(20261129);
  int removed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<TaskId> tasks;
    depgraph::Graph g = RandomGraph(rng, &tasks);
    const depgraph::Graph before = g;
    std::vector<TaskId> gone;
    const unsigned share = rng() % 100;
    for (const TaskId t : tasks) {
      if (rng() % 100 < share) gone.push_back(t);
    }
    absl::StatusOr<RemoveResult> r = RemoveTasks(g, Selection::FromSorted(gone));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(g.Validate().ok()) << "trial " << trial;
    removed += static_cast<int>(r->removed);
    for (const TaskId a : tasks) {
      for (const TaskId b : tasks) {
        if (a == b || g.removed(a) || g.removed(b)) continue;
        ASSERT_EQ(g.Reaches(a, b), before.Reaches(a, b))
            << "trial " << trial << ": " << a.value() << " -> " << b.value();
      }
    }
  }
  EXPECT_GT(removed, 1000);  // the trials removed something
}

}  // namespace
}  // namespace reverie::transforms
