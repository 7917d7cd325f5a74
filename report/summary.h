// File: report/summary.h
//
// Numbers the HTML report draws from a graph and its simulation: the
// per-step runtime breakdown of Daydream Fig. 6 (CPU only, GPU only,
// CPU and GPU overlapping, idle; computed by depgraph/breakdown.h so that
// `reverie replay` and the report agree) and per-layer / per-kernel changes
// between the baseline graph and a transformed one.
#ifndef REVERIE_REPORT_SUMMARY_H_
#define REVERIE_REPORT_SUMMARY_H_

#include <string>
#include <utility>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "report/diff.h"

namespace reverie::report {

struct BreakdownRow {
  std::string label;       // step name
  double cpu_only_ns = 0;  // some CPU task busy, no GPU / comm task busy
  double gpu_only_ns = 0;
  double both_ns = 0;
  double idle_ns = 0;  // inside the step window, nothing busy
};

// The simulated split of each step (depgraph::ComputeBreakdown).
std::vector<BreakdownRow> SimulatedBreakdown(const depgraph::Graph& g,
                                             const depgraph::SimResult& sim);

// Label / value rows summarising the critical path of each simulated
// step (depgraph/critical_path.h): length, verdict, the share of CPU,
// GPU, communication and latency, and the top kernel classes and layers.
std::vector<std::pair<std::string, std::string>> CriticalPathSummary(const depgraph::Graph& g,
                                                                     const depgraph::SimResult& sim,
                                                                     int max_steps = 3);

// Task time per step by layer path (a = `base`, b = `other`; tasks
// without a layer are "(no layer)") and by GPU task name, sorted by |a - b|.
std::vector<Diff> LayerDeltas(const depgraph::Graph& base, const depgraph::Graph& other);
std::vector<Diff> KernelDeltas(const depgraph::Graph& base, const depgraph::Graph& other);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_SUMMARY_H_
