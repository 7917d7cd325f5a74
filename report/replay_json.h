// File: report/replay_json.h
//
// `reverie replay --json` (and the Python module's Trace.replay()): measured
// vs simulated time per step, the replay error, the Daydream breakdown per
// step, phase and layer, the builder's counters and, when asked, the
// critical path of each step. One writer, so both give the same fields.
#ifndef REVERIE_REPORT_REPLAY_JSON_H_
#define REVERIE_REPORT_REPLAY_JSON_H_

#include <string>
#include <vector>

#include "depgraph/breakdown.h"
#include "depgraph/builder.h"
#include "depgraph/critical_path.h"
#include "depgraph/replay.h"

namespace reverie::report {

// The share of a step's critical path that is measured waiting no
// dependency explains (depgraph/critical_path.h unexplained_ns): replay keeps
// it as it was, so a prediction cannot move it. That share, not replay's 0%,
// says how much of the step the model explains.
double UnexplainedPct(const depgraph::CriticalPath& p);

std::string ReplayJson(const std::string& trace_path, const depgraph::BuildStats& stats,
                       const depgraph::ReplayReport& rep, const depgraph::GraphBreakdown& b,
                       const std::vector<depgraph::CriticalPath>& paths, bool critical_path);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_REPLAY_JSON_H_
