// File: whatif/info.h
//
// What `reverie info` (and the Python module's Trace.info()) says about a
// trace beyond its raw counts (frameworks/trace_summary.h): the dependency
// graph's view of it, i.e. what the builder inferred and where each measured
// step's time went (Daydream Fig. 6), its CPU time split, and the JSON both
// print, so the command and the module give the same fields.
#ifndef REVERIE_WHATIF_INFO_H_
#define REVERIE_WHATIF_INFO_H_

#include <cstddef>
#include <string>
#include <vector>

#include "depgraph/breakdown.h"
#include "depgraph/facts.h"
#include "depgraph/builder.h"
#include "depgraph/cpu_time.h"
#include "depgraph/graph.h"
#include "depgraph/memory.h"
#include "depgraph/simulator.h"
#include "depgraph/step_time.h"
#include "frameworks/trace_summary.h"
#include "proto/trace.h"
#include "whatif/hardware_view.h"

namespace reverie::whatif {

// Optional: a trace the builder cannot use (no API calls and no GPU work)
// still gets its info, with `built` false and the reason.
struct GraphView {
  bool built = false;
  std::string why_not;
  size_t tasks = 0;
  size_t edges = 0;
  depgraph::BuildStats stats;
  depgraph::GraphBreakdown breakdown;
  std::vector<depgraph::StepTime> steps;  // measured, by the one step definition
  std::vector<std::string> step_names;
  depgraph::StepStats step_stats;
  depgraph::CpuTimeReport cpu;  // measured
  HardwareView hardware;        // the GPU model and the cost model calibrated on the trace
  depgraph::TraceFacts facts;   // what the run already does (depgraph/facts.h)
  depgraph::MemoryReport memory;  // per step, from the trace's [memory] events (depgraph/memory.h)
};

// Builds (default options) and simulates `trace` for its view.
GraphView AnalyzeGraph(const Trace& trace);
// The view of a graph already built and simulated (its baseline).
GraphView ViewOf(const Trace& trace, const depgraph::Graph& graph, const depgraph::SimResult& sim,
                 const depgraph::BuildStats& stats);

// `reverie info --json`.
std::string InfoJson(const Trace& trace, const TraceSummary& summary, const GraphView& graph);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_INFO_H_
