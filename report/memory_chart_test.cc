// report/memory_chart.h on a hand-built graph: a chart of the baseline and a
// prediction whose allocation grew, with each run's peak; nothing for a
// graph without memory events.
#include "report/memory_chart.h"

#include <string>
#include <utility>
#include <vector>

#include "depgraph/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reverie::report {
namespace {

using depgraph::Graph;
using ::testing::HasSubstr;

// One thread of `n` tasks of `ns` each.
std::vector<depgraph::TaskId> OneThread(Graph& g, int n, int64_t ns) {
  const auto cpu = g.AddResource({depgraph::ResourceKind::kCpuThread, 1, 1, -1, "thread 1", true});
  depgraph::TaskSpec s{
      .kind = depgraph::TaskKind::kCpuWork, .name = "work", .resource = cpu, .duration_ns = ns};
  std::vector<depgraph::TaskId> out;
  for (int i = 0; i < n; ++i) out.push_back(g.AppendTask(s));
  return out;
}

// One thread of two 1 ms tasks; on GPU 0, 1 MiB allocated in the first and
// freed in the second, over 4 MiB allocated before the trace.
Graph Build() {
  Graph g;
  const std::vector<depgraph::TaskId> t = OneThread(g, 2, 1000000);
  const depgraph::TaskId a = t[0], b = t[1];
  depgraph::MemoryEvent m{
      .bytes = 1 << 20, .total_allocated = 5 << 20, .device = 0, .anchor = a,
      .anchor_offset_ns = 10};
  g.AddMemoryEvent(m);
  m.measured_ns = 1500000;
  m.bytes = -(1 << 20);
  m.total_allocated = 4 << 20;
  m.alloc = 1;
  m.anchor = b;
  m.anchor_offset_ns = 500000;
  g.AddMemoryEvent(m);
  return g;
}

TEST(MemoryChartTest, ChartsEachRunWithItsPeak) {
  const Graph base = Build();
  Graph bigger = Build();
  const std::vector<std::pair<uint32_t, int64_t>> sizes = {{0, 3 << 20}};
  bigger.ResizeAllocations(sizes);
  const absl::StatusOr<depgraph::SimResult> s0 = depgraph::Simulate(base);
  const absl::StatusOr<depgraph::SimResult> s1 = depgraph::Simulate(bigger);
  ASSERT_TRUE(s0.ok() && s1.ok());
  const MemorySection m = RenderMemorySection({{"baseline (simulated)", &base, &*s0}, {"grow", &bigger, &*s1}});
  ASSERT_FALSE(m.svg.empty());
  EXPECT_THAT(m.svg, HasSubstr("<svg"));
  EXPECT_THAT(m.svg, HasSubstr("GPU 0 memory allocated"));
  ASSERT_EQ(m.peaks.size(), 2u);
  EXPECT_EQ(m.peaks[0], "baseline (simulated): peak 5.00 MiB on GPU 0");
  EXPECT_EQ(m.peaks[1], "grow: peak 7.00 MiB on GPU 0");
  EXPECT_TRUE(m.absolute);
}

TEST(MemoryChartTest, NoMemoryEventsNoSection) {
  Graph g;
  OneThread(g, 1, 10);
  const absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g);
  ASSERT_TRUE(sim.ok());
  EXPECT_TRUE(RenderMemorySection({{"baseline (simulated)", &g, &*sim}}).svg.empty());
  EXPECT_TRUE(RenderMemorySection({}).svg.empty());
}

}  // namespace
}  // namespace reverie::report
