// File: report/assemble.h
//
// Gathers what `reverie report` shows from the pieces a command already has:
// the trace (anomaly counters), the baseline graph and its simulation, and
// one predicted graph + simulation per script. Kept apart from the command so
// that it is tested without the Lua engine.
#ifndef REVERIE_REPORT_ASSEMBLE_H_
#define REVERIE_REPORT_ASSEMBLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/build_counters.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "proto/trace.h"
#include "report/html.h"
#include "report/timeline_view.h"

namespace reverie::report {

struct PredictedRun {
  std::string name;                        // "amp.lua"
  const depgraph::Graph* graph = nullptr;  // null when the script failed
  const depgraph::SimResult* sim = nullptr;
  std::string error;
  // What the scripts said: "name=value" (a trailing * when --set gave it)
  // and their log lines, each prefixed by the script when several ran.
  std::vector<std::string> params;
  std::vector<std::string> log;
};

struct AssembleInput {
  std::string trace_path;
  const Trace* trace = nullptr;                                    // for its counters; may be null
  const depgraph::BuildStats* build_counters = nullptr;
  const depgraph::Graph* baseline = nullptr;
  const depgraph::SimResult* baseline_sim = nullptr;
  std::vector<PredictedRun> runs;
  std::vector<std::pair<std::string, std::string>> settings;
  // Empty: computed from the baseline (CriticalPathSummary).
  std::vector<std::pair<std::string, std::string>> critical_path;
  // A one-line warning shown above the results (whatif::UnexplainedWarning).
  std::string warning;
  // What the run already does (whatif::FactLines): label -> text.
  std::vector<std::pair<std::string, std::string>> facts;
};

ReportData AssembleReport(const AssembleInput& in);

// The timeline document (report/timeline_view.h) of the baseline and every
// run whose script did not fail, in order. Errors: RenderTimelineViewJson's.
absl::StatusOr<std::string> AssembleTimeline(const AssembleInput& in,
                                             const TimelineViewOptions& options);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_ASSEMBLE_H_
