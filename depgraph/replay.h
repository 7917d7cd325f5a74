// File: depgraph/replay.h
//
// Replay(): simulate a graph built from a trace, unchanged, and compare each
// step's simulated time with its measured time. This is the fidelity
// check behind `reverie replay`: a what-if answer is only as good as the
// baseline replay.
//
// Both times use the one definition of the step time (step_time.h), the
// measured one on the trace's times, the simulated one on the simulator's.
// Replay is exact by construction (every start is pinned by a measured
// duration, gap or delay): its error is a regression guard, never accuracy.
#ifndef REVERIE_DEPGRAPH_REPLAY_H_
#define REVERIE_DEPGRAPH_REPLAY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "depgraph/step_time.h"

namespace reverie::depgraph {

struct StepError {
  int32_t step = -1;
  std::string name;
  bool counted = true;  // in the mean step time (step_time.h rule 4)
  double measured_us = 0;
  double simulated_us = 0;
  double error_pct = 0;  // (simulated - measured) / measured * 100; 0 when measured is 0
};

struct ReplayReport {
  // Every step, counted or not.
  std::vector<StepError> steps;
  // Over counted steps with a measured time > 0; compared == 0 means no step
  // could be compared and the errors mean nothing.
  int compared = 0;
  double mean_abs_error_pct = 0;
  double max_abs_error_pct = 0;
  StepStats measured_steps;
  StepStats simulated_steps;
  SimResult sim;
  std::vector<StepTime> measured;
};

absl::StatusOr<ReplayReport> Replay(const Graph& graph, const SimOptions& options = {});

// The same for a simulation already run (`sim` of `graph` unchanged: a
// loaded trace's baseline).
ReplayReport CompareWithMeasured(const Graph& graph, SimResult sim);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_REPLAY_H_
