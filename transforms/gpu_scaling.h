// File: transforms/gpu_scaling.h
//
// Carrying kernel times from the GPU a trace was recorded on (the origin) to
// another GPU (the destination) with Habitat's wave scaling (Yu et al.,
// USENIX ATC'21, §3.3 Eq. 1): the primitive behind scripts/retarget_gpu.lua.
// The script decides, per kernel class, how memory-bound a kernel is (gamma)
// and which peak bounds its math (fp32, tf32, fp16/bf16 tensor, fp8); this
// file does the arithmetic once per distinct launch geometry.
//
//   T_d = T_o * ceil(B/W_d)/ceil(B/W_o) * (D_o*W_d / (D_d*W_o))^g * (S_o/S_d)^(1-g)
//
// B: thread blocks; W: blocks in one wave (resident blocks per SM, from the
// occupancy limits, times SMs); D: memory bandwidth; g: gamma in [0, 1].
//
// One deliberate generalisation: Habitat's compute term is the clock ratio
// C_o/C_d, which assumes an SM does the same work per clock on both GPUs.
// That fails across generations (a Hopper SM does twice an Ampere SM's tensor
// math per clock), so S here is the per-SM peak (peak / SMs) for the kernel's
// math. It equals Habitat's term when work per SM per clock is equal, and the
// clock ratio is used when a peak is not given.
//
// Two cases follow Habitat's implementation rather than Eq. 1:
// - A kernel that fits in one wave on both GPUs is latency-bound: only the
//   compute term and the blocks-per-SM ratio apply, no bandwidth term.
// - A kernel without recorded geometry is scaled as a many-wave kernel with
//   equal occupancy: (D_o/D_d)^g * (SM_o*S_o / SM_d*S_d)^(1-g).
#ifndef REVERIE_TRANSFORMS_GPU_SCALING_H_
#define REVERIE_TRANSFORMS_GPU_SCALING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "transforms/selection.h"

namespace reverie::transforms {

// What wave scaling needs to know about one GPU. Occupancy limits left at 0
// do not limit.
struct GpuSpec {
  std::string name;
  int32_t sm_count = 0;
  int32_t max_threads_per_sm = 0;
  int32_t max_blocks_per_sm = 0;
  int32_t registers_per_sm = 0;
  int64_t shared_memory_per_sm_bytes = 0;
  double clock_mhz = 0;
  double memory_bandwidth_gbs = 0;  // GB/s
  double peak_tflops = 0;           // for the math being scaled; 0 = use the clock
};

// Thread blocks of `g` resident on one SM at once: the occupancy
// calculator's minimum over the thread, register (256-register warp
// allocation), shared-memory and block limits. At least 1, since a kernel
// that ran did fit. Unknown geometry gives 1.
int32_t BlocksPerSm(const GpuSpec& gpu, const depgraph::KernelGeometry& g);

// The factor T_d / T_o for one kernel. Requires ValidateGpuSpec() on both
// and gamma in [0, 1].
double WaveScaleFactor(const depgraph::KernelGeometry& g, const GpuSpec& origin,
                       const GpuSpec& dest, double gamma);

// kInvalidArgument naming the field when a spec lacks SMs, bandwidth, or
// both peak and clock.
absl::Status ValidateGpuSpec(const GpuSpec& gpu);

struct RetargetStats {
  int64_t kernels = 0;           // kernels scaled
  int64_t unknown_geometry = 0;  // of which scaled without launch geometry
  int64_t single_wave = 0;       // of which fit in one wave on both GPUs
  int64_t skipped = 0;           // selected tasks that are not kernels
  int64_t before_ns = 0;         // summed kernel time before / after
  int64_t after_ns = 0;
};

// Scales every live kernel of `s` from `origin` to `dest`. Other task kinds
// are counted in `skipped` and left alone (copies and collectives are not
// wave-scaled; the script scales them by link bandwidth). Nothing changes
// when the arguments are invalid.
absl::StatusOr<RetargetStats> RetargetKernels(depgraph::Graph& g, const Selection& s,
                                              const GpuSpec& origin, const GpuSpec& dest,
                                              double gamma);

// Scales the work of the selected kernels by `factor` on one GPU, as a
// batch-size change does to kernels whose grid grows with the batch: the
// kernel keeps its tile, so blocks' = ceil(blocks * factor) and the time
// scales with whole waves, ceil(blocks'/W) / ceil(blocks/W) (W: blocks in one
// wave on `gpu`); a kernel that stays within one wave keeps its time. A
// kernel without recorded geometry scales linearly. Other task kinds are
// counted in `skipped`. factor > 0.
absl::StatusOr<RetargetStats> ScaleWork(depgraph::Graph& g, const Selection& s,
                                        const GpuSpec& gpu, double factor);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_GPU_SCALING_H_
