#include "depgraph/simulator.h"

#include "depgraph/replicate.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Small helper to build hand-made graphs whose simulated times are known.
class G {
 public:
  ResourceId Thread(int64_t tid) {
    return g.AddResource({ResourceKind::kCpuThread, 1, tid, -1, "thread", true});
  }
  ResourceId Stream(int64_t sid) {
    return g.AddResource({ResourceKind::kGpuStream, 1, sid, 0, "stream", true});
  }
  ResourceId Channel() {
    return g.AddResource({ResourceKind::kCommChannel, 1, 0, -1, "channel", false});
  }
  TaskId Add(ResourceId r, int64_t dur, int64_t gap = 0, TaskKind kind = TaskKind::kCpuApi,
             int32_t step = -1) {
    TaskSpec s{
        .kind = kind, .name = "t", .resource = r, .duration_ns = dur, .gap_ns = gap, .step = step};
    // A measured start that would be wrong if the simulator read it.
    s.measured_start_ns = 1'000'000'000;
    return g.AppendTask(s);
  }
  SimResult Sim(const SchedulePolicy* policy = nullptr) {
    SimOptions o;
    o.policy = policy;
    absl::StatusOr<SimResult> r = Simulate(g, o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : SimResult{};
  }
  Graph g;
};

int64_t S(const SimResult& r, TaskId t) { return r.start_ns[t.value()]; }
int64_t E(const SimResult& r, TaskId t) { return r.end_ns[t.value()]; }

TEST(SimulatorTest, EmptyGraph) {
  Graph g;
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->makespan_ns, 0);
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_EQ(r->steps[0].duration_ns(), 0);
}

TEST(SimulatorTest, ThreadOrderUsesDurationsAndGaps) {
  G b;
  const ResourceId th = b.Thread(1);
  const TaskId a = b.Add(th, 10, 5);
  const TaskId c = b.Add(th, 20, 7);
  const TaskId d = b.Add(th, 3, 100);  // the last gap extends nothing after it
  const SimResult r = b.Sim();
  EXPECT_EQ(S(r, a), 0);
  EXPECT_EQ(S(r, c), 15);
  EXPECT_EQ(S(r, d), 42);
  EXPECT_EQ(E(r, d), 45);
  EXPECT_EQ(r.makespan_ns, 45);
}

TEST(SimulatorTest, LaunchEdgeWithDelayOnIdleAndBusyStream) {
  G b;
  const ResourceId th = b.Thread(1);
  const ResourceId st = b.Stream(7);
  const TaskId l1 = b.Add(th, 5, 1);
  const TaskId l2 = b.Add(th, 5, 1);
  const TaskId k1 = b.Add(st, 100, 0, TaskKind::kKernel);
  const TaskId k2 = b.Add(st, 10, 0, TaskKind::kKernel);
  b.g.AddEdge(l1, k1, EdgeKind::kLaunch, 3);
  b.g.AddEdge(l2, k2, EdgeKind::kLaunch, 3);
  const SimResult r = b.Sim();
  EXPECT_EQ(S(r, k1), 8);    // idle stream: launch end (5) + delay (3)
  EXPECT_EQ(S(r, l2), 6);
  EXPECT_EQ(S(r, k2), 108);  // busy stream: waits for k1, not for the launch
  EXPECT_EQ(r.makespan_ns, 118);
}

TEST(SimulatorTest, SyncEdgeBlocksTheCpu) {
  G b;
  const ResourceId th = b.Thread(1);
  const ResourceId st = b.Stream(7);
  const TaskId launch = b.Add(th, 5, 0);
  const TaskId sync = b.Add(th, 2, 0);  // residual after the wait
  const TaskId after = b.Add(th, 1, 0);
  const TaskId k = b.Add(st, 50, 0, TaskKind::kKernel);
  b.g.AddEdge(launch, k, EdgeKind::kLaunch, 0);
  b.g.AddEdge(k, sync, EdgeKind::kSync, 0);
  const SimResult r = b.Sim();
  EXPECT_EQ(S(r, k), 5);
  EXPECT_EQ(S(r, sync), 55);
  EXPECT_EQ(S(r, after), 57);
}

TEST(SimulatorTest, EventEdgeOrdersTwoStreams) {
  G b;
  const ResourceId th = b.Thread(1);
  const ResourceId s1 = b.Stream(1);
  const ResourceId s2 = b.Stream(2);
  const TaskId l1 = b.Add(th, 1);
  const TaskId l2 = b.Add(th, 1);
  const TaskId producer = b.Add(s1, 40, 0, TaskKind::kKernel);
  const TaskId consumer = b.Add(s2, 10, 0, TaskKind::kKernel);
  b.g.AddEdge(l1, producer, EdgeKind::kLaunch);
  b.g.AddEdge(l2, consumer, EdgeKind::kLaunch);
  b.g.AddEdge(producer, consumer, EdgeKind::kEvent, 2);
  const SimResult r = b.Sim();
  EXPECT_EQ(S(r, producer), 1);
  EXPECT_EQ(S(r, consumer), 43);
}

