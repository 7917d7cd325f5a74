// File: transforms/test_graphs.h
//
// Small hand-built graphs shaped like a training trace, for the transforms
// and Lua tests (test-only; not part of reverie_transforms).
#ifndef REVERIE_TRANSFORMS_TEST_GRAPHS_H_
#define REVERIE_TRANSFORMS_TEST_GRAPHS_H_

#include <cstdint>

#include "depgraph/graph.h"

namespace reverie::transforms::testing {

// One CPU thread (resource 0) and one GPU stream (resource 1). Per step:
//   forward : conv (100us, "volta_scudnn_128x64_relu_interior_nn_v1", layer
//             layer1.0.conv1), relu (20us, elementwise, layer1.0.relu),
//             fc gemm (50us, "volta_sgemm_64x64_nn", fc)
//   backward: fc gemm (60us, "volta_sgemm_64x64_nt", fc), bn (30us,
//             "cudnn::bn_bw_1C11_kernel_new", layer1.0.bn1), conv wgrad
//             (120us, "wgrad_alg0_engine", layer1.0.conv1)
//   update  : 3 x "multi_tensor_apply_kernel" (10us), no layer
//   then a "cudaStreamSynchronize" (2us) with a sync edge from the last
//   update kernel.
// Every kernel has a "cudaLaunchKernel" call (5us, gap 2us) with a launch
// edge. Layers: layer1 > layer1.0 > {conv1, relu, bn1}, and fc.
depgraph::Graph MakeTrainingGraph(int steps = 2);

// One thread and one stream as MakeTrainingGraph, per step `layers`
// x (gemm "volta_sgemm_128x64_nn" 50us, relu 20us) forward, their mirrors
// (relu_backward 20us, gemm "volta_sgemm_128x64_nt" 60us) in reverse in the
// backward, one update kernel (10us) and a synchronize.
depgraph::Graph MakeDeepTrainingGraph(int layers, int steps = 2);

// Adds what a profile_memory trace records to a graph of the two above on
// GPU 0: 4 MiB of weights allocated before the first step and never freed;
// per step, each forward launch call allocates its kernel's 1 MiB output,
// saved for the backward and freed by the backward launch that mirrors it
// (the last forward output by the first backward launch, and so on). The
// peak, 4 MiB + 1 MiB per forward kernel, is at each step's first backward
// launch.
void AddActivationMemory(depgraph::Graph& g);

// `n` tasks alternating launch call / kernel on one thread and one stream
// (n/2 of each), for size-sensitive tests. Kernel names cycle through a few
// GEMM / conv / elementwise names.
depgraph::Graph MakeLargeGraph(int64_t n);

}  // namespace reverie::transforms::testing

#endif  // REVERIE_TRANSFORMS_TEST_GRAPHS_H_
