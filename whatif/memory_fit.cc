// File: whatif/memory_fit.cc
#include "whatif/memory_fit.h"

#include <cmath>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hardware/gpu_spec.h"
#include "base/sv.h"
#include "depgraph/memory_replay.h"
#include "transforms/cost_model.h"
#include "whatif/memory_view.h"

namespace reverie::whatif {
namespace {

// The GPU's capacity: the trace's own, else the table's row for it.
void Capacity(const depgraph::Graph& g, const std::vector<depgraph::DeviceInfo>& devices, MemoryFit& f) {
  for (const depgraph::DeviceInfo& d : devices) {
    if (d.id != f.device) continue;
    f.gpu = d.name;
    if (d.total_memory_bytes > 0) {
      f.capacity = d.total_memory_bytes;
      f.capacity_from = "deviceProperties";
      return;
    }
  }
  const absl::StatusOr<transforms::TraceGpu> gpu = transforms::ResolveTraceGpu(g, devices);
  if (gpu.ok() && gpu->device == f.device && gpu->spec.memory_gb > 0) {
    f.capacity = static_cast<int64_t>(std::llround(gpu->spec.memory_gb * 1e9));
    f.capacity_from = "GPU table";
    if (f.gpu.empty()) f.gpu = gpu->device_name;
  }
}

}  // namespace

std::vector<MemoryFit> FitMemory(const depgraph::Graph& base_graph, const depgraph::SimResult& base,
                                 const depgraph::Graph& pred_graph, const depgraph::SimResult& pred,
                                 const std::vector<depgraph::DeviceInfo>& devices,
                                 std::string_view runs_on) {
  const hardware::GpuSpec* target = runs_on.empty() ? nullptr : hardware::FindGpu(runs_on);
  std::vector<MemoryFit> out;
  if (base_graph.memory_events().empty()) return out;
  const std::vector<depgraph::DevicePeak> b = depgraph::ReplayMemory(base_graph, base.start_ns, base.end_ns);
  const std::vector<depgraph::DevicePeak> p = depgraph::ReplayMemory(pred_graph, pred.start_ns, pred.end_ns);
  for (const depgraph::DevicePeak& bp : b) {
    if (bp.device < 0) continue;  // the host's memory is not the GPU's limit
    MemoryFit f;
    f.device = bp.device;
    f.absolute = bp.absolute;
    f.base_peak = bp.peak;
    f.pred_peak = bp.peak;
    f.base_phase = f.pred_phase = bp.peak_phase;
    for (const depgraph::DevicePeak& pp : p) {
      if (pp.device != bp.device) continue;
      f.pred_peak = pp.peak;
      f.pred_phase = pp.peak_phase;
    }
    f.estimate = std::string(pred_graph.memory_estimate());
    f.unknown = std::string(pred_graph.memory_unknown());
    if (target != nullptr) {
      f.gpu = std::string(target->name);
      f.capacity = static_cast<int64_t>(std::llround(target->memory_gb * 1e9));
      f.capacity_from = absl::StrCat("GPU table, ", Sv(runs_on), ": the scripts' target");
    } else {
      Capacity(base_graph, devices, f);
    }
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

// " in the backward", or "" when the phase is unknown.
std::string InPhase(depgraph::Phase p) {
  return p == depgraph::Phase::kUnknown ? "" : absl::StrCat(" in the ", Sv(depgraph::PhaseName(p)));
}

}  // namespace

std::string MemoryFitLine(const MemoryFit& f) {
  if (!f.unknown.empty()) {
    return absl::StrFormat("peak memory on GPU %d not predicted (baseline %s%s): %s", f.device,
                           MemorySize(f.base_peak), InPhase(f.base_phase), f.unknown);
  }
  const std::string estimate = f.estimate.empty() ? "" : absl::StrCat("; ", f.estimate);
  std::string line = absl::StrFormat("peak memory %s on GPU %d%s (baseline %s%s)%s", MemorySize(f.pred_peak),
                                     f.device, InPhase(f.pred_phase), MemorySize(f.base_peak),
                                     InPhase(f.base_phase), f.absolute ? "" : " above the trace's first event");
  if (!f.absolute) {
    return line + "; whether it fits is unknown (the trace records no allocator totals)" + estimate;
  }
  if (f.capacity <= 0) return line + "; the GPU's memory is unknown" + estimate;
  return line +
         absl::StrFormat("%s on %s (%.1f GiB, %s)", f.fits() ? ": fits" : ": warning: does not fit",
                         f.gpu.empty() ? "the GPU" : f.gpu,
                         static_cast<double>(f.capacity) / (1 << 30), f.capacity_from) +
         estimate;
}

void WriteMemoryFitJson(JsonWriter& w, const std::vector<MemoryFit>& fits) {
  w.BeginArray();
  for (const MemoryFit& f : fits) {
    w.BeginObject();
    w.Field("device", static_cast<int64_t>(f.device));
    w.Field("absolute", f.absolute);
    w.Field("baseline_peak_bytes", f.base_peak);
    w.Field("baseline_peak_phase", depgraph::PhaseName(f.base_phase));
    if (f.unknown.empty()) {
      w.Field("predicted_peak_bytes", f.pred_peak);
      w.Field("predicted_peak_phase", depgraph::PhaseName(f.pred_phase));
    } else {
      w.Field("not_predicted", f.unknown);
    }
    if (!f.estimate.empty()) w.Field("estimate", f.estimate);
    if (f.capacity > 0) {
      w.Field("capacity_bytes", f.capacity);
      w.Field("capacity_from", f.capacity_from);
      if (f.absolute && f.unknown.empty()) w.Field("fits", f.fits());
    }
    w.Field("gpu", f.gpu);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace reverie::whatif
