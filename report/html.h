// File: report/html.h
//
// The `reverie report` document: ONE self-contained HTML file (inline CSS,
// SVG and script, no external link, no URL at all) so that it can be mailed,
// archived and opened offline.
//
// Sections: summary (measured, simulated baseline, each script's prediction
// and speedup with the step-to-step spread), each script's parameters and
// log, the interactive timeline of one step (report/timeline_view.h;
// the page's only script, inline), charts (runtime breakdown per iteration,
// baseline vs predicted per script, per-layer deltas), top changed layers
// and kernels, critical path summary, anomaly counters, and the settings
// used. Without a timeline the page has no script at all.
#ifndef REVERIE_REPORT_HTML_H_
#define REVERIE_REPORT_HTML_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "depgraph/step_time.h"

#include "report/compare.h"
#include "report/summary.h"

namespace reverie::report {

struct ScriptOutcome {
  std::string name;                     // script file or "a.lua + b.lua"
  double predicted_ns = 0;              // mean simulated step time
  depgraph::StepStats noise;            // its step-to-step spread
  std::vector<std::string> params;      // PredictedRun::params
  std::vector<std::string> log;         // PredictedRun::log
  std::vector<Diff> layers;             // a = baseline, b = predicted (LayerDeltas)
  std::vector<Diff> kernels;            // KernelDeltas
  std::vector<BreakdownRow> breakdown;  // of the predicted run
  std::string error;                    // non-empty: the script failed
};

struct ReportData {
  std::string trace_path;
  double measured_iteration_ns = 0;  // 0: unknown (no iteration markers)
  double baseline_ns = 0;            // simulated, unmodified graph
  depgraph::StepStats baseline_noise;  // its step-to-step spread
  std::string warning;               // one line above the results, or empty
  std::vector<std::pair<std::string, std::string>> facts;  // what the run already does
  std::vector<BreakdownRow> baseline_breakdown;
  std::vector<ScriptOutcome> scripts;
  std::vector<std::pair<std::string, std::string>> critical_path;  // label -> value
  std::vector<std::pair<std::string, int64_t>> anomalies;          // counter -> count
  std::vector<std::pair<std::string, std::string>> settings;       // --set k=v
  std::vector<std::pair<std::string, std::string>> graph_facts;    // "tasks" -> "36,000"
  // RenderTimelineViewJson's document; empty: no timeline section.
  std::string timeline_json;
  int top_n = 15;
};

std::string RenderHtmlReport(const ReportData& data);

// HTML text escaping (same rules as XML).
std::string EscapeHtml(std::string_view s);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_HTML_H_
