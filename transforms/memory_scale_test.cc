// transforms/memory_scale.h on a hand-built graph: which allocations carry
// the batch (the size of a recorded non-parameter input) and what they
// become.
#include "transforms/memory_scale.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transforms/memory_edit.h"

namespace reverie::transforms {
namespace {

using depgraph::Graph;
using depgraph::OpId;
using depgraph::Phase;

hardware::OpArg Tensor(std::vector<int64_t> dims) { return {"float", {std::move(dims)}, "", false}; }

// An addmm (bias [256], input [16, 2056], weight [2056, 256]) launching one
// forward kernel; on GPU 0 the allocations of an input-sized tensor
// (131,584 B) in the forward and in the optimizer step, a weight-sized
// gradient (2,105,344 B), cuBLAS's 1 MiB workspace, and the input's free.
Graph Build() {
  Graph g;
  const auto cpu = g.AddResource({depgraph::ResourceKind::kCpuThread, 1, 1, -1, "thread 1", true});
  const auto gpu = g.AddResource({depgraph::ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
  const OpId op = g.AddOp("aten::addmm", OpId(), 1000);
  g.set_op_inputs(op, {Tensor({256}), Tensor({16, 2056}), Tensor({2056, 256})});
  depgraph::TaskSpec call{.kind = depgraph::TaskKind::kCpuApi,
                          .name = "cudaLaunchKernel",
                          .resource = cpu,
                          .duration_ns = 4000,
                          .phase = Phase::kForward};
  const depgraph::TaskId c = g.AppendTask(call);
  g.set_op(c, op);
  depgraph::TaskSpec k{.kind = depgraph::TaskKind::kKernel,
                       .name = "ampere_sgemm_32x32_sliced1x4_tn",
                       .resource = gpu,
                       .duration_ns = 9000,
                       .phase = Phase::kForward};
  g.AddEdge(c, g.AppendTask(k), depgraph::EdgeKind::kLaunch);
  auto add = [&](int64_t bytes, Phase phase, uint32_t of = 0) {
    depgraph::MemoryEvent m{.measured_ns = static_cast<int64_t>(g.memory_events().size()),
                            .bytes = bytes,
                            .device = 0,
                            .phase = phase,
                            .alloc = of,
                            .anchor = c};
    g.AddMemoryEvent(m);
  };
  add(131584, Phase::kForward);
  add(2105344, Phase::kBackward);
  add(1 << 20, Phase::kForward);
  add(131584, Phase::kUpdate);
  add(-131584, Phase::kBackward, 1);
  return g;
}

CostModel Model() {
  CostModel m;
  m.parameter_shapes = {{256}, {256, 2056}, {2056, 256}};
  return m;
}

TEST(MemoryScaleTest, TheBatchTensorsGrowAndTheRestKeepTheirSize) {
  Graph g = Build();
  const MemoryScaleStats st = ScaleBatchMemory(g, Graph(g), Model(), 1, 128.5);
  EXPECT_EQ(st.scaled, 1);
  EXPECT_EQ(st.kept, 3) << "the weight gradient, the workspace, the optimizer's tensor";
  EXPECT_EQ(st.batch_sizes, 1);
  // 16 x 2056 x 4 x 128.5 = 16,908,544 B, rounded up to 512-byte blocks:
  // 16,908,800 B, what the batch-2056 trace records for that tensor.
  EXPECT_EQ(g.memory_events()[0].bytes, 16908800);
  EXPECT_EQ(g.memory_events()[4].bytes, -16908800) << "its free follows";
  EXPECT_EQ(g.memory_events()[1].bytes, 2105344);
  EXPECT_EQ(g.memory_events()[2].bytes, 1 << 20);
  EXPECT_EQ(g.memory_events()[3].bytes, 131584);
  EXPECT_EQ(st.bytes_after, 16908800);
}

TEST(MemoryScaleTest, SizesRoundUpToTheAllocatorsBlock) {
  Graph g = Build();
  ScaleBatchMemory(g, Graph(g), Model(), 1, 1.0 / 3);
  // 131,584 / 3 = 43,861.3 B: 86 blocks of 512.
  EXPECT_EQ(g.memory_events()[0].bytes, 86 * kAllocatorBlock);
}

// Without recorded shapes nothing names the batch's tensors: before, a
// batch x2 kept every size, and `predict` said the trace's peak "fits"
// (HTA's df_index_resolver: 6.17 GiB for batch x2). Now the allocations the
// forward and backward freed again grow, and the graph says it is an
// estimate; what lives past them keeps its size.
TEST(MemoryScaleTest, WithoutShapesTheComputesTransientsAreAnEstimate) {
  Graph g = Build();
  g.set_op_inputs(OpId(0), {});
  const MemoryScaleStats st = ScaleBatchMemory(g, Graph(g), Model(), 1, 2);
  EXPECT_TRUE(st.estimated);
  EXPECT_EQ(st.batch_sizes, 0);
  EXPECT_EQ(st.scaled, 1) << "the forward's tensor the backward frees";
  EXPECT_EQ(st.kept, 3) << "never freed in the trace: the gradient, workspace, optimizer's tensor";
  EXPECT_EQ(g.memory_events()[0].bytes, 2 * 131584);
  EXPECT_EQ(g.memory_events()[4].bytes, -2 * 131584);
  EXPECT_THAT(std::string(g.memory_estimate()), ::testing::HasSubstr("record_shapes"));
  EXPECT_TRUE(g.memory_unknown().empty());
}

// Neither shapes nor a free tied to its allocation (the 2021 schema without
// shapes): nothing is resized and the peak is said not to be predicted.
TEST(MemoryScaleTest, WithoutShapesOrTiedFreesThePeakIsNotPredicted) {
  Graph h;
  {
    const auto cpu =
        h.AddResource({depgraph::ResourceKind::kCpuThread, 1, 1, -1, "thread 1", true});
    const depgraph::TaskId c = h.AppendTask({.kind = depgraph::TaskKind::kCpuWork,
                                             .name = "op",
                                             .resource = cpu,
                                             .duration_ns = 10,
                                             .phase = Phase::kForward});
    h.AddMemoryEvent(
        {.measured_ns = 0, .bytes = 4096, .device = 0, .phase = Phase::kForward, .anchor = c});
    h.AddMemoryEvent(
        {.measured_ns = 1, .bytes = -4096, .device = 0, .phase = Phase::kBackward, .anchor = c});
  }
  const MemoryScaleStats st = ScaleBatchMemory(h, Graph(h), Model(), 1, 2);
  EXPECT_TRUE(st.estimated);
  EXPECT_EQ(st.scaled, 0);
  EXPECT_EQ(h.memory_events()[0].bytes, 4096);
  EXPECT_TRUE(h.memory_estimate().empty());
  EXPECT_THAT(std::string(h.memory_unknown()),
              ::testing::HasSubstr("nothing tells the batch's tensors"));
}

// amp.lua's half copy of an input is a batch tensor a script made: a later
// batch change resizes it from the size it was made with (the batch it was
// made at), so changes there and back give it back; a copy of a weight
// (not `batch`) keeps its size.
TEST(MemoryScaleTest, BatchTensorsAScriptMadeFollowTheBatch) {
  const Graph measured = Build();
  Graph g = measured;
  ScaleBatchMemory(g, measured, Model(), 1, 2);  // a batch change before the script's
  g.set_batch_factor(2);
  const depgraph::TaskId call(0), kernel(1);
  absl::StatusOr<uint32_t> input = Allocate(g, 0, 66048, call, kernel, /*batch=*/true);
  absl::StatusOr<uint32_t> weight = Allocate(g, 0, 4096, call, kernel);
  ASSERT_TRUE(input.ok() && weight.ok());
  const MemoryScaleStats st = ScaleBatchMemory(g, measured, Model(), 2, 6);
  EXPECT_EQ(st.made_by_scripts, 1);
  EXPECT_EQ(st.scaled, 2) << "the recorded input and the script's copy";
  EXPECT_EQ(g.memory_events()[*input].bytes, 3 * 66048);
  EXPECT_EQ(g.memory_events()[*input + 1].bytes, -3 * 66048) << "its free follows";
  EXPECT_EQ(g.memory_events()[*weight].bytes, 4096);
  // x1/3 then back: from the size it was made with, not the rounded one.
  ScaleBatchMemory(g, measured, Model(), 6, 2.0 / 7);
  ScaleBatchMemory(g, measured, Model(), 2.0 / 7, 2);
  EXPECT_EQ(g.memory_events()[*input].bytes, 66048);
  EXPECT_EQ(g.memory_events()[0].bytes, 2 * 131584);
}

// Checkpointing then a batch change: a stash's new allocation of a batch
// tensor (its recomputation) takes the tensor's new size, its stand-in (an
// encoding of it) grows in proportion; before, both kept the old batch's
// size, so checkpointing then batch x2 under-counted the recomputed
// activations.
TEST(MemoryScaleTest, AStashsCopiesFollowTheTensorTheyStandFor) {
  const Graph measured = Build();
  Graph g = measured;
  const depgraph::TaskId call(0), kernel(1);
  ASSERT_TRUE(Stash(g, 0, kernel, call, 65536).ok());
  ASSERT_EQ(g.memory_events().size(), 9u) << "stand-in and copy, each with its free";
  const MemoryScaleStats st = ScaleBatchMemory(g, measured, Model(), 1, 2);
  EXPECT_EQ(st.made_by_scripts, 2);
  EXPECT_EQ(g.memory_events()[0].bytes, 263168);
  EXPECT_EQ(g.memory_events()[5].bytes, 131072) << "the stand-in, in proportion";
  EXPECT_EQ(g.memory_events()[6].bytes, -131072);
  EXPECT_EQ(g.memory_events()[7].bytes, 263168) << "the tensor allocated again";
  EXPECT_EQ(g.memory_events()[8].bytes, -263168);
  ScaleBatchMemory(g, measured, Model(), 2, 1);
  EXPECT_EQ(g.memory_events()[5].bytes, 65536);
  EXPECT_EQ(g.memory_events()[7].bytes, 131584);
}

}  // namespace
}  // namespace reverie::transforms
