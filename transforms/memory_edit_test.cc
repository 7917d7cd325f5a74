// transforms/memory_edit.h on a hand-built step: an allocation's producer
// and free are found, a stash releases it after one task and allocates it
// again at another (the replayed peak drops), resizes carry the frees, and
// bad arguments are refused.
#include "transforms/memory_edit.h"

#include <utility>
#include <vector>

#include "depgraph/memory_replay.h"
#include "depgraph/simulator.h"
#include "gtest/gtest.h"

namespace reverie::transforms {
namespace {

using depgraph::EdgeKind;
using depgraph::Graph;
using depgraph::MemoryEvent;
using depgraph::Phase;
using depgraph::ResourceKind;
using depgraph::TaskId;
using depgraph::TaskKind;
using depgraph::TaskSpec;

struct Built {
  Graph g;
  TaskId fwd_op, launch, kernel, middle, bwd_op, bwd_kernel;
};

// Thread: fwd_op (100 ns, allocates A = 1000 B 10 ns in) and its launch of
// `kernel` (1 ns); `middle` (100 ns, a 500 B temporary from 50 to 90 ns
// in); bwd_op (100 ns, frees A 20 ns in) and its launch of bwd_kernel.
Built Build() {
  Built x;
  Graph& g = x.g;
  const auto cpu = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "thread 1", true});
  const auto stream = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7 (gpu 0)", true});
  const depgraph::OpId conv = g.AddOp("aten::conv2d", depgraph::OpId(), 100);
  const depgraph::OpId conv_bwd = g.AddOp("ConvolutionBackward0", depgraph::OpId(), 100);
  auto task = [&](TaskKind kind, const char* name, depgraph::ResourceId r, int64_t ns, Phase p,
                  depgraph::OpId op) {
    TaskSpec s{
        .kind = kind, .name = name, .resource = r, .duration_ns = ns, .phase = p, .step = 0,
        .op = op};
    return g.AppendTask(s);
  };
  x.fwd_op = task(TaskKind::kCpuWork, "aten::conv2d", cpu, 100, Phase::kForward, conv);
  x.launch = task(TaskKind::kCpuApi, "cudaLaunchKernel", cpu, 10, Phase::kForward, conv);
  x.kernel = task(TaskKind::kKernel, "conv_fwd", stream, 1, Phase::kForward, depgraph::OpId());
  g.AddEdge(x.launch, x.kernel, EdgeKind::kLaunch);
  x.middle = task(TaskKind::kCpuWork, "python", cpu, 100, Phase::kForward, depgraph::OpId());
  x.bwd_op = task(TaskKind::kCpuWork, "ConvolutionBackward0", cpu, 100, Phase::kBackward, conv_bwd);
  const TaskId bwd_launch = task(TaskKind::kCpuApi, "cudaLaunchKernel", cpu, 10, Phase::kBackward, conv_bwd);
  x.bwd_kernel = task(TaskKind::kKernel, "conv_bwd", stream, 1, Phase::kBackward, depgraph::OpId());
  g.AddEdge(bwd_launch, x.bwd_kernel, EdgeKind::kLaunch);
  auto add = [&](int64_t ns, int64_t bytes, TaskId anchor, int64_t offset, uint32_t of, Phase p) {
    MemoryEvent m{
        .measured_ns = ns, .bytes = bytes, .device = 0, .phase = p, .alloc = of, .has_addr = true,
        .anchor = anchor, .anchor_offset_ns = offset};
    g.AddMemoryEvent(m);
  };
  add(10, 1000, x.fwd_op, 10, 0, Phase::kForward);
  add(160, 500, x.middle, 50, 0, Phase::kForward);
  add(200, -500, x.middle, 90, 2, Phase::kForward);
  add(230, -1000, x.bwd_op, 20, 1, Phase::kBackward);
  return x;
}

int64_t Peak(const Graph& g) {
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g);
  EXPECT_TRUE(sim.ok()) << sim.status();
  const std::vector<depgraph::DevicePeak> p = depgraph::ReplayMemory(g, sim->start_ns, sim->end_ns);
  EXPECT_EQ(p.size(), 1u);
  return p.empty() ? -1 : p[0].peak;
}

TEST(MemoryEdit, FindsTheProducerAndTheFreeOfASavedTensor) {
  const Built x = Build();
  const std::vector<Allocation> all = Allocations(x.g);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].index, 0u);
  EXPECT_EQ(all[0].producer, x.kernel);
  EXPECT_EQ(all[0].freed_at, x.bwd_op);
  EXPECT_EQ(all[0].freed_in, Phase::kBackward);
  EXPECT_TRUE(all[0].saved());
  // The temporary: framework time launches nothing, freed in the forward.
  EXPECT_FALSE(all[1].producer.valid());
  EXPECT_FALSE(all[1].saved());
}

