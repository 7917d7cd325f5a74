// File: report/html.h
//
// The `reverie report` document: ONE self-contained HTML file (inline CSS,
// SVG and script, no external link, no URL at all) so that it can be mailed,
// archived and opened offline.
//
// Sections: with --advise first what to try (the diagnosis, ranked
// candidates, the best combined, what does not apply); summary (measured, simulated baseline, each script's prediction
// and speedup with the step-to-step spread), each script's parameters and
// log, the interactive timeline of one step (report/timeline_view.h;
// the page's only script, inline), charts (runtime breakdown per step,
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

#include "report/diff.h"
#include "report/memory_chart.h"
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

// `reverie report --advise`: what limits the step and what to try first
// (whatif/advise.h), the page's first section.
struct AdviceRow {
  std::string label;            // "dataloader.lua num_workers=2", "a + b"
  double predicted_ns = 0;      // mean step; 0 when it did not run
  depgraph::StepStats noise;    // its step-to-step spread
  double speedup = 0;           // step
  double throughput = 0;        // step speedup x work per step
  std::string confidence;       // the validation corpus's error, or "not validated"
  std::string note;             // what it ignores; for a combination, why it gains less
};
struct AdviceSection {
  std::vector<std::string> diagnosis;       // three lines
  std::vector<AdviceRow> candidates;        // ranked by throughput gain
  std::string order_note;                   // why #1 and #2's order is open, or ""
  std::vector<AdviceRow> combined;          // best two, best three
  std::vector<std::string> not_applicable;  // one line each, with the reason
};

struct ReportData {
  std::string trace_path;
  double measured_step_ns = 0;  // 0: unknown (no step markers)
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
  bool has_advice = false;  // --advise: the first section
  AdviceSection advice;
  // RenderTimelineViewJson's document; empty: no timeline section.
  std::string timeline_json;
  MemorySection memory;  // empty svg: the trace recorded no GPU memory
  int top_n = 15;
};

std::string RenderHtmlReport(const ReportData& data);

// HTML text escaping (same rules as XML).
std::string EscapeHtml(std::string_view s);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_HTML_H_
