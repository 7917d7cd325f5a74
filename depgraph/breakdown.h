// File: depgraph/breakdown.h
//
// Where a step's time goes (Daydream Fig. 6): within each step's
// span, the time only the CPU was busy, only the GPU, both, and neither; for
// the measured trace and for the simulation, so a what-if shows which part
// it shrinks. Plus CPU and GPU task time per phase and per layer.
//
// Definitions:
// - Busy intervals: a CPU task (API call or inserted CPU work) occupies the
//   CPU for [start, end + gap]: its gap is the untraced framework CPU work
//   after it (Daydream's gap), so it is CPU time too; waiting for a
//   dependency beyond that (a blocked sync, another thread) is not. A GPU
//   task (kernel, memcpy, memset, communication) occupies the GPU for
//   [start, end]. All tasks active in the span count, whichever step
//   they belong to (CPU work of the next step overlapping this step's GPU
//   work is overlap).
// - The span is the step's (step_time.h): measured spans use measured
//   times, simulated spans simulated times. cpu_only + gpu_only + overlap +
//   idle == span length.
// - Per phase / layer: the sum of task durations attributed to it (a GPU
//   task inherits its launching call's phase and layer; CPU time includes
//   gaps), CPU and GPU separately; durations are the graph's, so measured and
//   simulated agree.
#ifndef REVERIE_DEPGRAPH_BREAKDOWN_H_
#define REVERIE_DEPGRAPH_BREAKDOWN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/simulator.h"

namespace reverie::depgraph {

struct TimeSplit {
  int64_t cpu_only_ns = 0;
  int64_t gpu_only_ns = 0;
  int64_t overlap_ns = 0;
  int64_t idle_ns = 0;
  int64_t total_ns() const { return cpu_only_ns + gpu_only_ns + overlap_ns + idle_ns; }
};

struct StepBreakdown {
  int32_t step = -1;
  std::string name;
  bool counted = true;  // in the mean step time (step_time.h)
  TimeSplit measured;
  TimeSplit simulated;
};

struct GroupTime {
  std::string name;  // phase name, layer path, or "(none)"
  int64_t cpu_ns = 0;
  int64_t gpu_ns = 0;
};

struct GraphBreakdown {
  std::vector<StepBreakdown> steps;  // one per SimResult::steps entry
  std::vector<GroupTime> by_phase;             // every phase with time, in Phase order
  std::vector<GroupTime> by_layer;             // layers with time, most GPU time first
};

// Per-step split over arbitrary task times (start/end indexed by
// TaskId, kNotMeasured = skip) and spans.
std::vector<TimeSplit> SplitTime(const Graph& graph, const std::vector<int64_t>& start_ns,
                                 const std::vector<int64_t>& end_ns,
                                 const std::vector<StepTime>& spans);

GraphBreakdown ComputeBreakdown(const Graph& graph, const SimResult& sim);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_BREAKDOWN_H_
