// `reverie report TRACE [--advise] [--script F ...] [--set k=v ...] -o OUT.html
//  [--timeline OUT.json] [--timeline-step I] [--top N] [--threads N] [--lua-budget N]
//  [--lua-memory-mb N] [--no-sandbox]`: one self-contained HTML page with the
// baseline, each script's prediction (and, with several scripts, all of them
// applied in order), an interactive timeline of one step (report/timeline_view.h;
// --timeline-step picks the step it opens on, 0-based, default the first
// counted one), charts, top changed layers and kernels, the critical path and
// the anomaly counters (report/html.h). The script flags are predict's
// (cli/script_args.h); every run gets the same --set values and limits.
// --advise puts `reverie advise` first (whatif/advise.h: what limits the
// step, the ranked candidates, the best combined, what does not apply),
// with advise's own settings (the --set values are the report scripts').
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/atomic_file.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/load.h"
#include "cli/paths.h"
#include "cli/progress.h"
#include "cli/script_args.h"
#include "depgraph/critical_path.h"
#include "export/timeline.h"
#include "report/assemble.h"
#include "report/html.h"
#include "report/timeline_view.h"
#include "whatif/advise.h"
#include "whatif/facts_view.h"
#include "whatif/prediction_report.h"
#include "whatif/several.h"

namespace reverie::cli {
namespace {

struct Options {
  std::string trace_path, out_path, timeline;
  ScriptArgs script_args;
  int top_n = 15;
  int threads = 0;  // 0: every core
  bool advise = false;
  report::TimelineViewOptions timeline_view;
};

// One report run per prediction (whatif::PredictEachAndAll), with what each
// script was given and logged; names prefix both when several scripts ran.
report::PredictedRun ToRun(const whatif::NamedPrediction& n) {
  report::PredictedRun run;
  run.name = n.name;
  run.graph = &n.prediction.graph;
  run.sim = &n.prediction.sim;
  const bool several = n.prediction.reports.size() > 1;
  for (const lua::ScriptReport& r : n.prediction.reports) {
    const std::string who = several ? absl::StrCat(r.script.display_name, ": ") : "";
    for (const lua::ParamValue& p : r.params) {
      run.params.push_back(absl::StrCat(who, p.name, "=", p.value_text, p.overridden ? "*" : ""));
    }
    for (const std::string& line : r.log) run.log.push_back(absl::StrCat(who, line));
  }
  return run;
}

absl::Status RunReport(const Options& o) {
  const std::string& trace_path = o.trace_path;
  std::vector<std::string> inputs = o.script_args.scripts;
  inputs.push_back(trace_path);
  REVERIE_RETURN_IF_ERROR(CheckOutputs({o.out_path, o.timeline}, inputs));

  REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<whatif::LoadedTrace> base, LoadForCli(trace_path));
  const whatif::LoadedTrace& lt = *base;
  if (const size_t steps = lt.baseline.steps.size();
      o.timeline_view.step >= static_cast<int64_t>(steps)) {
    return UsageError(absl::StrCat("--timeline-step ", o.timeline_view.step, ": ", trace_path,
                                   " has ", steps, " step", steps == 1 ? "" : "s", " (0-",
                                   steps - 1, ")"));
  }
  report::AssembleInput in;
  in.trace_path = trace_path;
  in.trace = &lt.trace;
  in.build_counters = &lt.stats;
  in.baseline = &lt.graph;
  in.baseline_sim = &lt.baseline;
  in.settings = o.script_args.settings;
  Progress progress("predicting", 1);
  progress.Update(0, absl::StrJoin(o.script_args.scripts, ", "));
  REVERIE_ASSIGN_OR_RETURN(std::vector<whatif::NamedPrediction> predictions, whatif::PredictEachAndAll(lt, o.script_args, o.threads));
  for (const whatif::NamedPrediction& n : predictions) in.runs.push_back(ToRun(n));
  in.warning = whatif::UnexplainedWarning(depgraph::UnexplainedShare(lt.graph, lt.baseline));
  in.facts = whatif::FactLines(lt.model.facts);
  report::ReportData data = report::AssembleReport(in);
  data.top_n = o.top_n;
  if (o.advise) {
    progress.Update(0, "advise: predicting the candidates");
    whatif::AdviseOptions advise;
    advise.spec.limits = o.script_args.limits;
    advise.spec.script_dirs = o.script_args.script_dirs;
    advise.threads = o.threads;
    REVERIE_ASSIGN_OR_RETURN(whatif::Advice advice, whatif::Advise(lt, advise));
    data.has_advice = true;
    data.advice = whatif::AdviceSectionOf(advice, o.top_n);
  }
  absl::StatusOr<std::string> timeline_json = report::AssembleTimeline(in, o.timeline_view);
  if (!timeline_json.ok()) {
    return Prefixed(absl::StrCat("report: ", trace_path, ": "), timeline_json.status());
  }
  data.timeline_json = std::move(*timeline_json);
  const std::string html = report::RenderHtmlReport(data);
  // Atomically: a failed write leaves no half report behind.
  REVERIE_RETURN_IF_ERROR(WriteFileAtomically(o.out_path, html));
  if (!o.timeline.empty()) {
    const bool one = predictions.size() == 1;
    const whatif::Prediction* p = one ? &(predictions)[0].prediction : nullptr;
    REVERIE_RETURN_IF_ERROR(exporter::MaybeWriteTimeline(o.timeline, lt.graph, lt.baseline,
                                                       one ? &p->graph : nullptr,
                                                       one ? &p->sim : nullptr));
  }
  std::printf("report: %s (baseline %.3f ms", o.out_path.c_str(), data.baseline_ns / 1e6);
  for (const report::ScriptOutcome& s : data.scripts) {
    std::printf(", %s %.3f ms", s.name.c_str(), s.predicted_ns / 1e6);
  }
  std::printf(")\n");
  return absl::OkStatus();
}

RunFn SetupReport(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArg(app, "TRACE", &o->trace_path, "the profiled trace");
  AddScriptFlags(app, &o->script_args);
  AddPath(app, "-o,--output", &o->out_path, "the HTML page to write", "OUT.html")->required();
  AddTimelineFlag(app, &o->timeline);
  AddInt(app, "--timeline-step", &o->timeline_view.step, 0, kNoMax,
         "the step the timeline opens on (0-based; default the first counted one)",
         "a step number (0 = the first step)");
  AddInt(app, "--top", &o->top_n, 1, kNoMax,
         "rows of the changed layers and kernels, and advise's candidates (default 15)");
  app.add_flag("--advise", o->advise,
               "first section: what limits the step and what to try first (reverie advise)");
  AddInt(app, "--threads", &o->threads, 1, 1024,
         "predictions run at once (default: $REVERIE_THREADS, else every core; the answer is the same)");
  return [o] { return RunReport(*o); };
}

}  // namespace

REVERIE_COMMAND(report, "report", "self-contained HTML report of a trace and what-if scripts",
                SetupReport);

}  // namespace reverie::cli