TEST(MemoryEdit, AStashFreesTheTensorBetweenReleaseAndRestore) {
  Built x = Build();
  EXPECT_EQ(Peak(x.g), 1500);
  {
    // Reached by the forward's temporary: the phase a saver must act in.
    absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(x.g);
    ASSERT_TRUE(sim.ok());
    EXPECT_EQ(depgraph::ReplayMemory(x.g, sim->start_ns, sim->end_ns)[0].peak_phase, Phase::kForward);
  }
  ASSERT_TRUE(Stash(x.g, 0, x.kernel, x.bwd_op, 0).ok());
  // A goes when the kernel ends, before the temporary; back in bwd_op.
  EXPECT_EQ(Peak(x.g), 1000);
  // Its new allocation is freed where the trace freed it: the level ends at 0.
  int64_t sum = 0;
  for (const MemoryEvent& m : x.g.memory_events()) sum += m.bytes;
  EXPECT_EQ(sum, 0);
}

TEST(MemoryEdit, AStandInIsHeldWhileStashed) {
  Built x = Build();
  ASSERT_TRUE(Stash(x.g, 0, x.kernel, x.bwd_op, 800).ok());
  EXPECT_EQ(Peak(x.g), 1300);  // the 800 B stand-in and the temporary
}

TEST(MemoryEdit, ResizeCarriesTheFree) {
  Built x = Build();
  ASSERT_TRUE(ResizeAllocation(x.g, 0, 300).ok());
  EXPECT_EQ(x.g.memory_events()[3].bytes, -300);
  EXPECT_EQ(Peak(x.g), 800);
}

// Many at once equal one at a time; a bad entry (a free, a size of 0, an
// allocation named twice) changes nothing.
TEST(MemoryEdit, ResizeManyAtOnceIsEachResizedAlone) {
  Built one = Build();
  ASSERT_TRUE(ResizeAllocation(one.g, 0, 300).ok());
  ASSERT_TRUE(ResizeAllocation(one.g, 1, 2000).ok());
  Built many = Build();
  const std::vector<std::pair<uint32_t, int64_t>> both{{1, 2000}, {0, 300}};
  ASSERT_TRUE(ResizeAllocations(many.g, both).ok());
  ASSERT_EQ(many.g.memory_events().size(), one.g.memory_events().size());
  for (size_t i = 0; i < one.g.memory_events().size(); ++i) {
    EXPECT_EQ(many.g.memory_events()[i].bytes, one.g.memory_events()[i].bytes) << i;
  }
  EXPECT_EQ(many.g.memory_events()[2].bytes, -2000);
  for (const std::vector<std::pair<uint32_t, int64_t>>& bad :
       std::vector<std::vector<std::pair<uint32_t, int64_t>>>{
           {{0, 300}, {3, 10}}, {{0, 300}, {1, 0}}, {{0, 300}, {0, 400}}}) {
    Built x = Build();
    EXPECT_EQ(ResizeAllocations(x.g, bad).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(x.g.memory_events()[0].bytes, 1000);
    EXPECT_EQ(x.g.memory_events()[3].bytes, -1000);
  }
}

TEST(MemoryEdit, AllocateAddsATensorUntilItsFree) {
  Built x = Build();
  absl::StatusOr<uint32_t> k = Allocate(x.g, 0, 700, x.middle, x.middle);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(*k, 4u);
  EXPECT_EQ(Peak(x.g), 2200);  // A, the temporary and the new 700 B in `middle`
  EXPECT_FALSE(Allocate(x.g, 0, 0, x.middle, x.middle).ok());
}

TEST(MemoryEdit, RefusesWhatIsNotALiveAllocation) {
  Built x = Build();
  EXPECT_EQ(Stash(x.g, 3, x.kernel, x.bwd_op, 0).code(), absl::StatusCode::kInvalidArgument);  // a free
  EXPECT_EQ(Stash(x.g, 99, x.kernel, x.bwd_op, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Stash(x.g, 0, x.kernel, x.bwd_op, -1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResizeAllocation(x.g, 0, 0).code(), absl::StatusCode::kInvalidArgument);
  x.g.RemoveTask(x.middle);
  EXPECT_EQ(Stash(x.g, 0, x.middle, x.bwd_op, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(x.g.memory_events().size(), 4u);  // nothing appended by a refusal
}

}  // namespace
}  // namespace reverie::transforms
