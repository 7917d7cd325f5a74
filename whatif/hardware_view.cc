#include "whatif/hardware_view.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/sv.h"
#include "depgraph/kernel_class.h"
#include "hardware/gpu_spec.h"

namespace reverie::whatif {
namespace {

using depgraph::KernelClass;
using depgraph::TaskId;
using hardware::Math;

bool FromTrace(const transforms::TraceGpu& g, std::string_view field) {
  for (const std::string& f : g.from_trace) {
    if (f.substr(0, field.size()) == field) return true;
  }
  return false;
}

std::string MathLabel(const transforms::KernelWork& w, const hardware::GpuSpec& gpu) {
  if (w.kind == hardware::WorkKind::kMemory) return "memory";
  bool matrix = w.matrix;
  const Math m = hardware::EffectiveMath(gpu, w.math, &matrix);
  return absl::StrCat(Sv(hardware::MathName(m)),
                      matrix ? (gpu.vendor == hardware::Vendor::kAmd ? " matrix cores" : " tensor cores")
                             : (gpu.vendor == hardware::Vendor::kAmd ? " SIMD" : " CUDA cores"));
}

void Figure(JsonWriter& w, std::string_view key, double value, std::string_view from) {
  w.Key(key).BeginObject().Field("value", value).Field("from", from).EndObject();
}

}  // namespace

HardwareView AnalyzeHardware(const depgraph::Graph& graph,
                             const std::vector<depgraph::DeviceInfo>& devices, size_t n) {
  HardwareView v;
  absl::StatusOr<transforms::CostModel> m = transforms::BuildCostModel(graph, devices);
  if (!m.ok()) {
    v.why_not = std::string(m.status().message());
    return v;
  }
  v.ok = true;
  v.model = *std::move(m);
  absl::flat_hash_map<std::string_view, KernelRoofline> by_name;
  for (uint32_t i = 0; i < graph.task_count(); ++i) {
    const TaskId t(i);
    if (graph.removed(t) || graph.kind(t) != depgraph::TaskKind::kKernel) continue;
    KernelRoofline& k = by_name[graph.name(t)];
    ++k.count;
    k.total_ns += graph.duration_ns(t);
    if (const transforms::KernelWork* w = v.model.WorkOf(t)) {
      ++k.with_work;
      k.flops += w->flops;
      k.bytes += w->bytes;
      k.roofline_ns += v.model.RooflineNs(*w, v.model.gpu.spec);
      k.measured_ns += static_cast<double>(graph.duration_ns(t));
      if (k.math.empty()) {
        k.math = MathLabel(*w, v.model.gpu.spec);
        k.kind = std::string(hardware::WorkKindName(w->kind));
        const hardware::OpArgs* in = graph.op_inputs(w->op);
        if (in != nullptr) {
          k.formula = absl::StrCat(
              Sv(graph.op_name(w->op)), ": ",
              hardware::WorkOfOp(graph.op_name(w->op), *in, v.model.list_type).formula);
        }
      }
    } else if (k.why_not.empty()) {
      k.why_not = std::string(v.model.WhyNot(t));
    }
  }
  for (auto& [name, k] : by_name) {
    k.name = std::string(name);
    v.top.push_back(std::move(k));
  }
  std::sort(v.top.begin(), v.top.end(), [](const KernelRoofline& a, const KernelRoofline& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (v.top.size() > n) v.top.resize(n);
  return v;
}

void WriteGpuModelJson(JsonWriter& w, const HardwareView& v) {
  const transforms::TraceGpu& g = v.model.gpu;
  const hardware::GpuSpec& s = g.spec;
  const std::string table = absl::StrCat("table (", Sv(s.source), ")");
  auto from = [&](std::string_view field) -> std::string_view {
    return FromTrace(g, field) ? "trace deviceProperties" : std::string_view(table);
  };
  w.BeginObject();
  w.Field("key", s.key).Field("name", s.name).Field("vendor", hardware::VendorName(s.vendor));
  w.Field("arch", s.arch).Field("matched_by", g.matched_by).Field("source", s.source);
  if (!s.note.empty()) w.Field("derived", s.note);
  Figure(w, "sm_count", s.sm_count, from("sm_count"));
  Figure(w, "boost_clock_mhz", s.boost_clock_mhz, table);
  w.Key("peak_tflops").BeginObject();
  for (const auto& [units, peaks] : {std::pair{"vector", &s.vector_tflops}, std::pair{"matrix", &s.matrix_tflops}}) {
    w.Key(units).BeginObject();
    for (int m = 0; m < hardware::kMathCount; ++m) {
      if ((*peaks)[m] > 0) w.Field(hardware::MathName(static_cast<Math>(m)), (*peaks)[m]);
    }
    w.EndObject();
  }
  w.Field("dense", true).Field("from", FromTrace(g, "sm_count") ? "table, scaled to the trace's SMs"
                                                                 : std::string_view(table));
  w.EndObject();
  Figure(w, "memory_bandwidth_gbs", s.memory_bandwidth_gbs, table);
  Figure(w, "memory_gb", s.memory_gb, from("memory_gb"));
  Figure(w, "l2_mb", s.l2_mb, s.l2_mb > 0 ? std::string_view(table) : "not published");
  w.Key("host_link").BeginObject().Field("pcie_gen", s.pcie_gen).Field("pcie_lanes", s.pcie_lanes);
  w.Field("gbs_per_direction", hardware::HostLinkGbs(s));
  w.Field("from", absl::StrCat(table, "; GB/s = lanes x transfer rate x line encoding"));
  w.EndObject();
  w.Key("scaleup_link").BeginObject().Field("name", s.scaleup).Field("gbs_both_directions", s.scaleup_gbs);
  w.Field("from", table).EndObject();
  w.Key("occupancy").BeginObject();
  w.Field("max_threads_per_sm", s.occupancy.max_threads_per_sm);
  w.Field("max_blocks_per_sm", s.occupancy.max_blocks_per_sm);
  w.Field("registers_per_sm", s.occupancy.registers_per_sm);
  w.Field("shared_memory_per_sm_kb", s.occupancy.shared_memory_per_sm_kb);
  w.Field("from", g.from_trace.size() > 1 ? "trace deviceProperties where recorded, else the "
                                            "CUDA occupancy table of its compute capability"
                                          : "the CUDA occupancy table of its compute capability");
  w.EndObject();
  w.EndObject();
}

void WriteCostModelJson(JsonWriter& w, const HardwareView& v) {
  w.BeginObject();
  w.Field("calibrated", v.ok);
  if (!v.ok) {
    w.Field("reason", v.why_not).EndObject();
    return;
  }
  const transforms::CostModel& m = v.model;
  w.Field("gpu", m.gpu.spec.key).Field("kernels", m.kernels);
  w.Field("kernels_with_work", m.kernels_with_work);
  w.Field("time", "fixed + slope x roofline; efficiency = roofline / time");
  w.Key("classes").BeginObject();
  for (int c = 0; c < depgraph::kKernelClassCount; ++c) {
    const hardware::EfficiencyCurve& e = m.curve[c];
    if (e.samples == 0) continue;
    w.Key(depgraph::KernelClassName(static_cast<KernelClass>(c))).BeginObject();
    w.Field("kernels", e.samples).Field("fixed_us", e.fixed_ns / 1e3).Field("ceiling", e.ceiling());
    w.Field("slope_from", e.slope_from_prior ? "prior (the trace's kernels cannot tell it: all small, or above the roofline)" : "trace");
    w.EndObject();
  }
  w.EndObject();
  w.Field("memory_gbs_achieved", m.memory_gbs());
  w.Key("copies").BeginObject();
  for (int k = 0; k < transforms::kCopyKindCount; ++k) {
    const transforms::LinkRate& r = m.copy[k];
    w.Key(transforms::CopyKindName(static_cast<transforms::CopyKind>(k))).BeginObject();
    w.Field("gbs", r.gbs).Field("fixed_us", r.fixed_ns / 1e3).Field("copies", r.samples);
    w.Field("from", r.from).EndObject();
  }
  w.EndObject();
  w.Key("top_kernels").BeginArray();
  for (const KernelRoofline& k : v.top) {
    w.BeginObject().Field("name", k.name).Field("count", k.count).Field("total_us", k.total_ns / 1e3);
    w.Field("with_shapes", k.with_work);
    if (k.with_work > 0) {
      w.Field("kind", k.kind).Field("math", k.math).Field("flops", k.flops).Field("bytes", k.bytes);
      const double s = k.measured_ns / 1e9;
      w.Field("achieved_tflops", s > 0 ? k.flops / s / 1e12 : 0.0);
      w.Field("achieved_gbs", s > 0 ? k.bytes / s / 1e9 : 0.0);
      w.Field("roofline_us", k.roofline_ns / 1e3);
      w.Field("roofline_share", k.measured_ns > 0 ? k.roofline_ns / k.measured_ns : 0.0);
      w.Field("formula", k.formula);
    } else {
      w.Field("work", k.why_not);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::string HardwareText(const HardwareView& v) {
  if (!v.ok) return absl::StrCat("\nGPU model: none (", v.why_not, ")\n");
  const transforms::CostModel& m = v.model;
  const hardware::GpuSpec& s = m.gpu.spec;
  std::string out = absl::StrFormat("\nGPU model: %s (%s, %s), matched by %s\n", Sv(s.key), Sv(s.name),
                                    Sv(s.arch), m.gpu.matched_by);
  absl::StrAppendFormat(&out, "  source: %s%s\n", Sv(s.source),
                        s.note.empty() ? "" : absl::StrCat("; derived: ", Sv(s.note)));
  if (!m.gpu.from_trace.empty()) {
    absl::StrAppend(&out, "  from the trace: ", absl::StrJoin(m.gpu.from_trace, ", "), "\n");
  }
  absl::StrAppendFormat(&out, "  %d SMs at %.0f MHz; %.0f GB at %.0f GB/s, L2 %s; PCIe %d.0 x%d (%.1f GB/s each way)%s\n",
                        s.sm_count, s.boost_clock_mhz, s.memory_gb, s.memory_bandwidth_gbs,
                        s.l2_mb > 0 ? absl::StrFormat("%g MB", s.l2_mb) : "not published", s.pcie_gen,
                        s.pcie_lanes, hardware::HostLinkGbs(s),
                        s.scaleup_gbs > 0 ? absl::StrFormat("; %s %g GB/s", Sv(s.scaleup), s.scaleup_gbs) : "");
  absl::StrAppend(&out, "  peak TFLOP/s (dense)   fp64    fp32    tf32    bf16    fp16     fp8\n");
  for (const auto& [label, peaks] : {std::pair{"vector units", &s.vector_tflops},
                                     std::pair{"tensor/matrix units", &s.matrix_tflops}}) {
    absl::StrAppendFormat(&out, "    %-19s", label);
    for (double p : *peaks) absl::StrAppend(&out, p > 0 ? absl::StrFormat("%8.1f", p) : "       -");
    out += "\n";
  }
  absl::StrAppendFormat(&out, "\ncost model (calibrated on this trace): %d of %d kernels have work from recorded shapes\n",
                        m.kernels_with_work, m.kernels);
  absl::StrAppend(&out, "  class            kernels  fixed us  ceiling  slope from\n");
  for (int c = 0; c < depgraph::kKernelClassCount; ++c) {
    const hardware::EfficiencyCurve& e = m.curve[c];
    if (e.samples == 0) continue;
    absl::StrAppendFormat(&out, "  %-16s %7d %9.2f %8.2f  %s\n",
                          Sv(depgraph::KernelClassName(static_cast<KernelClass>(c))), e.samples,
                          e.fixed_ns / 1e3, e.ceiling(), e.slope_from_prior ? "prior" : "trace");
  }
  absl::StrAppendFormat(&out, "  achieved memory bandwidth %.0f GB/s\n", m.memory_gbs());
  for (int k = 0; k < transforms::kCopyKindCount; ++k) {
    const transforms::LinkRate& r = m.copy[k];
    absl::StrAppendFormat(&out, "  copies %-14s %7.1f GB/s + %6.2f us  (%s)\n",
                          Sv(transforms::CopyKindName(static_cast<transforms::CopyKind>(k))), r.gbs,
                          r.fixed_ns / 1e3, r.from);
  }
  absl::StrAppend(&out, "\ntop kernels: work from recorded shapes, achieved rate, share of the roofline\n");
  absl::StrAppend(&out, "  total ms   count    GFLOP       MB  TFLOP/s     GB/s  roofline  math / why not  name\n");
  for (const KernelRoofline& k : v.top) {
    std::string name = k.name.size() > 70 ? k.name.substr(0, 67) + "..." : k.name;
    if (k.with_work == 0) {
      absl::StrAppendFormat(&out, "  %8.3f %7d %8s %8s %8s %8s %9s  %s  %s\n", k.total_ns / 1e6, k.count, "-",
                            "-", "-", "-", "-", k.why_not, name);
      continue;
    }
    const double sec = k.measured_ns / 1e9;
    absl::StrAppendFormat(&out, "  %8.3f %7d %8.2f %8.1f %8.1f %8.0f %8.0f%%  %s  %s\n", k.total_ns / 1e6, k.count,
                          k.flops / 1e9, k.bytes / 1e6, sec > 0 ? k.flops / sec / 1e12 : 0,
                          sec > 0 ? k.bytes / sec / 1e9 : 0,
                          k.measured_ns > 0 ? 100 * k.roofline_ns / k.measured_ns : 0, k.math, name);
  }
  return out;
}

}  // namespace reverie::whatif
