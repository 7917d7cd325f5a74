// depgraph/memory.h on hand-made events: a step's peak and what is live at it.
#include "depgraph/memory.h"

#include <vector>

#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

constexpr int64_t kMiB = 1 << 20;

struct Builder {
  Graph g;
  int64_t total = 0;
  // Appends an allocation (bytes > 0) or a free of allocation `of` (1-based
  // index, 0 = unknown), keeping the allocator's total.
  uint32_t Add(int64_t ns, int64_t bytes, Phase phase, uint32_t of = 0, LayerId layer = {}) {
    MemoryEvent m{.measured_ns = ns, .bytes = bytes};
    total += bytes;
    m.total_allocated = total;
    m.device = 0;
    m.phase = phase;
    m.alloc = of;
    m.has_addr = true;
    m.layer = layer;
    g.AddMemoryEvent(m);
    return static_cast<uint32_t>(g.memory_events().size());
  }
};

StepTime Step(int32_t i, int64_t start, int64_t end) {
  StepTime s;
  s.step = i;
  s.start_ns = start;
  s.end_ns = end;
  return s;
}

TEST(Memory, SplitsWhatIsLiveAtThePeak) {
  Builder b;
  b.total = 10 * kMiB;  // allocated before the trace (weights)
  const LayerId fc = b.g.AddLayer("fc", LayerId::Invalid());
  const uint32_t grad_prev = b.Add(5, 2 * kMiB, Phase::kBackward);  // before the step
  const uint32_t act = b.Add(110, 4 * kMiB, Phase::kForward, 0, fc);
  const uint32_t tmp = b.Add(120, 1 * kMiB, Phase::kForward, 0, fc);
  b.Add(130, -1 * kMiB, Phase::kForward, tmp);
  const uint32_t grad = b.Add(140, 3 * kMiB, Phase::kBackward);  // peak: 10+2+4+3 = 19
  b.Add(150, -2 * kMiB, Phase::kUpdate, grad_prev);  // zero_grad of the previous step
  b.Add(160, -4 * kMiB, Phase::kBackward, act);
  b.Add(170, -1 * kMiB, Phase::kUpdate, 0);  // from before the trace, freed in the step
  (void)grad;
  const std::vector<StepTime> steps = {Step(0, 100, 200)};
  const MemoryReport r = ComputeMemory(b.g, steps);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceMemory& d = r.devices[0];
  EXPECT_TRUE(d.absolute);
  EXPECT_EQ(d.peak, 19 * kMiB);
  ASSERT_EQ(d.steps.size(), 1u);
  const StepMemory& s = d.steps[0];
  EXPECT_EQ(s.events, 7);
  EXPECT_EQ(s.start_level, 12 * kMiB);
  EXPECT_EQ(s.peak_ns, 140);
  ASSERT_TRUE(s.matched);
  EXPECT_EQ(s.persistent, 9 * kMiB) << "10 before the trace, less the 1 freed in the step";
  EXPECT_EQ(s.from_earlier, 3 * kMiB) << "the previous gradients and the 1 from before the trace";
  EXPECT_EQ(s.kept, 3 * kMiB) << "this step's gradients outlive it";
  EXPECT_EQ(s.by_phase[static_cast<size_t>(Phase::kForward)], 4 * kMiB);
  EXPECT_EQ(s.by_phase[static_cast<size_t>(Phase::kBackward)], 0);
  EXPECT_EQ(s.persistent + s.from_earlier + s.kept + 4 * kMiB, s.peak) << "the parts sum to the peak";
  ASSERT_EQ(s.top_layers.size(), 1u);
  EXPECT_EQ(s.top_layers[0].first, "fc");
  EXPECT_EQ(s.top_layers[0].second, 4 * kMiB);
}

TEST(Memory, WithoutAddressesOnlyTheNetGrowthIsKnown) {
  Graph g;
  int64_t t = 0;
  for (int64_t bytes : {4 * kMiB, 2 * kMiB, -1 * kMiB, -5 * kMiB}) {
    MemoryEvent m{
        .measured_ns = t += 10, .bytes = bytes, .device = 0,
        .phase = bytes > 0 ? Phase::kForward : Phase::kBackward};
    g.AddMemoryEvent(m);
  }
  const std::vector<StepTime> steps = {Step(0, 0, 100)};
  const MemoryReport r = ComputeMemory(g, steps);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_FALSE(r.devices[0].absolute);
  const StepMemory& s = r.devices[0].steps[0];
  EXPECT_FALSE(s.matched);
  EXPECT_EQ(s.peak, 6 * kMiB) << "relative to the trace's start";
  EXPECT_EQ(s.persistent, -1);
  EXPECT_EQ(s.by_phase[static_cast<size_t>(Phase::kForward)], 6 * kMiB);
}

TEST(Memory, StepsWithoutEventsAndTheHostApart) {
  Graph g;
  MemoryEvent gpu{
      .measured_ns = 50, .bytes = 100, .total_allocated = 1000, .device = 1, .has_addr = true};
  g.AddMemoryEvent(gpu);
  MemoryEvent host = gpu;
  host.device = -1;
  host.measured_ns = 60;
  g.AddMemoryEvent(host);
  const std::vector<StepTime> steps = {Step(0, 0, 40), Step(1, 40, 100), Step(2, 100, 200)};
  const MemoryReport r = ComputeMemory(g, steps);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].device, 1);
  EXPECT_EQ(r.devices[1].device, -1) << "the host last";
  const DeviceMemory& d = r.devices[0];
  EXPECT_EQ(d.steps[0].peak, 900) << "before its first event: its total less its bytes";
  EXPECT_EQ(d.steps[1].peak, 1000);
  EXPECT_EQ(d.steps[2].peak, 1000) << "nothing happens: the level stays";
  EXPECT_EQ(d.steps[2].events, 0);
  EXPECT_EQ(d.steps[1].persistent + d.steps[1].kept, 1000);
  EXPECT_EQ(MemoryTimeline(g, 1).size(), 1u);
}

}  // namespace
}  // namespace reverie::depgraph