TEST(SimulatorTest, InterThreadEdge) {
  G b;
  const ResourceId main = b.Thread(1);
  const ResourceId bwd = b.Thread(2);
  const TaskId m = b.Add(main, 30);
  const TaskId w = b.Add(bwd, 5);
  b.g.AddEdge(m, w, EdgeKind::kInterThread, 4);
  const SimResult r = b.Sim();
  EXPECT_EQ(S(r, w), 34);
}

TEST(SimulatorTest, ChannelRunsOneTaskAtATimeEarliestReadyFirst) {
  G b;
  const ResourceId th = b.Thread(1);
  const ResourceId ch = b.Channel();
  const TaskId a = b.Add(th, 10);
  const TaskId c = b.Add(th, 10);
  // Appended in reverse of readiness: the channel must still pick by readiness.
  const TaskId late = b.Add(ch, 100, 0, TaskKind::kComm);
  const TaskId early = b.Add(ch, 100, 0, TaskKind::kComm);
  b.g.AddEdge(c, late, EdgeKind::kComm);   // ready at 20
  b.g.AddEdge(a, early, EdgeKind::kComm);  // ready at 10
  const SimResult r = b.Sim();
  EXPECT_EQ(S(r, early), 10);
  EXPECT_EQ(S(r, late), 110);
  EXPECT_EQ(r.makespan_ns, 210);
}

TEST(SimulatorTest, ChannelGapDelaysTheNextTask) {
  G b;
  const ResourceId ch = b.Channel();
  const TaskId x = b.Add(ch, 10, 5, TaskKind::kComm);
  const TaskId y = b.Add(ch, 10, 0, TaskKind::kComm);
  const SimResult r = b.Sim();
  EXPECT_EQ(S(r, x), 0);
  EXPECT_EQ(S(r, y), 15);
}

TEST(SimulatorTest, PriorityPolicyReordersQueuedChannelTasks) {
  // Three comm tasks queue up behind a long one; priority decides the order
  // among the queued ones, earliest-ready would not.
  G b;
  const ResourceId th = b.Thread(1);
  const ResourceId ch = b.Channel();
  const TaskId t1 = b.Add(th, 1);
  const TaskId t2 = b.Add(th, 1);
  const TaskId t3 = b.Add(th, 1);
  const TaskId first = b.Add(ch, 100, 0, TaskKind::kComm);
  const TaskId c2 = b.Add(ch, 10, 0, TaskKind::kComm);
  const TaskId c3 = b.Add(ch, 10, 0, TaskKind::kComm);
  b.g.AddEdge(t1, first, EdgeKind::kComm);
  b.g.AddEdge(t2, c2, EdgeKind::kComm);
  b.g.AddEdge(t3, c3, EdgeKind::kComm);
  b.g.set_priority(first, 5);
  b.g.set_priority(c2, 2);
  b.g.set_priority(c3, 1);
  const SimResult fifo = b.Sim();
  EXPECT_EQ(S(fifo, c2), 101);
  EXPECT_EQ(S(fifo, c3), 111);
  PriorityPolicy prio;
  const SimResult p = b.Sim(&prio);
  EXPECT_EQ(S(p, first), 1);  // alone when it became ready: runs at once
  EXPECT_EQ(S(p, c3), 101);
  EXPECT_EQ(S(p, c2), 111);
}

TEST(SimulatorTest, ChannelTaskChainsBackToCpu) {
  G b;
  const ResourceId th = b.Thread(1);
  const ResourceId ch = b.Channel();
  const TaskId a = b.Add(th, 10);
  const TaskId wait = b.Add(th, 1);
  const TaskId comm = b.Add(ch, 50, 0, TaskKind::kComm);
  b.g.AddEdge(a, comm, EdgeKind::kComm);
  b.g.AddEdge(comm, wait, EdgeKind::kComm, 3);
  const SimResult r = b.Sim();
  EXPECT_EQ(S(r, wait), 63);
}

TEST(SimulatorTest, CycleIsReportedWithATaskOnIt) {
  G b;
  const ResourceId th = b.Thread(1);
  const ResourceId st = b.Stream(1);
  b.Add(th, 1);
  const TaskId x = b.Add(th, 1);
  const TaskId y = b.Add(th, 1);
  const TaskId k = b.Add(st, 1, 0, TaskKind::kKernel);
  b.g.AddEdge(y, k, EdgeKind::kLaunch);
  b.g.AddEdge(k, x, EdgeKind::kSync);  // x waits for a kernel launched after x
  absl::StatusOr<SimResult> r = Simulate(b.g);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cycle through task"));
}

