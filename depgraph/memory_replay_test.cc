// depgraph/memory_replay.h on a hand-built graph: events follow their
// anchors' simulated times, resized allocations carry their frees, and
// events anchored on removed work leave with their pairs.
#include "depgraph/memory_replay.h"

#include <utility>
#include <vector>

#include "depgraph/simulator.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

struct Built {
  Graph g;
  TaskId a, b;
};

// One thread: task a (100 ns), then b (100 ns). On GPU 0: 1000 B allocated
// 10 ns into a, 500 B 5 ns into b, the 1000 B freed 50 ns into b; 4000 B
// were allocated before the trace.
Built Build() {
  Built x;
  Graph& g = x.g;
  const ResourceId cpu = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "thread 1", true});
  TaskSpec s{.kind = TaskKind::kCpuWork, .name = "a", .resource = cpu, .duration_ns = 100};
  x.a = g.AppendTask(s);
  s.name = "b";
  x.b = g.AppendTask(s);
  auto add = [&](int64_t ns, int64_t bytes, int64_t total, TaskId anchor, int64_t offset, uint32_t of) {
    MemoryEvent m{
        .measured_ns = ns, .bytes = bytes, .total_allocated = total, .device = 0, .alloc = of,
        .anchor = anchor, .anchor_offset_ns = offset};
    g.AddMemoryEvent(m);
  };
  add(10, 1000, 5000, x.a, 10, 0);
  add(105, 500, 5500, x.b, 5, 0);
  add(150, -1000, 4500, x.b, 50, 1);
  return x;
}

DevicePeak Replay(const Graph& g) {
  absl::StatusOr<SimResult> sim = Simulate(g);
  EXPECT_TRUE(sim.ok()) << sim.status();
  const std::vector<DevicePeak> p = ReplayMemory(g, sim->start_ns, sim->end_ns);
  EXPECT_EQ(p.size(), 1u);
  return p.empty() ? DevicePeak{} : p[0];
}

TEST(MemoryReplay, StartsFromTheRecordedLevelAndPeaksWhereTheTraceDid) {
  const Built x = Build();
  const DevicePeak p = Replay(x.g);
  EXPECT_TRUE(p.absolute);
  EXPECT_EQ(p.start_level, 4000);
  EXPECT_EQ(p.peak, 5500);
  EXPECT_EQ(p.events, 3);
  EXPECT_EQ(p.left_out, 0);
}

TEST(MemoryReplay, ResizedAllocationsCarryTheirFrees) {
  Built x = Build();
  const std::vector<std::pair<uint32_t, int64_t>> sizes = {{0, 3000}};
  x.g.ResizeAllocations(sizes);
  EXPECT_EQ(x.g.memory_events()[2].bytes, -3000);
  EXPECT_EQ(Replay(x.g).peak, 4000 + 3000 + 500);
}

TEST(MemoryReplay, AShorterTaskKeepsItsEventsBeforeTheNextTask) {
  Built x = Build();
  // a shrinks to 5 ns: its event, 10 ns in, comes at a's end, still before
  // b's; the order and so the peak are kept.
  x.g.set_duration_ns(x.a, 5);
  EXPECT_EQ(Replay(x.g).peak, 5500);
}

TEST(MemoryReplay, EventsOfRemovedWorkLeaveWithTheirPairs) {
  Built x = Build();
  x.g.RemoveTask(x.b);
  const DevicePeak p = Replay(x.g);
  EXPECT_EQ(p.left_out, 3) << "b's two events, and the allocation b's free returned";
  EXPECT_EQ(p.peak, 4000);
}

TEST(MemoryReplayDeathTest, ResizingAFreeIsRefused) {
  Built x = Build();
  const std::vector<std::pair<uint32_t, int64_t>> sizes = {{2, 10}};
  EXPECT_DEATH(x.g.ResizeAllocations(sizes), "");
}

}  // namespace
}  // namespace reverie::depgraph
