// The cost model's calibration (transforms/cost_model.h): the trace's GPU,
// each kernel's work from its op's recorded shapes, the efficiency curve of
// each kernel class and the achieved rate of each kind of copy.
#include "transforms/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/median.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "transforms/cost_model_internal.h"
#include "transforms/structure.h"

namespace reverie::transforms {
namespace {

using depgraph::DeviceInfo;
using depgraph::Graph;
using depgraph::KernelClass;
using depgraph::OpId;
using depgraph::TaskId;
using depgraph::TaskKind;
using hardware::WorkKind;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The device ordinal the graph's kernels ran on: its first stream's.
int32_t KernelDevice(const Graph& g, int32_t fallback) {
  for (uint32_t r = 0; r < g.resource_count(); ++r) {
    const depgraph::Resource& res = g.resource(depgraph::ResourceId(r));
    if (res.kind == depgraph::ResourceKind::kGpuStream && res.device >= 0) return res.device;
  }
  return fallback;
}

// The trace's usual floating-point element type (what tensor lists hold).
std::string UsualFloatType(const Graph& g) {
  absl::flat_hash_map<std::string, int64_t> count;
  for (uint32_t o = 0; o < g.op_count(); ++o) {
    const hardware::OpArgs* in = g.op_inputs(OpId(o));
    if (in == nullptr) continue;
    for (const hardware::OpArg& a : *in) {
      if (!a.shapes.empty() && hardware::MathOfType(a.type)) ++count[a.type];
    }
  }
  std::string best = "float";
  int64_t n = 0;
  for (const auto& [type, c] : count) {
    if (c > n || (c == n && type < best)) best = type, n = c;
  }
  return best;
}

}  // namespace

std::string_view CopyKindName(CopyKind k) {
  switch (k) {
    case CopyKind::kHtoDPageable: return "htod_pageable";
    case CopyKind::kDtoHPageable: return "dtoh_pageable";
    case CopyKind::kHtoDPinned: return "htod_pinned";
    case CopyKind::kDtoHPinned: return "dtoh_pinned";
    case CopyKind::kDtoD: return "dtod";
  }
  return "";
}

std::optional<CopyKind> CopyKindOf(std::string_view name) {
  const bool pinned = name.find("Pinned") != std::string_view::npos;
  if (name.find("HtoD") != std::string_view::npos) {
    return pinned ? CopyKind::kHtoDPinned : CopyKind::kHtoDPageable;
  }
  if (name.find("DtoH") != std::string_view::npos) {
    return pinned ? CopyKind::kDtoHPinned : CopyKind::kDtoHPageable;
  }
  if (name.find("DtoD") != std::string_view::npos) return CopyKind::kDtoD;
  return std::nullopt;
}

absl::StatusOr<TraceGpu> ResolveTraceGpu(const Graph& g, const std::vector<DeviceInfo>& devices) {
  if (devices.empty()) {
    return absl::FailedPreconditionError(
        "the trace records no GPU (no deviceProperties): the cost model does not know its peaks");
  }
  const int32_t want = KernelDevice(g, devices[0].id);
  const DeviceInfo* d = &devices[0];
  for (const DeviceInfo& x : devices) {
    if (x.id == want) d = &x;
  }
  hardware::DeviceFacts f;
  f.name = d->name;
  f.vendor = d->vendor;
  f.sm_count = d->sm_count;
  f.cc_major = d->compute_major;
  f.cc_minor = d->compute_minor;
  f.total_memory_bytes = d->total_memory_bytes;
  const hardware::GpuMatch m = hardware::MatchGpu(f);
  if (m.spec == nullptr) {
    // A device whose deviceProperties carry no name (HTA's sampled trace)
    // is not "GPU ''": say what is missing.
    const std::string what = d->name.empty()
                                 ? absl::StrCat("device ", d->id,
                                                " has no name in the trace's "
                                                "deviceProperties, so it is not matched to")
                                 : absl::StrCat("GPU '", d->name, "' is not in");
    return absl::NotFoundError(absl::StrCat(
        what, " reverie's GPU table (hardware/gpu_table.cc); known: ", hardware::GpuKeys()));
  }
  TraceGpu out;
  out.spec = *m.spec;
  out.device = d->id;
  out.device_name = d->name;
  out.matched_by = m.how;
  hardware::GpuSpec& s = out.spec;
  if (d->sm_count > 0 && d->sm_count != s.sm_count) {
    // A MIG slice or another SKU: the same SMs, fewer of them.
    const double r = static_cast<double>(d->sm_count) / s.sm_count;
    for (double& p : s.vector_tflops) p *= r;
    for (double& p : s.matrix_tflops) p *= r;
    s.sm_count = d->sm_count;
    out.from_trace.push_back("sm_count (peaks scaled per SM)");
  }
  if (d->total_memory_bytes > 0) {
    s.memory_gb = static_cast<double>(d->total_memory_bytes) / kGiB;
    out.from_trace.push_back("memory_gb");
  }
  if (d->max_threads_per_sm > 0) {
    s.occupancy.max_threads_per_sm = d->max_threads_per_sm;
    out.from_trace.push_back("max_threads_per_sm");
  }
  if (d->registers_per_sm > 0 && s.vendor == hardware::Vendor::kNvidia) {
    s.occupancy.registers_per_sm = d->registers_per_sm;
    out.from_trace.push_back("registers_per_sm");
  }
  if (d->shared_memory_per_sm_bytes > 0) {
    s.occupancy.shared_memory_per_sm_kb = static_cast<int32_t>(d->shared_memory_per_sm_bytes / 1024);
    out.from_trace.push_back("shared_memory_per_sm_kb");
  }
  return out;
}

double CostModel::memory_gbs() const {
  return gpu.spec.memory_bandwidth_gbs *
         curve[static_cast<int>(KernelClass::kElementwise)].ceiling();
}

double CostModel::RooflineNs(const KernelWork& w, const hardware::GpuSpec& g) const {
  if (w.kind == WorkKind::kNone) return 0;
  return hardware::RooflineNs(g, w.flops, w.bytes, w.math, w.matrix);
}

namespace {

// Pass 1: the op whose work each kernel is (the innermost enclosing op with
// work; for a GEMM / convolution / attention kernel, with such work).
class WorkAttribution {
 public:
  WorkAttribution(const Graph& g, CostModel& m) : g_(g), m_(m) {}

