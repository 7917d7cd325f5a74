#include "transforms/gpu_scaling.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "base/sv.h"

namespace reverie::transforms {
namespace {

using depgraph::Graph;
using depgraph::KernelGeometry;
using depgraph::TaskId;
using depgraph::TaskKind;

constexpr int64_t kWarpSize = 32;
constexpr int64_t kRegisterAllocationUnit = 256;  // registers per warp, all CUDA GPUs since sm_30

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Work one SM does per unit time for the kernel's math: peak / SMs, or the
// clock when no peak is given for both GPUs.
double PerSmThroughput(const GpuSpec& gpu, bool use_peak) {
  return use_peak ? gpu.peak_tflops / gpu.sm_count : gpu.clock_mhz;
}

}  // namespace

int32_t BlocksPerSm(const GpuSpec& gpu, const KernelGeometry& g) {
  if (!g.known()) return 1;
  int64_t limit = std::numeric_limits<int32_t>::max();
  const int64_t warps_per_block = CeilDiv(g.threads_per_block, kWarpSize);
  if (gpu.max_threads_per_sm > 0) {
    limit = std::min<int64_t>(limit, (gpu.max_threads_per_sm / kWarpSize) / warps_per_block);
  }
  if (gpu.registers_per_sm > 0 && g.registers_per_thread > 0) {
    const int64_t per_warp =
        CeilDiv(g.registers_per_thread * kWarpSize, kRegisterAllocationUnit) * kRegisterAllocationUnit;
    limit = std::min<int64_t>(limit, gpu.registers_per_sm / (per_warp * warps_per_block));
  }
  if (gpu.shared_memory_per_sm_bytes > 0 && g.shared_memory_bytes > 0) {
    limit = std::min<int64_t>(limit, gpu.shared_memory_per_sm_bytes / g.shared_memory_bytes);
  }
  if (gpu.max_blocks_per_sm > 0) limit = std::min<int64_t>(limit, gpu.max_blocks_per_sm);
  return static_cast<int32_t>(std::max<int64_t>(limit, 1));
}

absl::Status ValidateGpuSpec(const GpuSpec& gpu) {
  const std::string who = gpu.name.empty() ? "gpu" : absl::StrCat("gpu '", Sv(gpu.name), "'");
  if (gpu.sm_count <= 0) return absl::InvalidArgumentError(absl::StrCat(who, ": sm_count must be > 0"));
  if (!(gpu.memory_bandwidth_gbs > 0) || !std::isfinite(gpu.memory_bandwidth_gbs)) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": memory_bandwidth_gbs must be > 0"));
  }
  const bool peak_ok = gpu.peak_tflops > 0 && std::isfinite(gpu.peak_tflops);
  const bool clock_ok = gpu.clock_mhz > 0 && std::isfinite(gpu.clock_mhz);
  if (!peak_ok && !clock_ok) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": needs a peak (tflops) or clock_mhz"));
  }
  if (gpu.max_threads_per_sm < 0 || gpu.max_blocks_per_sm < 0 || gpu.registers_per_sm < 0 ||
      gpu.shared_memory_per_sm_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": occupancy limits must be >= 0"));
  }
  return absl::OkStatus();
}

