#include "whatif/validate.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "absl/strings/str_cat.h"
#include "depgraph/memory_replay.h"
#include "depgraph/step_time.h"

namespace reverie::whatif {
namespace {

// The largest peak allocated over the GPUs, in MiB; -1 without GPU
// memory events (depgraph/memory_replay.h).
double GpuPeakMiB(const depgraph::Graph& g, std::span<const int64_t> start, std::span<const int64_t> end) {
  double peak = -1;
  for (const depgraph::DevicePeak& d : depgraph::ReplayMemory(g, start, end)) {
    if (d.device >= 0 && d.absolute) peak = std::max(peak, static_cast<double>(d.peak) / (1 << 20));
  }
  return peak;
}

bool HasMarkers(const depgraph::Graph& g) {
  return !(g.step_count() == 1 && g.step_info(0).name == "whole trace");
}

}  // namespace

absl::StatusOr<report::Validation> ValidatePrediction(const LoadedTrace& before,
                                                      const LoadedTrace& after,
                                                      const ScriptSpec& spec, int top_kernels,
                                                      std::string* traceback) {
  const depgraph::Graph& bg = before.graph;
  const depgraph::Graph& ag = after.graph;
  if (HasMarkers(bg) != HasMarkers(ag)) {
    return absl::FailedPreconditionError(
        absl::StrCat(HasMarkers(bg) ? after.path : before.path,
                     ": has no ProfilerStep markers while the other trace has them: "
                     "the pair cannot be compared step by step"));
  }
  const depgraph::StepStats bs = depgraph::SummarizeSteps(depgraph::MeasuredSteps(bg));
  const depgraph::StepStats as = depgraph::SummarizeSteps(depgraph::MeasuredSteps(ag));
  if (bs.counted != as.counted) {
    return absl::FailedPreconditionError(
        absl::StrCat(after.path, ": ", as.counted, " counted steps where ", before.path, " has ",
                     bs.counted, ": not the same loop profiled twice"));
  }
  REVERIE_ASSIGN_OR_RETURN(Prediction p, Predict(before, spec, traceback));
  const report::StepProfile base = report::ProfileSteps(
      bg, before.baseline.start_ns, before.baseline.end_ns, before.baseline.steps);
  const report::StepProfile pred =
      report::ProfileSteps(p.graph, p.sim.start_ns, p.sim.end_ns, p.sim.steps);
  const depgraph::TaskTimes am = depgraph::MeasuredTimes(ag);
  const report::StepProfile meas = report::ProfileSteps(ag, am.start, am.end, depgraph::MeasuredSteps(ag));
  std::vector<std::string> names;
  for (size_t i = 0; i < ag.step_count(); ++i) {
    names.push_back(ag.step_info(static_cast<int32_t>(i)).name);
  }
  report::Validation v = report::Validate(base, pred, meas, names, top_kernels);
  // Memory, where both traces recorded it with the allocator's totals.
  const double measured_mib = GpuPeakMiB(ag, am.start, am.end);
  const double baseline_mib = GpuPeakMiB(bg, before.baseline.start_ns, before.baseline.end_ns);
  if (measured_mib >= 0 && baseline_mib >= 0) {
    v.metrics.push_back({"peak_memory_mib", baseline_mib, GpuPeakMiB(p.graph, p.sim.start_ns, p.sim.end_ns),
                         measured_mib});
  }
  return v;
}

}  // namespace reverie::whatif