  void Run() {
    m_.work.assign(g_.task_count(), KernelWork());
    struct PerOp {
      double total_ns = 0;
      double compute_ns = 0;  // of its GEMM / convolution / attention kernels
      double best_compute_ns = -1;
      TaskId best_compute;
    };
    absl::flat_hash_map<uint32_t, PerOp> per_op;
    struct Assigned {
      TaskId t;
      OpId op;
      bool compute;
    };
    std::vector<Assigned> assigned;
    for (uint32_t i = 0; i < g_.task_count(); ++i) {
      const TaskId t(i);
      if (g_.removed(t) || g_.kind(t) != TaskKind::kKernel) continue;
      ++m_.kernels;
      const KernelClass cls = depgraph::NameClass(g_, t);
      if (cls == KernelClass::kCommunication) {
        m_.work[i].why = Reason("communication is timed by the link model");
        continue;
      }
      const OpId op = WorkOp(t, cls, &m_.work[i].why);
      if (!op.valid()) continue;
      PerOp& p = per_op[op.value()];
      const double d = static_cast<double>(g_.duration_ns(t));
      p.total_ns += d;
      if (internal::IsComputeClass(cls)) {
        p.compute_ns += d;
        if (d > p.best_compute_ns) p.best_compute_ns = d, p.best_compute = t;
      }
      assigned.push_back({t, op, internal::IsComputeClass(cls)});
    }
    // Pass 2: each kernel's share, with the op's math and units.
    absl::flat_hash_map<uint32_t, int32_t> count, compute_count;
    for (const Assigned& a : assigned) {
      ++count[a.op.value()];
      if (a.compute) ++compute_count[a.op.value()];
    }
    for (const auto& [t, op, compute] : assigned) {
      const hardware::OpWork& ow = WorkOfOp(op);
      const PerOp& p = per_op[op.value()];
      KernelWork& w = m_.work[t.value()];
      const double d = static_cast<double>(g_.duration_ns(t));
      // A helper of an op whose math other kernels do (see KernelWork).
      const bool helper = p.best_compute.valid() && !compute;
      w.kind = helper ? WorkKind::kMemory : ow.kind;
      w.op = op;
      w.share = p.total_ns > 0 ? d / p.total_ns : 1.0 / count[op.value()];
      if (helper) {
        w.flops_share = 0;
      } else if (p.best_compute.valid()) {
        w.flops_share = p.compute_ns > 0 ? d / p.compute_ns : 1.0 / compute_count[op.value()];
      } else {
        w.flops_share = w.share;
      }
      w.flops = ow.flops * w.flops_share;
      w.bytes = ow.bytes * w.share;
      w.fp32_bytes = ow.fp32_bytes * w.share;
      w.matrix_alignment = ow.matrix_alignment;
      const TaskId named = p.best_compute.valid() ? p.best_compute : t;
      const hardware::NameMath name_math = depgraph::KernelNameMath(g_, named);
      w.math = hardware::MathOfKernel(name_math, ow.math).value_or(hardware::Math::kFp32);
      const bool op_matrix =
          ow.kind != WorkKind::kMemory && hardware::UsesMatrixUnits(name_math, w.math);
      w.matrix = !helper && op_matrix;
      if (helper) {
        w.op_kind = ow.kind;
        w.op_flops = ow.flops * w.share;
        w.op_matrix = op_matrix;
      }
      ++m_.kernels_with_work;
    }
  }

