// Retiming kernels and copies by the cost model (transforms/cost_model.h).
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/sv.h"
#include "transforms/cost_model.h"
#include "transforms/cost_model_internal.h"
#include "transforms/gpu_scaling.h"

namespace reverie::transforms {
namespace internal {

double GridUse(const depgraph::KernelGeometry& geo, const hardware::GpuSpec& gpu, double block_factor) {
  if (!geo.known() || gpu.sm_count <= 0) return 1;
  GpuSpec occupancy;
  occupancy.sm_count = gpu.sm_count;
  occupancy.max_threads_per_sm = gpu.occupancy.max_threads_per_sm;
  occupancy.max_blocks_per_sm = gpu.occupancy.max_blocks_per_sm;
  occupancy.registers_per_sm = gpu.occupancy.registers_per_sm;
  occupancy.shared_memory_per_sm_bytes = int64_t{gpu.occupancy.shared_memory_per_sm_kb} * 1024;
  const double sms = gpu.sm_count;
  const double wave = static_cast<double>(BlocksPerSm(occupancy, geo)) * sms;
  // Fractional: a grid that grows 10% by the work does not jump a block.
  const double blocks = std::max(1.0, static_cast<double>(geo.blocks) * block_factor);
  if (blocks < sms) return blocks / sms;
  if (blocks <= wave) return 1;
  return blocks / (std::ceil(blocks / wave) * wave);
}

double PriorCeiling(depgraph::KernelClass c) {
  return IsComputeClass(c) ? kComputeCeiling : kMemoryCeiling;
}

}  // namespace internal

namespace {

using depgraph::Graph;
using depgraph::KernelClass;
using depgraph::TaskId;
using depgraph::TaskKind;
using hardware::Math;
using hardware::WorkKind;

int32_t MathBytes(Math m) {
  switch (m) {
    case Math::kFp64: return 8;
    case Math::kFp32:
    case Math::kTf32: return 4;
    case Math::kBf16:
    case Math::kFp16: return 2;
    case Math::kFp8: return 1;
  }
  return 4;
}

// The kernel class whose curve a kind of work runs on (`fallback` for
// memory work).
KernelClass ClassOfWork(WorkKind k, KernelClass fallback) {
  switch (k) {
    case WorkKind::kGemm:
      return KernelClass::kGemm;
    case WorkKind::kConv:
      return KernelClass::kConv;
    case WorkKind::kAttention:
      return KernelClass::kAttention;
    default:
      return fallback;
  }
}

// Half precision or narrower: what a dtype change does not convert again
// (except to fp8).
bool HalfOrLower(std::optional<Math> m) {
  return m == Math::kFp16 || m == Math::kBf16 || m == Math::kFp8;
}

// Whether a kernel's name (`name_math`, its reading) says its data are
// already half precision.
bool NamedHalf(const hardware::NameMath& name_math, std::string_view name) {
  if (HalfOrLower(name_math.math)) return true;
  return name.find("c10::Half") != std::string_view::npos ||
         name.find("BFloat16") != std::string_view::npos ||
         name.find("__half") != std::string_view::npos;
}

double Peak(const hardware::GpuSpec& g, Math math, bool matrix) {
  const Math m = hardware::EffectiveMath(g, math, &matrix);
  return hardware::PeakTflops(g, m, matrix);
}

// The kernel's work with the batch `spec.work_factor` times larger: its
// share of its op's work with non-parameter tensors grown (cached per op).
KernelWork BatchScaled(const Graph& g, const CostModel& m, const KernelWork& w, double factor,
                       absl::flat_hash_map<uint32_t, hardware::OpWork>& cache) {
  if (factor == 1 || !w.op.valid() || w.op.value() >= g.op_count()) return w;
  const hardware::OpArgs* in = g.op_inputs(w.op);
  if (in == nullptr) return w;
  auto [it, inserted] = cache.try_emplace(w.op.value());
  if (inserted) {
    const std::string_view name = g.op_name(w.op);
    const hardware::OpWork base = hardware::WorkOfOp(name, *in, m.list_type);
    it->second = hardware::ScaleWork(base, name, *in, factor,
                                     [&m](std::string_view op, size_t arg, const std::vector<int64_t>& s) {
                                       return m.IsParameter(op, arg, s);
                                     },
                                     m.list_type);
  }
  KernelWork x = w;
  x.flops = it->second.flops * w.flops_share;
  x.bytes = it->second.bytes * w.share;
  x.fp32_bytes = it->second.fp32_bytes * w.share;
  return x;
}

// New roofline time of a kernel with work (already batch-scaled), after
// the dtype and GPU change. A GEMM moved to a type in which its dimensions
// are not multiples of 16 bytes (a vocabulary of 50257 in bf16) cannot use
// the tensor cores' full-rate kernels, which load 16-byte vectors: cuBLAS
// falls back to narrow-load kernels (the bf16 GPT-2 trace runs its output
// layer in `cutlass_75_tensorop_bf16_s1688gemm`, at 10% of the tensor
// peak). Such a GEMM keeps the type's vector peak (a half-precision one
// asked to run in fp8 stays as it was), and `*unaligned` is set.
// (NVIDIA, "Matrix Multiplication Background User's Guide", Tensor Core
// requirements: dimensions in multiples of 16 bytes.)
//
// Fewer bytes speed a memory kernel up only as far as bandwidth was what
// bound it: `bandwidth_share` is the share of its measured time its bytes
// explain at the GPU's peak bandwidth (its roofline share). An elementwise
// kernel at 95% of the peak runs in about half the time in half precision;
// cuDNN's batch-norm kernels, at 28-39% (fp32 ResNet-50 on an H100), keep
// most of theirs: the same elements, reduced in fp32, whatever the storage
// (measured: 0.87x and 0.98x of the fp32 time in fp16). So the bytes a type
// change saves count at that share, and the rest of the time stays.
double ChangedRoofline(const CostModel& m, const KernelWork& w, const RetimeSpec& spec,
                       const hardware::GpuSpec& gpu, double bandwidth_share, bool* unaligned) {
  KernelWork x = w;
  if (spec.dtype && *spec.dtype != Math::kFp32 && *spec.dtype != Math::kTf32) {
    const double es = MathBytes(*spec.dtype);
    const double saved = x.fp32_bytes * (1 - es / 4);
    x.bytes -= w.kind == WorkKind::kMemory ? saved * std::clamp(bandwidth_share, 0.0, 1.0) : saved;
  }
  if (spec.dtype && w.kind != WorkKind::kMemory) {
    const bool half_already = HalfOrLower(w.math);
    if (!half_already || *spec.dtype == Math::kFp8) {
      const bool to_matrix = *spec.dtype != Math::kFp32 && *spec.dtype != Math::kFp64;
      *unaligned = to_matrix && w.kind == WorkKind::kGemm && w.matrix_alignment > 0 &&
                   w.matrix_alignment * MathBytes(*spec.dtype) < 16;
      // A half-precision GEMM that fp8 cannot take (cuBLASLt's fp8 kernels
      // need every dimension a multiple of 16) stays as it ran.
      if (!(*unaligned && half_already)) {
        x.math = *spec.dtype;
        x.matrix = to_matrix && !*unaligned;
      }
    }
  }
  return m.RooflineNs(x, gpu);
}

// New roofline of a kernel without work, placed on its class's curve at r0.
double UnknownRoofline(const hardware::GpuSpec& origin, const Graph& g, TaskId t, KernelClass cls,
                       double r0, const RetimeSpec& spec, const hardware::GpuSpec& dest) {
  double r = r0 * spec.work_factor;
  const hardware::NameMath name_math = depgraph::KernelNameMath(g, t);
  if (internal::IsComputeClass(cls)) {
    const Math math = name_math.math.value_or(Math::kFp32);
    const bool matrix = hardware::UsesMatrixUnits(name_math, math);
    Math to = math;
    bool to_matrix = matrix;
    const bool half_already = HalfOrLower(math);
    if (spec.dtype && (!half_already || *spec.dtype == Math::kFp8)) {
      to = *spec.dtype;
      to_matrix = to != Math::kFp32 && to != Math::kFp64;
    }
    const double p0 = Peak(origin, math, matrix), p1 = Peak(dest, to, to_matrix);
    if (p0 > 0 && p1 > 0) r *= p0 / p1;
  } else {
    if (spec.dtype && !NamedHalf(name_math, g.name(t))) r *= MathBytes(*spec.dtype) / 4.0;
    r *= origin.memory_bandwidth_gbs / dest.memory_bandwidth_gbs;
  }
  return r;
}

// A helper's work as its share of the whole op's (KernelWork::helper).
KernelWork AsOpWork(const KernelWork& w) {
  KernelWork x = w;
  x.kind = w.op_kind;
  x.flops = w.op_flops;
  x.flops_share = w.share;
  x.matrix = w.op_matrix;
  return x;
}

// What one Retime call holds for all its kernels.
struct RetimeContext {
  const Graph& g;
  const CostModel& m;
  const RetimeSpec& spec;
  const hardware::GpuSpec& origin;
  const hardware::GpuSpec& dest;
  // The batch the kernels run now, as a multiple of the trace's: work is
  // scaled from the recorded shapes, so a second batch change (or a dtype
  // change after one) starts from it.
  double from;
  absl::flat_hash_map<uint32_t, hardware::OpWork> scaled_now, scaled_to;
};

// The roofline (ns) of a kernel with work as it runs now (at the graph's
// batch, in the math `was` it was converted to, on the origin) and after
// `now` (the batch x the spec's factor, on the destination), each over the
// share of the GPU its grid can use.
std::pair<double, double> WorkRooflines(RetimeContext& ctx, const KernelWork& w, double before,
                                        const depgraph::KernelGeometry& geo,
                                        std::optional<Math> was, const RetimeSpec& now,
                                        bool* unaligned) {
  const CostModel& m = ctx.m;
  const KernelWork at_now = BatchScaled(ctx.g, m, w, ctx.from, ctx.scaled_now);
  const double share = before > 0 ? m.RooflineNs(at_now, ctx.origin) / before : 1;
  RetimeSpec then;
  then.dtype = was;
  bool ignored = false;
  auto roofline_then = [&](const KernelWork& x) {
    return was ? ChangedRoofline(m, x, then, ctx.origin, share, &ignored)
               : m.RooflineNs(x, ctx.origin);
  };
  // The grid grows with the kernel's own work (the tile kept): a GEMM whose
  // weight dominates its traffic gets few more blocks. Growths are from the
  // recorded grid, at the recorded batch.
  const double recorded = roofline_then(w);
  const double raw = ctx.from == 1 ? recorded : roofline_then(at_now);
  const double r0 =
      raw / internal::GridUse(geo, ctx.origin, recorded > 0 ? raw / recorded : ctx.from);
  const double factor = ctx.from * ctx.spec.work_factor;
  const KernelWork grown = BatchScaled(ctx.g, m, w, factor, ctx.scaled_to);
  const double growth = recorded > 0 ? roofline_then(grown) / recorded : factor;
  const double r1 = ChangedRoofline(m, grown, now, ctx.dest, share, unaligned) /
                    internal::GridUse(geo, ctx.dest, growth);
  return {r0, r1};
}

}  // namespace

absl::StatusOr<RetimeStats> Retime(Graph& g, const Selection& s, const CostModel& m,
                                   const RetimeSpec& spec) {
  if (!(spec.work_factor > 0) || !std::isfinite(spec.work_factor) || spec.work_factor > 1e9) {
    return absl::InvalidArgumentError(
        absl::StrCat("retime: the work factor must be in (0, 1e9], got ", spec.work_factor));
  }
  const hardware::GpuSpec& origin = GpuNow(g, m);
  const hardware::GpuSpec& dest = spec.dest != nullptr ? *spec.dest : origin;
  RetimeStats stats;
  RetimeContext ctx{g, m, spec, origin, dest, g.batch_factor(), {}, {}};
  for (TaskId t : s) {
    if (g.removed(t)) continue;
    if (g.kind(t) != TaskKind::kKernel) {
      ++stats.skipped;
      continue;
    }
    const KernelClass cls = depgraph::NameClass(g, t);
    if (cls == KernelClass::kCommunication) {
      ++stats.skipped;
      continue;
    }
    const hardware::EfficiencyCurve* curve = &m.curve[static_cast<int>(cls)];
    const double before = static_cast<double>(g.duration_ns(t));
    double r0 = 0, r1 = 0;
    const std::optional<Math> was = ConvertedMath(g.name(t));
    RetimeSpec now = spec;  // what it runs after: converted, unless asked again
    if (was && (!now.dtype || *now.dtype == *was)) now.dtype = was;
    bool convertible = false;
    const KernelWork* w = m.WorkOf(t);
    // A dtype change makes the library pick another algorithm for the op
    // (cuDNN's fp32 FFT convolutions' transforms give way to tensor-core
    // kernels and their own layout transposes, which amp.lua adds): the
    // trace cannot show the new one's helpers, so a helper follows its op,
    // retimed as its share of the op's work. Without one, the algorithm
    // stays and the helper is the memory kernel it is.
    KernelWork as_op;
    if (w != nullptr && w->helper() && now.dtype) {
      as_op = AsOpWork(*w);
      w = &as_op;
      curve = &m.curve[static_cast<int>(ClassOfWork(w->kind, cls))];
    }
    const hardware::EfficiencyCurve& c = *curve;
    if (w != nullptr) {
      bool unaligned = false;
      const auto [from_ns, to_ns] =
          WorkRooflines(ctx, *w, before, g.geometry(t), was, now, &unaligned);
      r0 = from_ns, r1 = to_ns;
      if (unaligned) ++stats.unaligned;
      // An unaligned GEMM converts too: to the type's vector rate.
      convertible = w->kind == WorkKind::kMemory
                        ? w->fp32_bytes > 0
                        : !HalfOrLower(w->math) || spec.dtype == Math::kFp8;
      ++stats.with_work;
    } else {
      r0 = std::max(0.0, (before - c.fixed_ns) / c.slope);
      r1 = UnknownRoofline(origin, g, t, cls, r0, spec, dest);
      // As UnknownRoofline reads it: half by its name or its marker stays.
      convertible =
          !NamedHalf(depgraph::KernelNameMath(g, t), g.name(t)) || spec.dtype == Math::kFp8;
    }
    const double t0 = c.TimeNs(r0), t1 = c.TimeNs(r1);
    // Work from absurd recorded sizes (a hostile trace) can overflow to
    // infinity: such a kernel keeps its time rather than becoming 0 or NaN.
    const bool finite = std::isfinite(t0) && std::isfinite(t1);
    const double scaled = finite && t0 > 0 ? std::nearbyint(before * t1 / t0) : before;
    int64_t after = kMaxDurationNs;
    if (!DoubleToInt64(scaled, kMaxDurationNs, &after)) after = scaled > 0 ? kMaxDurationNs : 0;
    after = ClampTo(after, 0, kMaxDurationNs);
    g.set_duration_ns(t, after);
    // The marker follows the math the kernel now runs (none for an fp32
    // kernel asked to stay fp32).
    if (spec.dtype && convertible && was != spec.dtype && (was || *spec.dtype != Math::kFp32)) {
      g.set_name(t, absl::StrCat(Sv(UnmarkedName(g.name(t))), " [",
                                 Sv(hardware::MathName(*spec.dtype)), "]"));
    }
    ++stats.kernels;
    stats.before_ns = SatAdd(stats.before_ns, static_cast<int64_t>(before));
    stats.after_ns = SatAdd(stats.after_ns, after);
  }
  return stats;
}

// A kernel a dtype change converted carries its new math in its name
// (" [bf16]", added by Retime), so a later retime (another script, another
// GPU) starts from the math it now runs: retarget_gpu.lua after amp.lua
// scales a bf16 GEMM by the bf16 peaks (H100 -> B200: 2.27x), not by the
// fp32 ones its op recorded (1.12x), and a second dtype change converts
// nothing twice. The marker also reads as that math by name
// (hardware::MathOfKernelName), for kernels without work.
std::optional<Math> ConvertedMath(std::string_view name) {
  if (!name.ends_with("]")) return std::nullopt;
  const size_t open = name.rfind(" [");
  if (open == std::string_view::npos) return std::nullopt;
  return hardware::ParseMath(name.substr(open + 2, name.size() - open - 3));
}

// The name without the marker ConvertedMath reads.
std::string_view UnmarkedName(std::string_view name) {
  return ConvertedMath(name) ? name.substr(0, name.rfind(" [")) : name;
}

const hardware::GpuSpec& GpuNow(const Graph& g, const CostModel& m) {
  if (g.gpu_key().empty()) return m.gpu.spec;
  const hardware::GpuSpec* moved = hardware::FindGpu(g.gpu_key());
  return moved != nullptr ? *moved : m.gpu.spec;
}

double CopyNs(const CostModel& m, CopyKind k, double bytes, const hardware::GpuSpec* dest) {
  const LinkRate& r = m.copy[static_cast<int>(k)];
  double gbs = r.gbs;
  if (dest != nullptr) {
    const hardware::GpuSpec& o = m.gpu.spec;
    gbs *= k == CopyKind::kDtoD ? dest->memory_bandwidth_gbs / o.memory_bandwidth_gbs
                                : hardware::HostLinkGbs(*dest) / hardware::HostLinkGbs(o);
  }
  return gbs > 0 ? r.fixed_ns + std::max(0.0, bytes) / gbs : r.fixed_ns;
}

}  // namespace reverie::transforms