TEST(SimulatorTest, RemovedTasksAreSkipped) {
  G b;
  const ResourceId th = b.Thread(1);
  const TaskId a = b.Add(th, 10);
  const TaskId gone = b.Add(th, 1000);
  const TaskId c = b.Add(th, 10);
  b.g.RemoveTask(gone);
  const SimResult r = b.Sim();
  EXPECT_EQ(S(r, gone), -1);
  EXPECT_EQ(E(r, gone), -1);
  EXPECT_EQ(S(r, c), E(r, a));
}

// Without step markers a step spans its tasks, and the profiler overview's
// rule makes consecutive steps periods: step 1 starts where step 0's GPU work
// ended, not where its CPU part started (the CPU ran ahead).
TEST(SimulatorTest, StepsAreThePeriodsOfTheGpuWorkTheyLaunched) {
  G b;
  const ResourceId th = b.Thread(1);
  const ResourceId st = b.Stream(1);
  b.g.AddStep({"ProfilerStep#1", 0, 0});
  b.g.AddStep({"ProfilerStep#2", 0, 0});
  const TaskId l0 = b.Add(th, 10, 0, TaskKind::kCpuApi, 0);
  const TaskId l1 = b.Add(th, 10, 0, TaskKind::kCpuApi, 1);
  const TaskId k0 = b.Add(st, 100, 0, TaskKind::kKernel, 0);
  const TaskId k1 = b.Add(st, 50, 0, TaskKind::kKernel, 1);
  b.g.AddEdge(l0, k0, EdgeKind::kLaunch);
  b.g.AddEdge(l1, k1, EdgeKind::kLaunch);
  const SimResult r = b.Sim();
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].start_ns, 0);
  EXPECT_EQ(r.steps[0].end_ns, 110);  // kernel k0 ends after the CPU moved on
  EXPECT_EQ(r.steps[1].start_ns, 110);
  EXPECT_EQ(r.steps[1].end_ns, 160);
  EXPECT_DOUBLE_EQ(r.mean_step_ns(), (110.0 + 50.0) / 2);
}

TEST(SimulatorTest, SimulateIntoReusesAndMatches) {
  G b;
  const ResourceId th = b.Thread(1);
  for (int i = 0; i < 100; ++i) b.Add(th, i, 1);
  SimResult reused;
  ASSERT_TRUE(SimulateInto(b.g, {}, &reused).ok());
  const int64_t* data = reused.start_ns.data();
  ASSERT_TRUE(SimulateInto(b.g, {}, &reused).ok());
  EXPECT_EQ(reused.start_ns.data(), data);
  EXPECT_EQ(reused.makespan_ns, b.Sim().makespan_ns);
}

// Random graphs of threads and streams with launch/sync/event edges that
// respect a global order (so they are acyclic).
Graph RandomGraph(uint32_t seed, int tasks) {
  std::mt19937 rng(seed);
  G b;
  std::vector<ResourceId> res = {b.Thread(1), b.Thread(2), b.Stream(1), b.Stream(2),
                                 b.Stream(3)};
  std::vector<TaskId> all;
  for (int i = 0; i < tasks; ++i) {
    const ResourceId r = res[rng() % res.size()];
    const bool gpu = r.value() >= 2;
    // One draw per statement: the order a call's arguments are evaluated in
    // is the compiler's (GCC right to left, clang left to right), and the
    // same seed must give the same graph under both.
    const int64_t duration = rng() % 100;
    const int64_t gap = gpu ? rng() % 3 : rng() % 20;
    all.push_back(b.Add(r, duration, gap, gpu ? TaskKind::kKernel : TaskKind::kCpuApi, 0));
    if (i > 0 && rng() % 2 == 0) {
      // Edge from an earlier task (earlier in global order => no cycle, since
      // resource order also follows creation order).
      const TaskId src = all[rng() % i];
      b.g.AddEdge(src, all.back(), EdgeKind::kUser, static_cast<int32_t>(rng() % 10));
    }
  }
  b.g.AddStep({"it", 0, 0});
  return std::move(b.g);
}

