#include "depgraph/replay.h"
#include "base/status_macros.h"

#include <cmath>
#include <utility>

namespace reverie::depgraph {

absl::StatusOr<ReplayReport> Replay(const Graph& graph, const SimOptions& options) {
  REVERIE_ASSIGN_OR_RETURN(SimResult sim, Simulate(graph, options));
  return CompareWithMeasured(graph, std::move(sim));
}

ReplayReport CompareWithMeasured(const Graph& graph, SimResult sim) {
  ReplayReport rep;
  rep.sim = std::move(sim);
  rep.measured = MeasuredSteps(graph);
  rep.measured_steps = SummarizeSteps(rep.measured);
  rep.simulated_steps = SummarizeSteps(rep.sim.steps);
  double sum = 0;
  for (size_t i = 0; i < rep.measured.size() && i < rep.sim.steps.size(); ++i) {
    const int64_t m = rep.measured[i].duration_ns();
    StepError e;
    e.step = static_cast<int32_t>(i);
    e.name = i < graph.step_count() ? graph.step_info(static_cast<int32_t>(i)).name
                                         : "whole trace";
    e.counted = rep.measured[i].counted;
    e.measured_us = static_cast<double>(m) / 1e3;
    e.simulated_us = static_cast<double>(rep.sim.steps[i].duration_ns()) / 1e3;
    if (m > 0) e.error_pct = (e.simulated_us - e.measured_us) / e.measured_us * 100.0;
    if (e.counted && m > 0) {
      sum += std::abs(e.error_pct);
      rep.max_abs_error_pct = std::max(rep.max_abs_error_pct, std::abs(e.error_pct));
      ++rep.compared;
    }
    rep.steps.push_back(std::move(e));
  }
  if (rep.compared > 0) rep.mean_abs_error_pct = sum / rep.compared;
  return rep;
}

}  // namespace reverie::depgraph
