// File: transforms/cost_model.h
//
// One cost model for every script that changes a kernel's work, its data
// type or the GPU it runs on (batch_size.lua, amp.lua, retarget_gpu.lua),
// and for the copies and links (async_copy.lua, vdnn.lua, ddp.lua,
// lib/gradients.lua):
//
//     time = fixed + slope * roofline
//
// where `roofline` is the kernel's work at the GPU's peaks (FLOPs from the
// op's recorded shapes over the peak of its math type, or bytes over memory
// bandwidth, whichever is longer; hardware/op_work.h, hardware/gpu_spec.h),
// divided by the share of the GPU its grid can use (wave quantization: a
// grid of fewer blocks than SMs uses that fraction of them; a last partial
// wave of W resident blocks idles the rest), and `fixed`, `slope` are the
// kernel class's efficiency curve fitted on the trace's own kernels
// (hardware/efficiency.h): each kernel's measured time against its roofline
// bound. A change gives a new roofline R' and the kernel's measured time T
// becomes
//
//     T' = T * (fixed + slope * R') / (fixed + slope * R)
//
// so what the trace measured of that kernel (its own distance from the
// curve) is kept, and only what the change does moves it (Habitat applies
// its MLPs as such a ratio too).
//
// A kernel without work (its op recorded no shapes, or no formula fits) is
// placed on its class's curve from its own time, R = (T - fixed) / slope,
// and scaled as its class suggests: GEMM / convolution / attention kernels
// by compute peaks, the others by bytes and bandwidth.
//
// Copies: each kind (host to device or back, pageable or pinned, device to
// device) is fitted the same way on the trace's own copies, T = fixed +
// bytes / rate, against the host link (PCIe generation x lanes) or the
// memory bandwidth of the table. Where the trace has no copies of a kind
// large enough to tell its rate, the rate comes from the table and the
// documented link efficiency (kLinkEfficiency), a pageable copy at most
// half a pinned one (it is staged through a pinned buffer: two copies in
// turn), a pinned copy at most twice the same direction's pageable one.
//
// Priors: where a trace's kernels of a class are all small (each spends
// most of its time in the fixed part) the slope is not determined by them;
// it is then 1 / kComputeCeiling (GEMM, convolution, attention) or
// 1 / kMemoryCeiling (the rest), global values, the same for every trace
// and pair. They and the link efficiency are the model's only constants.
#ifndef REVERIE_TRANSFORMS_COST_MODEL_H_
#define REVERIE_TRANSFORMS_COST_MODEL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "depgraph/kernel_class.h"
#include "depgraph/model_info.h"
#include "hardware/efficiency.h"
#include "hardware/gpu_spec.h"
#include "hardware/op_work.h"
#include "transforms/selection.h"

namespace reverie::transforms {

// Large GEMMs, convolutions and attention kernels reach 70-90% of the
// datasheet peak in cuBLAS / cuDNN / FlashAttention's published results;
// 0.75 is used where a trace cannot say.
inline constexpr double kComputeCeiling = 0.75;
// Streaming kernels reach 75-91% of peak DRAM bandwidth (measured: V100
// 82-91%, A100 89%, RTX 2080 Ti 85%, T4 75%: Habitat's devices.yml, Lin's
// thesis); 0.85 where a trace cannot say.
inline constexpr double kMemoryCeiling = 0.85;
// PCIe and NVLink move about 80% of their signalling rate as payload
// (packet headers, flow control): ~12.5 of 15.75 GB/s on PCIe 3.0 x16.
inline constexpr double kLinkEfficiency = 0.8;

// The GPU a trace ran on: the table's row with the trace's own
// deviceProperties where they differ, and where each figure came from.
struct TraceGpu {
  hardware::GpuSpec spec;          // a copy of the row, with the trace's figures
  int32_t device = 0;              // the trace's device ordinal
  std::string device_name;         // as the trace names it
  std::string matched_by;          // hardware::MatchGpu's `how`
  std::vector<std::string> from_trace;  // fields taken from the trace instead of the table
};

// The GPU the graph's kernels ran on (the device of its first stream with
// kernels, else the first device), matched against the table.
// kNotFound naming the device when no row matches, kFailedPrecondition when
// the trace describes no GPU.
absl::StatusOr<TraceGpu> ResolveTraceGpu(const depgraph::Graph& g,
                                         const std::vector<depgraph::DeviceInfo>& devices);

// A kernel's share of its op's work. In an op whose kernels include a GEMM,
// convolution or attention kernel, the op's FLOPs are those kernels' alone:
// the others (cuDNN's and MIOpen's layout transposes, an FFT convolution's
// transforms, split-K reductions) are helpers that move its data, with
// memory work (kMemory, their share of the op's bytes, no matrix units).
struct KernelWork {
  hardware::WorkKind kind = hardware::WorkKind::kNone;
  double flops = 0;
  double bytes = 0;
  double fp32_bytes = 0;
  hardware::Math math = hardware::Math::kFp32;
  bool matrix = false;        // runs on tensor / matrix cores
  int32_t matrix_alignment = 0;  // hardware::OpWork::matrix_alignment
  depgraph::OpId op;          // the op whose work it is
  double share = 0;           // of that op's bytes (by duration among its kernels)
  double flops_share = 0;     // of its FLOPs: 0 for a helper (below), else by
                              // duration among the op's kernels that do its math
  // A helper's work as a share of the whole op's (by duration, as the op's
  // other kernels): what a dtype change retimes it by (cost_retime.cc).
  // kNone for a kernel that is not a helper.
  hardware::WorkKind op_kind = hardware::WorkKind::kNone;
  double op_flops = 0;
  bool op_matrix = false;
  bool helper() const { return op_kind != hardware::WorkKind::kNone; }
  int32_t why = -1;           // for kNone: index of the reason (CostModel::reasons)
};

// A copy kind's achieved transfer: T = fixed_ns + bytes / gbs.
struct LinkRate {
  double gbs = 0;
  double fixed_ns = 0;
  int64_t samples = 0;
  std::string from;  // "fitted on 100 copies", "table: PCIe 4.0 x16 x 0.8 / 2 (pageable)"
};

enum class CopyKind : uint8_t { kHtoDPageable, kDtoHPageable, kHtoDPinned, kDtoHPinned, kDtoD };
inline constexpr int kCopyKindCount = 5;
std::string_view CopyKindName(CopyKind k);
// The kind of a memcpy task from its name ("Memcpy HtoD (Pageable -> Device)");
// nullopt for peer and host-to-host copies.
std::optional<CopyKind> CopyKindOf(std::string_view name);

struct CostModel {
  TraceGpu gpu;
  std::vector<KernelWork> work;  // by TaskId of the calibrated graph; kNone for non-kernels
  std::array<hardware::EfficiencyCurve, depgraph::kKernelClassCount> curve;
  std::array<LinkRate, kCopyKindCount> copy;
  std::vector<std::string> reasons;  // why kernels have no work (KernelWork::why)
  std::string list_type;             // element type assumed for tensor lists
  // Shapes of the model's parameters (what a batch change does not grow):
  // those the weight-update ops read, with 2-D ones also transposed; empty
  // when the trace has no update ops with shapes (inference), and then the
  // weight arguments of linear, addmm, mm, convolutions, normalizations and
  // embeddings are taken for parameters (IsParameter).
  std::vector<std::vector<int64_t>> parameter_shapes;  // sorted
  bool IsParameter(std::string_view op, size_t arg, const std::vector<int64_t>& shape) const;
  int64_t kernels = 0;
  int64_t kernels_with_work = 0;

