// File: transforms/cost_model_internal.h
//
// Internal to transforms/cost_model*.cc: the pieces calibration and
// retiming share. Not a public header.
#ifndef REVERIE_TRANSFORMS_COST_MODEL_INTERNAL_H_
#define REVERIE_TRANSFORMS_COST_MODEL_INTERNAL_H_

#include "depgraph/graph.h"
#include "depgraph/kernel_class.h"
#include "hardware/gpu_spec.h"

namespace reverie::transforms::internal {

// The share of `gpu` a kernel's grid can use, with its blocks x
// `block_factor` (a batch change that keeps the tile): a grid of fewer
// blocks than SMs uses that fraction of them; one of up to a wave (W =
// resident blocks per SM x SMs, from the occupancy limits) uses all; a
// larger one idles the rest of its last wave (Habitat's wave quantization).
// 1 without recorded geometry.
double GridUse(const depgraph::KernelGeometry& geo, const hardware::GpuSpec& gpu, double block_factor);

// The efficiency ceiling a class's curve assumes where the trace cannot
// tell its slope (cost_model.h: kComputeCeiling, kMemoryCeiling).
double PriorCeiling(depgraph::KernelClass c);

// GEMM, convolution and attention kernels: bound by compute peaks.
inline bool IsComputeClass(depgraph::KernelClass c) {
  return c == depgraph::KernelClass::kGemm || c == depgraph::KernelClass::kConv ||
         c == depgraph::KernelClass::kAttention;
}

}  // namespace reverie::transforms::internal

#endif  // REVERIE_TRANSFORMS_COST_MODEL_INTERNAL_H_
