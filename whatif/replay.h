// File: whatif/replay.h
//
// `reverie replay` and the Python module's Trace.replay(): the loaded
// trace's graph simulated unchanged (its baseline) against what the trace
// measured, per step, with the Daydream breakdown and each step's critical
// path; and its JSON (measured vs simulated time per step, the replay
// error, the breakdown per step, phase and layer, the builder's counters
// and, when asked, the critical paths). One home, so both give the same
// numbers and fields.
#ifndef REVERIE_WHATIF_REPLAY_H_
#define REVERIE_WHATIF_REPLAY_H_

#include <string>
#include <vector>

#include "depgraph/breakdown.h"
#include "depgraph/builder.h"
#include "depgraph/critical_path.h"
#include "depgraph/replay.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

// The share of a step's critical path that is measured waiting no
// dependency explains (depgraph/critical_path.h unexplained_ns): replay keeps
// it as it was, so a prediction cannot move it. That share, not replay's 0%,
// says how much of the step the model explains.
double UnexplainedPct(const depgraph::CriticalPath& p);

struct ReplayResult {
  depgraph::ReplayReport report;  // per step, measured vs simulated
  depgraph::GraphBreakdown breakdown;
  std::vector<depgraph::CriticalPath> paths;  // one per step
};

// The trace's baseline (simulated once, by LoadAndSimulate) against what it
// measured.
ReplayResult Replay(const LoadedTrace& t);

std::string ReplayJson(const LoadedTrace& t, const ReplayResult& r, bool critical_path);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_REPLAY_H_
