// File: report/html.h
//
// The `reverie report` document: ONE self-contained HTML file (inline CSS,
// SVG and script, no external link, no URL at all) so that it can be mailed,
// archived and opened offline.
//
// Sections: summary (measured, simulated baseline, each script's prediction
// and speedup), the interactive timeline of one step (report/timeline_view.h;
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

#include "report/compare.h"
#include "report/summary.h"

namespace reverie::report {

struct ScriptOutcome {
  std::string name;                     // script file or "a.lua + b.lua"
  double predicted_ns = 0;              // mean simulated iteration time
  std::vector<Diff> layers;             // a = baseline, b = predicted (LayerDeltas)
  std::vector<Diff> kernels;            // KernelDeltas
  std::vector<BreakdownRow> breakdown;  // of the predicted run
  std::string error;                    // non-empty: the script failed
};

struct ReportData {
  std::string trace_path;
  double measured_iteration_ns = 0;  // 0: unknown (no iteration markers)
  double baseline_ns = 0;            // simulated, unmodified graph
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
