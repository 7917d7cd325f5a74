// File: depgraph/replay.h
//
// Replay(): simulate a graph built from a trace, unchanged, and compare each
// iteration's simulated time with its measured time. This is the fidelity
// check behind `reverie replay`: a what-if answer is only as good as the
// baseline replay.
//
// Both times use the one definition of iteration time in simulator.h (first
// task of the iteration to the last task it caused), the measured one on the
// trace's times, the simulated one on the simulator's.
#ifndef REVERIE_DEPGRAPH_REPLAY_H_
#define REVERIE_DEPGRAPH_REPLAY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"

namespace reverie::depgraph {

struct IterationError {
  int32_t iteration = -1;
  std::string name;
  double measured_us = 0;
  double simulated_us = 0;
  double error_pct = 0;  // (simulated - measured) / measured * 100
};

struct ReplayReport {
  // Iterations with measured work only (an empty iteration has no error).
  std::vector<IterationError> iterations;
  double mean_abs_error_pct = 0;
  double max_abs_error_pct = 0;
  SimResult sim;
  std::vector<IterationTime> measured;
};

absl::StatusOr<ReplayReport> Replay(const Graph& graph, const SimOptions& options = {});

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_REPLAY_H_