 private:
  int32_t Reason(std::string text) {
    auto [it, inserted] = reason_index_.try_emplace(text, static_cast<int32_t>(m_.reasons.size()));
    if (inserted) m_.reasons.push_back(std::move(text));
    return it->second;
  }

  const hardware::OpWork& WorkOfOp(OpId op) {
    const depgraph::CpuOp& o = g_.op(op);
    const uint64_t key = (uint64_t{o.name_id} << 32) | o.inputs;
    auto [it, inserted] = cache_.try_emplace(key);
    if (inserted) {
      const hardware::OpArgs* in = g_.op_inputs(op);
      if (in != nullptr) {
        it->second = hardware::WorkOfOp(g_.op_name(op), *in, m_.list_type);
      } else {
        it->second.why = "no shapes recorded (record_shapes off)";
      }
    }
    return it->second;
  }

  OpId WorkOp(TaskId t, KernelClass cls, int32_t* why) {
    const TaskId call = LauncherOf(g_, t);
    if (!call.valid()) {
      *why = Reason("no launch call in the trace");
      return OpId();
    }
    const OpId innermost = g_.op_of(call);
    if (!innermost.valid()) {
      *why = Reason("launched outside any recorded op");
      return OpId();
    }
    if (const OpId o = NearestWithWork(innermost, internal::IsComputeClass(cls)); o.valid()) {
      return o;
    }
    const hardware::OpWork& inner = WorkOfOp(innermost);
    *why = Reason(inner.kind == WorkKind::kNone
                      ? absl::StrCat(Sv(g_.op_name(innermost)), ": ", inner.why)
                      : absl::StrCat("no matrix-math op with shapes around ", Sv(g_.op_name(innermost))));
    return OpId();
  }

  // The nearest op at or above `op` with work (compute work only, for a
  // compute kernel), or none. Each op's answer is kept, so a chain of
  // enclosing ops is climbed once, not once per kernel under it (a trace
  // may nest ops thousands deep).
  OpId NearestWithWork(OpId op, bool compute) {
    std::vector<uint32_t>& memo = nearest_[compute ? 1 : 0];
    if (memo.empty()) memo.assign(g_.op_count(), kNotAsked);
    path_.clear();
    uint32_t found = kNoOp;
    for (OpId o = op; o.valid(); o = g_.op(o).parent) {
      if (memo[o.value()] != kNotAsked) {
        found = memo[o.value()];
        break;
      }
      const WorkKind kind = WorkOfOp(o).kind;
      if (kind != WorkKind::kNone && !(compute && kind == WorkKind::kMemory)) {
        found = o.value();
        break;
      }
      path_.push_back(o.value());
    }
    for (uint32_t p : path_) memo[p] = found;
    if (found != kNoOp) memo[found] = found;
    return found == kNoOp ? OpId() : OpId(found);
  }

  static constexpr uint32_t kNotAsked = UINT32_MAX;
  static constexpr uint32_t kNoOp = UINT32_MAX - 1;