  // Achieved memory bandwidth (GB/s): the table's peak times the ceiling of
  // the trace's element-wise kernels (the prior where they cannot say).
  double memory_gbs() const;
  // The kernel's roofline time on `gpu` (ns), for `work` as it is; 0
  // without work.
  double RooflineNs(const KernelWork& w, const hardware::GpuSpec& gpu) const;
  // Why a kernel has no work ("aten::mm: no shapes recorded ..."), or "".
  std::string_view WhyNot(depgraph::TaskId t) const {
    if (t.value() >= work.size() || work[t.value()].why < 0) return "";
    return reasons[work[t.value()].why];
  }
  const KernelWork* WorkOf(depgraph::TaskId t) const {
    return t.value() < work.size() && work[t.value()].kind != hardware::WorkKind::kNone
               ? &work[t.value()]
               : nullptr;
  }
};

// Calibrates the model on `g` as measured (each kernel's duration against
// its roofline). Fails as ResolveTraceGpu does.
absl::StatusOr<CostModel> BuildCostModel(const depgraph::Graph& g,
                                         const std::vector<depgraph::DeviceInfo>& devices);

// What a script changes.
struct RetimeSpec {
  double work_factor = 1;                 // the batch x this: FLOPs and activation bytes x this,
                                          // grids as the kernel's roofline grows
  std::optional<hardware::Math> dtype;    // run in this type (mixed precision)
  const hardware::GpuSpec* dest = nullptr;  // run on this GPU
};

struct RetimeStats {
  int64_t kernels = 0;       // kernels retimed
  int64_t with_work = 0;     // of which from recorded shapes
  int64_t skipped = 0;       // selected tasks that are not kernels
  // GEMMs moved to a narrower type whose dimensions are not 16-byte
  // multiples in it: they keep the type's vector rate, not the tensor cores'.
  int64_t unaligned = 0;
  int64_t before_ns = 0;
  int64_t after_ns = 0;
};

// The math a dtype retime converted a kernel to, from the marker it added
// to the kernel's name (" [bf16]"), or nullopt; and the name without it.
std::optional<hardware::Math> ConvertedMath(std::string_view name);
std::string_view UnmarkedName(std::string_view name);

// The GPU `g`'s kernels now stand for: the one a script moved them to
// (Graph::gpu_key), else the trace's (`m.gpu.spec`). Retime starts from
// it; the efficiency curves stay those fitted on the trace as measured, so
// a move there and back gives the measured times again.
const hardware::GpuSpec& GpuNow(const depgraph::Graph& g, const CostModel& m);

// Retimes every live kernel of `s` by the model (see the file comment),
// from GpuNow(g, m) to `spec.dest` (default: the same GPU).
// Kernels the script inserted after calibration (no work, no measured place
// on a curve of their own) are scaled like kernels without work. Nothing
// changes on error (kInvalidArgument: a factor <= 0, a dtype that is not a
// floating type the GPU table knows).
absl::StatusOr<RetimeStats> Retime(depgraph::Graph& g, const Selection& s, const CostModel& m,
                                   const RetimeSpec& spec);

// The time (ns) a copy of `bytes` of kind `k` takes by the model; with
// `dest`, on that GPU's links (the origin's achieved share of its link
// carried over).
double CopyNs(const CostModel& m, CopyKind k, double bytes, const hardware::GpuSpec* dest = nullptr);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_COST_MODEL_H_
