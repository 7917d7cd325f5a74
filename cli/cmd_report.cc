// `reverie report TRACE --script F [--script F ...] [--set k=v ...] -o OUT.html
//  [--timeline OUT.json] [--timeline-step I] [--top N] [--lua-budget N]
//  [--lua-memory-mb N] [--no-sandbox]`: one self-contained HTML page with the
// baseline, each script's prediction (and, with several scripts, all of them
// applied in order), an interactive timeline of one step (report/timeline_view.h;
// --timeline-step picks the step it opens on, 0-based, default the first
// counted one), charts, top changed layers and kernels, the critical path and
// the anomaly counters (report/html.h). The script flags are predict's
// (cli/script_args.h); every run gets the same --set values and limits.
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/atomic_file.h"
#include "cli/load.h"
#include "cli/command.h"
#include "cli/paths.h"
#include "cli/script_args.h"
#include "report/assemble.h"
#include "report/html.h"
#include "report/progress.h"
#include "report/timeline.h"
#include "report/timeline_view.h"

namespace reverie::cli {
namespace {

constexpr char kUsage[] =
    "report TRACE --script F [--script F ...] [--set [SCRIPT.]KEY=VALUE ...] -o OUT.html "
    "[--timeline OUT.json] [--timeline-step I] [--top N] [--lua-budget N] [--lua-memory-mb N] "
    "[--no-sandbox]";

int RunReport(const std::vector<std::string>& raw_args) {
  std::vector<std::string> args = raw_args;
  std::string timeline;
  if (absl::Status s = report::ExtractTimelineFlag(args, &timeline); !s.ok()) {
    return BadInput(absl::StrCat("report: ", s.message()));
  }
  std::string trace_path, out_path;
  ScriptArgs script_args;
  const std::vector<std::string>& scripts = script_args.scripts;
  int top_n = 15;
  report::TimelineViewOptions timeline_view;
  std::string error;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= args.size()) return false;
      *v = args[++i];
      return true;
    };
    std::string v;
    if (ConsumeScriptArg("report", args, &i, &script_args, &error)) {
      if (!error.empty()) return BadInput(error);
    } else if (a == "-o" || a == "--output") {
      if (!value(&out_path)) return BadInput("report: -o needs an output path");
    } else if (a == "--timeline-step") {
      if (!value(&v) || !absl::SimpleAtoi(v, &timeline_view.step) || timeline_view.step < 0) {
        return BadInput("report: --timeline-step needs a step number (0 = the first step)");
      }
    } else if (a == "--top") {
      if (!value(&v) || !absl::SimpleAtoi(v, &top_n) || top_n <= 0) {
        return BadInput("report: --top needs a positive number");
      }
    } else if (a.size() > 1 && a[0] == '-') {
      return BadInput(
          absl::StrCat("report: unknown option '", a, "' (usage: reverie ", kUsage, ")"));
    } else if (trace_path.empty()) {
      trace_path = a;
    } else {
      return BadInput(
          absl::StrCat("report: more than one TRACE given ('", trace_path, "', '", a, "')"));
    }
  }
  if (trace_path.empty())
    return BadInput(absl::StrCat("report: missing TRACE (usage: reverie ", kUsage, ")"));
  if (out_path.empty()) return BadInput("report: missing -o OUT.html");
  {
    std::vector<std::string> inputs = scripts;
    inputs.push_back(trace_path);
    for (const std::string& out : {out_path, timeline}) {
      if (out.empty()) continue;
      if (std::string why = OverwritesInput(out, inputs); !why.empty()) return BadInput(why);
    }
  }

  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> base =
      LoadForCli(trace_path);
  if (!base.ok()) return BadInput(std::string(base.status().message()));
  const whatif::LoadedTrace& lt = **base;
  if (const size_t steps = lt.baseline.iterations.size();
      timeline_view.step >= static_cast<int64_t>(steps)) {
    return BadInput(absl::StrCat("report: --timeline-step ", timeline_view.step, ": ", trace_path,
                                 " has ", steps, " step", steps == 1 ? "" : "s", " (0-", steps - 1,
                                 ")"));
  }

  // Each script alone, then (with several) all of them in order.
  std::vector<std::pair<std::string, std::vector<std::string>>> runs;
  // Scripts are shown by file name: paths make unreadable chart labels.
  std::vector<std::string> names;
  for (const std::string& s : scripts) {
    names.push_back(std::filesystem::path(s).filename().string());
    runs.push_back({names.back(), {s}});
  }
  if (scripts.size() > 1) runs.push_back({absl::StrJoin(names, " + "), scripts});
  std::vector<whatif::Prediction> predictions(runs.size());
  report::AssembleInput in;
  in.trace_path = trace_path;
  in.trace = &lt.trace;
  in.build_counters = &lt.stats.counters;
  in.baseline = &lt.graph;
  in.baseline_sim = &lt.baseline;
  in.settings = script_args.settings;
  report::Progress progress("predicting", static_cast<int>(runs.size()));
  for (size_t i = 0; i < runs.size(); ++i) {
    progress.Update(static_cast<int>(i), runs[i].first);
    ScriptArgs run_args = script_args;
    run_args.scripts = runs[i].second;
    absl::StatusOr<whatif::Prediction> p = whatif::Predict(lt, run_args);
    report::PredictedRun run;
    run.name = runs[i].first;
    if (!p.ok()) {
      // A script that fails is bad input: say which and stop, as predict does.
      return BadInput(std::string(p.status().message()));
    }
    predictions[i] = std::move(*p);
    run.graph = &predictions[i].graph;
    run.sim = &predictions[i].sim;
    in.runs.push_back(std::move(run));
  }
  report::ReportData data = report::AssembleReport(in);
  data.top_n = top_n;
  absl::StatusOr<std::string> timeline_json = report::AssembleTimeline(in, timeline_view);
  if (!timeline_json.ok()) {
    return BadInput(absl::StrCat("report: ", trace_path, ": ", timeline_json.status().message()));
  }
  data.timeline_json = std::move(*timeline_json);
  const std::string html = report::RenderHtmlReport(data);
  // Atomically: a failed write leaves no half report behind.
  if (absl::Status s = WriteFileAtomically(out_path, html); !s.ok()) {
    return BadInput(std::string(s.message()));
  }

  if (!timeline.empty()) {
    const bool one = predictions.size() == 1;
    if (absl::Status s = report::MaybeWriteTimeline(timeline, lt.graph, lt.baseline,
                                                    one ? &predictions[0].graph : nullptr,
                                                    one ? &predictions[0].sim : nullptr);
        !s.ok()) {
      return BadInput(std::string(s.message()));
    }
  }
  std::printf("report: %s (baseline %.3f ms", out_path.c_str(), data.baseline_ns / 1e6);
  for (const report::ScriptOutcome& s : data.scripts) {
    std::printf(", %s %.3f ms", s.name.c_str(), s.predicted_ns / 1e6);
  }
  std::printf(")\n");
  return kExitOk;
}

}  // namespace

REVERIE_COMMAND(report, "report", kUsage,
                "self-contained HTML report of a trace and what-if scripts", RunReport);

}  // namespace reverie::cli