TEST(SimulatorPropertyTest, ShorteningAnyTaskNeverLengthensOrderedGraphs) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    Graph g = RandomGraph(seed, 200);
    absl::StatusOr<SimResult> base = Simulate(g);
    ASSERT_TRUE(base.ok());
    std::mt19937 rng(seed * 7);
    for (int trial = 0; trial < 20; ++trial) {
      Graph h = g;
      const TaskId t(rng() % h.task_count());
      h.set_duration_ns(t, h.duration_ns(t) / 2);
      if (trial % 2) h.set_gap_ns(t, 0);
      absl::StatusOr<SimResult> r = Simulate(h);
      ASSERT_TRUE(r.ok());
      EXPECT_LE(r->makespan_ns, base->makespan_ns) << "seed " << seed;
      for (size_t i = 0; i < h.task_count(); ++i) {
        EXPECT_LE(r->end_ns[i], base->end_ns[i]) << "seed " << seed << " task " << i;
      }
    }
  }
}

TEST(SimulatorPropertyTest, StartsRespectEveryDependency) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const Graph g = RandomGraph(seed, 500);
    absl::StatusOr<SimResult> r = Simulate(g);
    ASSERT_TRUE(r.ok());
    for (const Edge& e : g.edges()) {
      EXPECT_GE(r->start_ns[e.dst.value()], r->end_ns[e.src.value()] + e.delay_ns);
    }
    for (uint32_t t = 0; t < g.task_count(); ++t) {
      const TaskId p = g.prev_on_resource(TaskId(t));
      if (!p.valid()) continue;
      EXPECT_GE(r->start_ns[t], r->end_ns[p.value()] + g.gap_ns(p));
    }
  }
}

TEST(SimulatorPropertyTest, Deterministic) {
  const Graph g = RandomGraph(3, 1000);
  absl::StatusOr<SimResult> a = Simulate(g);
  absl::StatusOr<SimResult> b = Simulate(g);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->start_ns, b->start_ns);
  EXPECT_EQ(a->end_ns, b->end_ns);
}

// The simulator has a faster instance for graphs whose resources are all
// ordered (no channel): an idle channel added to the same graph takes the
// general one, which must give the same times, removed tasks or not.
TEST(SimulatorPropertyTest, AnIdleChannelChangesNoTime) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    Graph g = RandomGraph(seed, 400);
    if (seed % 2 == 0) {
      for (uint32_t t = 7; t < g.task_count(); t += 31) g.RemoveTask(TaskId(t));
    }
    Graph with_channel = g;
    with_channel.AddResource({ResourceKind::kCommChannel, 1, 0, -1, "channel", false});
    absl::StatusOr<SimResult> a = Simulate(g);
    absl::StatusOr<SimResult> b = Simulate(with_channel);
    ASSERT_TRUE(a.ok() && b.ok()) << "seed " << seed;
    EXPECT_EQ(a->start_ns, b->start_ns) << "seed " << seed;
    EXPECT_EQ(a->end_ns, b->end_ns) << "seed " << seed;
    EXPECT_EQ(a->makespan_ns, b->makespan_ns) << "seed " << seed;
    EXPECT_EQ(a->first_start_ns, b->first_start_ns) << "seed " << seed;
  }
}

TEST(ReplicateTest, CopiesRunBackToBack) {
  const Graph g = RandomGraph(5, 300);
  absl::StatusOr<SimResult> one = Simulate(g);
  ASSERT_TRUE(one.ok());
  const Graph three = ReplicateGraph(g, 3);
  EXPECT_EQ(three.task_count(), 3 * g.task_count());
  EXPECT_EQ(three.live_edge_count(), 3 * g.live_edge_count());
  EXPECT_EQ(three.step_count(), 3 * g.step_count());
  ASSERT_TRUE(three.Validate().ok());
  absl::StatusOr<SimResult> r = Simulate(three);
  ASSERT_TRUE(r.ok());
  // Each copy waits for the previous one on every resource: at least as long
  // as one copy, at most three end to end plus the gap after each copy's
  // last task on a resource (a makespan ends before its trailing gaps).
  int64_t max_gap = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) max_gap = std::max(max_gap, g.gap_ns(TaskId(i)));
  EXPECT_GE(r->makespan_ns, one->makespan_ns);
  EXPECT_LE(r->makespan_ns, 3 * one->makespan_ns + 2 * max_gap);
  EXPECT_EQ(r->steps[0].duration_ns(), one->steps[0].duration_ns());
}

TEST(SimulatorTest, NegativeDurationsAndGapsCountAsZero) {
  G b;
  const ResourceId th = b.Thread(1);
  const TaskId a = b.Add(th, -5, -3);
  const TaskId c = b.Add(th, 4);
  const SimResult r = b.Sim();
  EXPECT_EQ(E(r, a), 0);
  EXPECT_EQ(S(r, c), 0);
  EXPECT_THAT(r.end_ns, ElementsAre(0, 4));
}

}  // namespace
}  // namespace reverie::depgraph