  const Graph& g_;
  CostModel& m_;
  std::array<std::vector<uint32_t>, 2> nearest_;  // by op: NearestWithWork's answers
  std::vector<uint32_t> path_;
  absl::flat_hash_map<uint64_t, hardware::OpWork> cache_;
  absl::flat_hash_map<std::string, int32_t> reason_index_;
};

void CalibrateKernels(const Graph& g, CostModel& m) {
  std::array<std::vector<hardware::EfficiencySample>, depgraph::kKernelClassCount> samples;
  std::vector<double> durations;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kKernel) continue;
    const double d = static_cast<double>(g.duration_ns(t));
    if (d > 0) durations.push_back(d);
    const KernelWork* w = m.WorkOf(t);
    if (w == nullptr || d <= 0) continue;
    const double r = m.RooflineNs(*w, m.gpu.spec) / internal::GridUse(g.geometry(t), m.gpu.spec, 1);
    const int c = static_cast<int>(depgraph::NameClass(g, t));
    samples[c].push_back({r, d});
  }
  // What a kernel costs however little it does, where a class has nothing
  // to fit: the trace's short kernels (10th percentile of all), at most
  // what a launch call takes on its CPU (a kernel that does nothing costs
  // the GPU about what launching it costs the driver, a few microseconds).
  // The cap matters only where every kernel is long: a microbenchmark of
  // 128 us fp32 GEMMs without shapes took them all for fixed cost, so no
  // precision or GPU could speed them up.
  double fallback = QuantileInPlace(durations, 0.1, 2000.0);
  const LaunchModel launch = InferLaunchModel(g);
  if (launch.kernel_launch_samples > 0) {
    fallback = std::min(fallback, static_cast<double>(launch.kernel_launch_ns));
  }
  for (int c = 0; c < depgraph::kKernelClassCount; ++c) {
    m.curve[c] = hardware::FitEfficiency(samples[c], internal::PriorCeiling(static_cast<KernelClass>(c)),
                                         fallback);
  }
}

void CalibrateCopies(const Graph& g, CostModel& m) {
  const double link = hardware::HostLinkGbs(m.gpu.spec);
  const double mem = m.gpu.spec.memory_bandwidth_gbs;
  std::array<std::vector<hardware::EfficiencySample>, kCopyKindCount> samples;
  double shortest = 0;
  std::vector<double> gpu_tasks;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || !depgraph::IsGpuKind(g.kind(t)) || g.duration_ns(t) <= 0) continue;
    const double d = static_cast<double>(g.duration_ns(t));
    gpu_tasks.push_back(d);
    if (g.kind(t) != TaskKind::kMemcpy) continue;
    shortest = shortest == 0 ? d : std::min(shortest, d);
    const std::optional<CopyKind> k = CopyKindOf(g.name(t));
    if (!k || g.bytes(t) <= 0) continue;
    const double bytes = static_cast<double>(g.bytes(t));
    const double r = *k == CopyKind::kDtoD ? 2 * bytes / mem : bytes / link;
    samples[static_cast<int>(*k)].push_back({r, d});
  }
  // A copy's fixed cost is at most the shortest copy's time, and about
  // what the trace's short GPU tasks take (a trace whose copies are all
  // large says nothing else about it).
  double fixed = QuantileInPlace(gpu_tasks, 0.1, 1000.0);
  if (shortest > 0) fixed = std::min(fixed, shortest);
  std::array<hardware::EfficiencyCurve, kCopyKindCount> fit;
  for (int k = 0; k < kCopyKindCount; ++k) {
    const CopyKind kind = static_cast<CopyKind>(k);
    const bool pageable = kind == CopyKind::kHtoDPageable || kind == CopyKind::kDtoHPageable;
    const double prior = kind == CopyKind::kDtoD ? kMemoryCeiling
                          : pageable            ? kLinkEfficiency / 2
                                                : kLinkEfficiency;
    fit[k] = hardware::FitEfficiency(samples[k], prior, fixed);
    LinkRate& r = m.copy[k];
    const double peak = kind == CopyKind::kDtoD ? mem / 2 : link;
    r.gbs = peak * fit[k].ceiling();
    r.fixed_ns = fit[k].fixed_ns;
    r.samples = fit[k].samples;
    r.from = fit[k].slope_from_prior
                 ? absl::StrFormat("table: %s x %.2f", kind == CopyKind::kDtoD ? "memory bandwidth / 2 (read + write)"
                                                                             : "host link",
                                   fit[k].ceiling())
                 : absl::StrCat("fitted on the trace's ", fit[k].samples, " copies");
  }
  // A pageable copy is staged through a pinned buffer (a host copy, then
  // the DMA): at most half a pinned copy's rate, however fast the trace's
  // small ones looked; a pinned copy at most twice the pageable ones of its
  // direction when the trace measured those and no pinned ones.
  for (auto [pageable, pinned] : {std::pair{CopyKind::kHtoDPageable, CopyKind::kHtoDPinned},
                                  std::pair{CopyKind::kDtoHPageable, CopyKind::kDtoHPinned}}) {
    LinkRate& pg = m.copy[static_cast<int>(pageable)];
    LinkRate& pn = m.copy[static_cast<int>(pinned)];
    if (!fit[static_cast<int>(pinned)].slope_from_prior) continue;
    if (!fit[static_cast<int>(pageable)].slope_from_prior && 2 * pg.gbs < pn.gbs) {
      pn.gbs = 2 * pg.gbs;
      pn.fixed_ns = pg.fixed_ns;
      pn.from = absl::StrCat("2 x the trace's ", pg.samples, " pageable copies (no staging)");
    }
    const double cap = link * kLinkEfficiency / 2;
    if (pg.gbs > cap) {
      pg.gbs = cap;
      pg.from += absl::StrFormat(", capped at half the pinned rate (%.1f GB/s: staging)", cap);
    }
  }
}

