#include "report/assemble.h"

#include "base/sv.h"

#include "absl/strings/str_cat.h"
#include "depgraph/step_time.h"
#include "report/memory_chart.h"
#include "report/svg.h"

namespace reverie::report {

ReportData AssembleReport(const AssembleInput& in) {
  ReportData d;
  d.trace_path = in.trace_path;
  d.settings = in.settings;
  d.critical_path = in.critical_path;
  d.warning = in.warning;
  d.facts = in.facts;
  if (in.baseline != nullptr) {
    const depgraph::Graph& g = *in.baseline;
    d.measured_step_ns = depgraph::MeanStepNs(depgraph::MeasuredSteps(g));
    d.graph_facts = {{"tasks", FormatNumber(static_cast<double>(g.live_task_count()))},
                     {"edges", FormatNumber(static_cast<double>(g.live_edge_count()))},
                     {"resources (threads, streams, channels)",
                      FormatNumber(static_cast<double>(g.resource_count()))},
                     {"layers", FormatNumber(static_cast<double>(g.layer_count()))},
                     {"steps", FormatNumber(static_cast<double>(g.step_count()))}};
    if (in.baseline_sim != nullptr) {
      d.baseline_ns = in.baseline_sim->mean_step_ns();
      d.baseline_noise = depgraph::SummarizeSteps(in.baseline_sim->steps);
      d.baseline_breakdown = SimulatedBreakdown(g, *in.baseline_sim);
      if (d.critical_path.empty()) d.critical_path = CriticalPathSummary(g, *in.baseline_sim);
    }
  }
  for (const PredictedRun& r : in.runs) {
    ScriptOutcome s;
    s.name = r.name;
    s.error = r.error;
    s.params = r.params;
    s.log = r.log;
    if (r.error.empty() && (r.graph == nullptr || r.sim == nullptr)) s.error = "no result";
    if (s.error.empty()) {
      s.predicted_ns = r.sim->mean_step_ns();
      s.noise = depgraph::SummarizeSteps(r.sim->steps);
      s.breakdown = SimulatedBreakdown(*r.graph, *r.sim);
      if (in.baseline != nullptr) {
        s.layers = LayerDeltas(*in.baseline, *r.graph);
        s.kernels = KernelDeltas(*in.baseline, *r.graph);
      }
    }
    d.scripts.push_back(std::move(s));
  }
  if (in.baseline != nullptr && in.baseline_sim != nullptr) {
    std::vector<MemoryRun> runs = {{"baseline (simulated)", in.baseline, in.baseline_sim}};
    for (const PredictedRun& r : in.runs) {
      if (r.error.empty() && r.graph != nullptr && r.sim != nullptr) runs.push_back({r.name, r.graph, r.sim});
    }
    d.memory = RenderMemorySection(runs);
  }
  if (in.trace != nullptr) {
    // Counters of data reverie chose not to use (kInfo) are not anomalies;
    // a name this version does not declare is (a newer producer's).
    for (const proto::Counter& c : in.trace->events().counters()) {
      if (c.value() != 0 && IsTraceAnomaly(c.name())) {
        d.anomalies.emplace_back(absl::StrCat("trace: ", c.name()), c.value());
      }
    }
  }
  if (in.build_counters != nullptr) {
    in.build_counters->ForEachNonZero([&](const CounterSpec& c, int64_t v) {
      if (c.severity != CounterSeverity::kInfo) {
        d.anomalies.emplace_back(absl::StrCat("graph: ", Sv(c.name)), v);
      }
    });
  }
  return d;
}

absl::StatusOr<std::string> AssembleTimeline(const AssembleInput& in,
                                             const TimelineViewOptions& options) {
  if (in.baseline == nullptr || in.baseline_sim == nullptr) {
    return absl::InvalidArgumentError("timeline: no baseline simulation");
  }
  std::vector<TimelineViewRun> runs = {{"baseline (simulated)", in.baseline, in.baseline_sim}};
  for (const PredictedRun& r : in.runs) {
    if (r.error.empty() && r.graph != nullptr && r.sim != nullptr) {
      runs.push_back({r.name, r.graph, r.sim});
    }
  }
  return RenderTimelineViewJson(runs, options);
}

}  // namespace reverie::report
