// File: hardware/gpu_spec.h
//
// The GPUs reverie knows, as data with a public source per row: SMs (CUs),
// boost clock, dense peak FLOP/s per math type with and without tensor
// (matrix) cores, memory bandwidth, size and L2, the host link (PCIe
// generation and lanes) and the scale-up link (NVLink / Infinity Fabric),
// plus the occupancy limits wave quantization needs. The cost model
// (transforms/cost_model.h) reads peaks and bandwidths from here; nothing
// else in reverie names a GPU's figure.
//
// A trace's GPU is found by its device name and its deviceProperties
// (MatchGpu): several rows share a name ("A100" is four parts), and some
// traces report a board name ("NVIDIA PG509-210") or none ("AMD Radeon
// Graphics"), so SMs, memory size and compute capability decide too.
#ifndef REVERIE_HARDWARE_GPU_SPEC_H_
#define REVERIE_HARDWARE_GPU_SPEC_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/types/span.h"
#include "hardware/math_type.h"

namespace reverie::hardware {

enum class Vendor : uint8_t { kNvidia, kAmd };
std::string_view VendorName(Vendor v);

// Per-SM (per-CU) limits of the CUDA occupancy calculator; 0 = no limit
// modelled (AMD's VGPRs are per SIMD lane, not an SM-wide file).
struct Occupancy {
  int32_t max_threads_per_sm = 0;
  int32_t max_blocks_per_sm = 0;
  int32_t registers_per_sm = 0;
  int32_t shared_memory_per_sm_kb = 0;
};

// One GPU as its vendor publishes it. Peaks are dense (no 2:4 sparsity), in
// TFLOP/s at the boost clock; 0 means the unit does not run that math.
// Tensor-core fp16/bf16/fp8 figures are with fp32 accumulation (what
// autocast uses; GeForce parts run fp16 accumulation twice as fast).
struct GpuSpec {
  std::string_view key;   // "H100-SXM": what scripts name (--set to=H100-SXM)
  std::string_view name;  // "NVIDIA H100 SXM5 80GB"
  Vendor vendor = Vendor::kNvidia;
  std::string_view arch;  // "Hopper sm_90"
  int32_t cc_major = 0;   // CUDA compute capability; AMD: gfx major.minor as HIP reports it
  int32_t cc_minor = 0;
  int32_t sm_count = 0;   // SMs (NVIDIA) or CUs (AMD)
  double boost_clock_mhz = 0;
  std::array<double, kMathCount> vector_tflops{};  // CUDA cores / SIMD units
  std::array<double, kMathCount> matrix_tflops{};  // tensor cores / matrix cores
  double memory_bandwidth_gbs = 0;  // peak DRAM (HBM / GDDR) bandwidth
  double memory_gb = 0;             // as the vendor quotes it (about GiB)
  double l2_mb = 0;                 // 0 = not published
  int32_t pcie_gen = 0;
  int32_t pcie_lanes = 0;
  double scaleup_gbs = 0;           // NVLink / Infinity Fabric per GPU, both directions, GB/s
  std::string_view scaleup;         // "NVLink 4", "Infinity Fabric", "" when none
  Occupancy occupancy;
  // Name patterns: each is one or more tokens that must appear in a row in
  // the device name's tokens (lower case; '-', '_' and spaces split them),
  // so "a10" never matches "A100".
  std::array<std::string_view, 4> match{};
  std::string_view source;  // the vendor datasheet / whitepaper the figures are from
  std::string_view note;    // figures derived rather than read, and how
};

// The peak of `math` on `gpu` (TFLOP/s), on matrix units when `matrix` and
// the part has them for that math, else on vector units; 0 when neither
// runs it. See EffectiveMath for what a part without the math does.
double PeakTflops(const GpuSpec& gpu, Math math, bool matrix);

// What a GPU runs math `m` as when it lacks it: fp8 -> bf16/fp16 matrix,
// bf16 -> fp16 (or fp32 without bf16 units: Volta, Turing), tf32 -> fp32
// vector; fp16 matrix on a part without tensor cores -> fp16 vector.
// `matrix` is updated to the units that run it.
Math EffectiveMath(const GpuSpec& gpu, Math m, bool* matrix);

// Host link per direction, GB/s: lanes x the generation's transfer rate x
// its line encoding (PCIe 1-2 8b/10b, 3-5 128b/130b, 6 FLIT 242/256).
double PcieGbs(int32_t gen, int32_t lanes);
inline double HostLinkGbs(const GpuSpec& g) { return PcieGbs(g.pcie_gen, g.pcie_lanes); }

// A kernel's roofline time in ns: its work at the part's peaks,
// max(flops / peak(math, matrix), bytes / memory bandwidth), on the units
// EffectiveMath says run the math. `compute_bound` (when non-null) says
// which term bound it.
double RooflineNs(const GpuSpec& gpu, double flops, double bytes, Math math, bool matrix,
                  bool* compute_bound = nullptr);

// Every row, in table order (more specific rows first where names overlap).
absl::Span<const GpuSpec> GpuTable();
// The row whose key equals `key` (case-insensitive), or nullptr.
const GpuSpec* FindGpu(std::string_view key);
// Every key, comma separated (for messages).
std::string GpuKeys();

// What a trace says about its GPU (proto Device / Kineto deviceProperties);
// zero means not recorded.
struct DeviceFacts {
  std::string_view name;
  std::string_view vendor;  // "nvidia", "amd" or ""
  int32_t sm_count = 0;
  int32_t cc_major = 0;
  int32_t cc_minor = 0;
  int64_t total_memory_bytes = 0;
};

struct GpuMatch {
  const GpuSpec* spec = nullptr;  // nullptr: nothing matched
  std::string how;                // "device name 'NVIDIA PG509-210' (pg509 210), 108 SMs, 79 GiB"
};

// The row a trace's GPU is: rows whose patterns match the name, narrowed by
// SM count, memory size (within 12%) and compute capability when recorded;
// without a name match, the rows of the vendor whose SMs, memory and
// compute capability all agree. `how` says which facts decided.
GpuMatch MatchGpu(const DeviceFacts& d);

}  // namespace reverie::hardware

#endif  // REVERIE_HARDWARE_GPU_SPEC_H_