// The shapes the weight-update ops read: the parameters (and their
// gradients and optimizer states).
void CollectParameterShapes(const Graph& g, CostModel& m) {
  std::vector<std::vector<int64_t>> shapes;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kKernel || g.phase(t) != depgraph::Phase::kUpdate) continue;
    const TaskId call = LauncherOf(g, t);
    if (!call.valid()) continue;
    for (OpId o = g.op_of(call); o.valid(); o = g.op(o).parent) {
      const hardware::OpArgs* in = g.op_inputs(o);
      if (in == nullptr) continue;
      for (const hardware::OpArg& a : *in) {
        if (hardware::ElementBytes(a.type) == 0 && !a.is_list) continue;
        for (const std::vector<int64_t>& s : a.shapes) {
          if (s.empty()) continue;
          shapes.push_back(s);
          if (s.size() == 2) shapes.push_back({s[1], s[0]});
        }
      }
      break;  // the innermost op with shapes
    }
  }
  std::sort(shapes.begin(), shapes.end());
  shapes.erase(std::unique(shapes.begin(), shapes.end()), shapes.end());
  m.parameter_shapes = std::move(shapes);
}

}  // namespace

bool CostModel::IsParameter(std::string_view op, size_t arg, const std::vector<int64_t>& shape) const {
  if (!parameter_shapes.empty()) {
    return std::binary_search(parameter_shapes.begin(), parameter_shapes.end(), shape);
  }
  // No update ops with shapes: the weight arguments of the ops that have them.
  std::string_view name = op;
  if (name.substr(0, 6) == "aten::") name.remove_prefix(6);
  if (name == "linear") return arg == 1 || arg == 2;
  if (name == "addmm") return arg == 0 || arg == 2;
  if (name == "mm" || name == "matmul") return arg == 1;
  if (name == "embedding") return arg == 0;
  if (name == "native_layer_norm" || name == "layer_norm" || name == "group_norm" ||
      name == "native_group_norm") {
    return arg == 2 || arg == 3;
  }
  if (name == "native_batch_norm" || name == "batch_norm" || name == "cudnn_batch_norm" ||
      name == "_native_batch_norm_legit_no_training" || name == "miopen_batch_norm") {
    return arg >= 1 && arg <= 4;
  }
  if (name.find("conv") != std::string_view::npos) {
    return name.find("backward") != std::string_view::npos ? arg == 2 : (arg == 1 || arg == 2);
  }
  return false;
}

absl::StatusOr<CostModel> BuildCostModel(const Graph& g, const std::vector<DeviceInfo>& devices) {
  CostModel m;
  REVERIE_ASSIGN_OR_RETURN(TraceGpu gpu, ResolveTraceGpu(g, devices));
  m.gpu = std::move(gpu);
  m.list_type = UsualFloatType(g);
  WorkAttribution(g, m).Run();
  CollectParameterShapes(g, m);
  CalibrateKernels(g, m);
  CalibrateCopies(g, m);
  return m;
}

}  // namespace reverie::transforms