namespace {

// The factor, and whether the kernel fits in one wave on both GPUs.
struct Scaling {
  double factor = 1;
  bool single_wave = false;
};

Scaling Scale(const KernelGeometry& g, const GpuSpec& o, const GpuSpec& d, double gamma) {
  const bool use_peak = o.peak_tflops > 0 && d.peak_tflops > 0;
  const double compute = PerSmThroughput(o, use_peak) / PerSmThroughput(d, use_peak);
  const double bandwidth = o.memory_bandwidth_gbs / d.memory_bandwidth_gbs;
  if (!g.known()) {
    const double sms = static_cast<double>(o.sm_count) / d.sm_count;
    return {std::pow(bandwidth, gamma) * std::pow(sms * compute, 1 - gamma), false};
  }
  const int64_t w_o = int64_t{BlocksPerSm(o, g)} * o.sm_count;
  const int64_t w_d = int64_t{BlocksPerSm(d, g)} * d.sm_count;
  if (g.blocks <= w_o && g.blocks <= w_d) {
    const double per_sm = static_cast<double>(CeilDiv(g.blocks, d.sm_count)) /
                          static_cast<double>(CeilDiv(g.blocks, o.sm_count));
    return {std::pow(compute * per_sm, 1 - gamma), true};
  }
  const double waves = static_cast<double>(CeilDiv(g.blocks, w_d)) /
                       static_cast<double>(CeilDiv(g.blocks, w_o));
  const double per_block_bw = bandwidth * static_cast<double>(w_d) / static_cast<double>(w_o);
  return {waves * std::pow(per_block_bw, gamma) * std::pow(compute, 1 - gamma), false};
}

// Multiplies the duration of every live kernel of `s` by factor_of(geo)'s
// factor (which also says whether the kernel stays one wave), clamped into
// [0, kMaxDurationNs]: a factor from odd specs (a GPU with 1e-9 GB/s, a
// factor of 1e300) must not overflow (base/checked_math.h).
template <typename FactorFn>
RetargetStats ScaleKernels(Graph& g, const Selection& s, FactorFn factor_of) {
  RetargetStats stats;
  for (TaskId t : s) {
    if (g.removed(t)) continue;
    if (g.kind(t) != TaskKind::kKernel) {
      ++stats.skipped;
      continue;
    }
    const KernelGeometry& geo = g.geometry(t);
    const Scaling sc = factor_of(geo);
    ++stats.kernels;
    if (!geo.known()) ++stats.unknown_geometry;
    if (sc.single_wave) ++stats.single_wave;
    const int64_t before = g.duration_ns(t);
    const double scaled = std::nearbyint(static_cast<double>(before) * sc.factor);
    int64_t after = kMaxDurationNs;
    if (!DoubleToInt64(scaled, kMaxDurationNs, &after)) after = scaled > 0 ? kMaxDurationNs : 0;
    after = ClampTo(after, 0, kMaxDurationNs);
    g.set_duration_ns(t, after);
    stats.before_ns = SatAdd(stats.before_ns, before);
    stats.after_ns = SatAdd(stats.after_ns, after);
  }
  return stats;
}

}  // namespace

double WaveScaleFactor(const KernelGeometry& g, const GpuSpec& o, const GpuSpec& d, double gamma) {
  return Scale(g, o, d, gamma).factor;
}

absl::StatusOr<RetargetStats> RetargetKernels(Graph& g, const Selection& s, const GpuSpec& origin,
                                              const GpuSpec& dest, double gamma) {
  REVERIE_RETURN_IF_ERROR(ValidateGpuSpec(origin));
  REVERIE_RETURN_IF_ERROR(ValidateGpuSpec(dest));
  if (!(gamma >= 0 && gamma <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("gamma must be in [0, 1], got ", gamma));
  }
  // Keyed by the interned geometry's address: stable while nothing interns.
  absl::flat_hash_map<const KernelGeometry*, Scaling> scaling_of;
  return ScaleKernels(g, s, [&](const KernelGeometry& geo) {
    auto [it, inserted] = scaling_of.try_emplace(&geo);
    if (inserted) it->second = Scale(geo, origin, dest, gamma);
    return it->second;
  });
}

absl::StatusOr<RetargetStats> ScaleWork(Graph& g, const Selection& s, const GpuSpec& gpu,
                                        double factor) {
  if (gpu.sm_count <= 0) return absl::InvalidArgumentError("scale_work: the GPU needs sm_count");
  if (!(factor > 0) || !std::isfinite(factor)) {
    return absl::InvalidArgumentError(absl::StrCat("scale_work: factor must be > 0, got ", factor));
  }
  return ScaleKernels(g, s, [&](const KernelGeometry& geo) -> Scaling {
    if (!geo.known()) return {factor, false};
    const int64_t wave = int64_t{BlocksPerSm(gpu, geo)} * gpu.sm_count;
    const double blocks = std::ceil(static_cast<double>(geo.blocks) * factor);
    const double before = static_cast<double>(CeilDiv(geo.blocks, wave));
    const double after = std::max(1.0, std::ceil(blocks / static_cast<double>(wave)));
    return {after / before, before == 1 && after == 1};
  });
}

}  // namespace reverie::transforms
