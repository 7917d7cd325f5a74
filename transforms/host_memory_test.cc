// Batch frees on a hand-built graph: which host frees count (the size of a
// host-to-device copy of their step, in a live stretch) and the line their
// stretches give.
#include "transforms/host_memory.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace reverie::transforms {
namespace {

using depgraph::Graph;
using depgraph::MemoryEvent;
using depgraph::TaskId;
using depgraph::TaskKind;
using depgraph::TaskSpec;

constexpr double kFixedNs = 6000;
constexpr double kNsPerByte = 0.17;

struct Built {
  Graph g;
  std::vector<TaskId> stretches;  // per step: the framework time the frees fall in
};

// Two steps; each copies a 131,584-byte input and a 64-byte label to the
// GPU, then frees both host buffers after fixed + bytes * rate of framework
// time, and frees 4 bytes nobody copied.
Built Build() {
  Built b;
  Graph& g = b.g;
  const auto cpu = g.AddResource({depgraph::ResourceKind::kCpuThread, 1, 100, -1, "thread 100", true});
  const auto gpu = g.AddResource({depgraph::ResourceKind::kGpuStream, 1, 7, 0, "stream 7 (gpu 0)", true});
  int64_t now = 0;
  for (int32_t step = 0; step < 2; ++step) {
    g.AddStep({"ProfilerStep#0", 0, 0});
    for (int64_t bytes : {131584, 64}) {
      TaskSpec copy{
          .kind = TaskKind::kMemcpy, .name = "Memcpy HtoD (Pageable -> Device)", .resource = gpu,
          .duration_ns = 1000, .step = step, .bytes = bytes};
      g.AppendTask(copy);
      TaskSpec fw{.kind = TaskKind::kCpuWork, .name = "[framework]", .resource = cpu};
      const int64_t stretch = static_cast<int64_t>(kFixedNs + kNsPerByte * static_cast<double>(bytes));
      fw.duration_ns = stretch + 500;
      fw.step = step;
      fw.measured_start_ns = now;
      const TaskId t = g.AppendTask(fw);
      b.stretches.push_back(t);
      MemoryEvent m{
          .measured_ns = now + stretch, .bytes = -bytes, .anchor = t, .anchor_offset_ns = stretch};
      g.AddMemoryEvent(m);
      MemoryEvent other = m;
      other.bytes = -4;
      g.AddMemoryEvent(other);
      now += fw.duration_ns;
    }
  }
  return b;
}

TEST(HostMemoryTest, FreesOfCopiedBytesAreBatchFrees) {
  const Built b = Build();
  const std::vector<BatchFree> frees = BatchFrees(b.g);
  ASSERT_EQ(frees.size(), 4u);  // the 4-byte frees match no copy
  EXPECT_EQ(frees[0].bytes, 131584);
  EXPECT_EQ(frees[0].task, b.stretches[0]);
  EXPECT_EQ(frees[1].bytes, 64);
  EXPECT_EQ(frees[3].step, 1);
}

TEST(HostMemoryTest, TheFitRecoversTheLine) {
  const Built b = Build();
  const HostFreeRate r = FitHostFreeRate(BatchFrees(b.g));
  ASSERT_TRUE(r.calibrated);
  EXPECT_EQ(r.samples, 4);
  EXPECT_NEAR(r.fixed_ns, kFixedNs, 2);
  EXPECT_NEAR(r.ns_per_byte, kNsPerByte, 1e-4);
  // Stretches are whole nanoseconds: within 0.01% at 129x the largest.
  EXPECT_NEAR(r.TimeNs(16908544), kFixedNs + kNsPerByte * 16908544, 300);
}

TEST(HostMemoryTest, AStretchThatHeldOtherWorkDoesNotMoveTheFit) {
  const Built b = Build();
  std::vector<BatchFree> frees = BatchFrees(b.g);
  BatchFree slow = frees[0];
  slow.stretch_ns *= 3;  // a third free of the input size, held up
  frees.push_back(slow);
  const HostFreeRate r = FitHostFreeRate(frees);
  ASSERT_TRUE(r.calibrated);
  EXPECT_EQ(r.samples, 5);
  EXPECT_EQ(r.sizes, 2);
  EXPECT_NEAR(r.ns_per_byte, kNsPerByte, 1e-4);
}

TEST(HostMemoryTest, OneSizeOrNoFreesIsNotCalibrated) {
  Built b = Build();
  std::vector<BatchFree> frees = BatchFrees(b.g);
  std::vector<BatchFree> inputs = {frees[0], frees[2]};  // 131,584 bytes twice
  EXPECT_FALSE(FitHostFreeRate(inputs).calibrated);
  EXPECT_EQ(FitHostFreeRate(inputs).TimeNs(1e6), 0);
  EXPECT_FALSE(FitHostFreeRate({}).calibrated);
}

TEST(HostMemoryTest, ARemovedStretchOrCopyDropsTheFree) {
  Built b = Build();
  b.g.RemoveTask(b.stretches[0]);
  EXPECT_EQ(BatchFrees(b.g).size(), 3u);
}

}  // namespace
}  // namespace reverie::transforms
