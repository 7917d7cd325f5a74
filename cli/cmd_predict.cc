// `reverie predict TRACE --script FILE [--script FILE ...] [--set k=v ...]
// [--json] [--top N] [--lua-budget N] [--lua-memory-mb N] [--no-sandbox]`:
// Daydream's what-if question. Builds the dependency graph, simulates it
// unchanged (the baseline), applies the optimization scripts in order
// (lua/script_runner.h: each atomic, on a copy; the script flags and the
// prediction are shared with the other script commands, cli/script_args.h
// and whatif/pipeline.h), then simulates the result and reports
// predicted vs baseline step time, where the time goes (CPU only / GPU
// only / overlap), per-phase and per-layer busy-time deltas, and what the
// scripts changed.
//
// Both times are simulated, so the speedup compares like with like; `reverie
// replay` shows how close the baseline simulation is to the measured trace.
// Step times follow the one definition (depgraph/step_time.h: the profiler
// overview's step, ProfilerStep extended to its GPU work); the top-level
// figures are their mean over counted steps, shown with the baseline's own
// step-to-step spread so that a small predicted change can be read against
// the noise.
// Errors: one line "reverie: ..." on stderr and exit 2; a Lua error names
// file.lua:LINE (its traceback follows on later lines, text mode only).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/load.h"
#include "cli/paths.h"
#include "cli/script_args.h"
#include "depgraph/breakdown.h"
#include "depgraph/builder.h"
#include "depgraph/model_info.h"
#include "depgraph/simulator.h"
#include "export/timeline.h"
#include "frameworks/trace_loader.h"
#include "lua/script_runner.h"
#include "whatif/prediction_report.h"
#include "whatif/step_report.h"

namespace reverie::cli {
namespace {

using depgraph::Graph;
using depgraph::SimResult;
using whatif::kStepDefinition;
using whatif::StepText;

struct Options {
  std::string trace;
  ScriptArgs script;
  bool json = false;
  int top = 10;
  std::string timeline;
  depgraph::BuildOptions build;  // --cpu-model gaps: cpu_ops = false
};

void PrintText(const whatif::PredictionReport& r) {
  const depgraph::StepStats bs = depgraph::SummarizeSteps(r.base->steps);
  const depgraph::StepStats ps = depgraph::SummarizeSteps(r.pred->steps);
  const double base_us = bs.mean_ns / 1e3;
  const double pred_us = ps.mean_ns / 1e3;
  std::printf("trace: %s\n", r.trace_path.c_str());
  for (const lua::ScriptReport& s : r.prediction->reports) {
    std::printf("script: %s", s.script.display_name.c_str());
    const char* sep = " (";
    for (const lua::ParamValue& p : s.params) {
      std::printf("%s%s=%s%s", sep, p.name.c_str(), p.value_text.c_str(), p.overridden ? "*" : "");
      sep = ", ";
    }
    std::printf("%s\n", s.params.empty() ? "" : ")");
    for (const std::string& line : s.log) std::printf("  | %s\n", line.c_str());
    absl::PrintF("  changed: %lld added, %lld removed, %lld modified tasks; %+lld/-%lld edges; %lld new resources\n",
                 s.changes.added, s.changes.removed,
                 s.changes.modified,
                 s.changes.edges_added,
                 s.changes.edges_removed,
                 s.changes.resources_added);
  }
  if (r.prediction->schedule_kind != transforms::ScheduleChoice::Kind::kEarliestReady) {
    std::printf("schedule policy: %s\n", r.prediction->schedule_description.c_str());
  }
  std::printf("\n%s\n", kStepDefinition);
  std::printf("baseline (simulated)  %14.1f us per step   %s\n", base_us, StepText(bs).c_str());
  std::printf("predicted             %14.1f us per step   %s\n", pred_us, StepText(ps).c_str());
  std::printf("speedup               %14.3fx  (%+.1f%%)\n", pred_us > 0 ? base_us / pred_us : 0.0,
              base_us > 0 ? (pred_us - base_us) / base_us * 100 : 0.0);
  if (const double f = r.prediction->work_factor; f != 1 && pred_us > 0) {
    std::printf("throughput            %14.3fx  (each step does %gx the work", f * base_us / pred_us, f);
    if (const int64_t n = r.prediction->samples_per_step; n > 0) {
      std::printf(": %.1f -> %.1f samples/s", n / base_us * 1e6, n * f / pred_us * 1e6);
    }
    std::printf(")\n");
  }
  std::printf("whole run             %14.1f us -> %.1f us (first task to last, all steps)\n",
              r.base->span_ns() / 1e3, r.pred->span_ns() / 1e3);
  if (const std::string h = whatif::HostSensitivityText(r); !h.empty())
    std::printf("%s\n", h.c_str());
  if (const std::string w = whatif::UnexplainedWarning(r.base_unexplained); !w.empty()) {
    std::printf("%s\n", w.c_str());
  }
  for (const whatif::MemoryFit& f : r.memory) std::printf("%s\n", whatif::MemoryFitLine(f).c_str());
  if (const std::string f = whatif::FirstStepNote(r); !f.empty()) std::printf("%s\n", f.c_str());
  if (bs.counted > 1 && std::fabs(pred_us - base_us) * 1e3 < bs.max_ns - bs.min_ns) {
    std::printf("note: the predicted change is smaller than the baseline's own step-to-step spread "
                "(%.1f us)\n", (bs.max_ns - bs.min_ns) / 1e3);
  }
  const size_t n = std::min(r.base->steps.size(), r.pred->steps.size());
  if (n > 1) {
    std::printf("\n%-28s %14s %14s %9s\n", "step", "baseline_us", "predicted_us", "change");
    for (size_t i = 0; i < n; ++i) {
      const double b = r.base_iter_us[i];
      const double p = r.pred_iter_us[i];
      std::printf("%-28s %14.1f %14.1f %+8.1f%%%s\n",
                  whatif::StepName(*r.base_graph, r.base->steps[i], i).c_str(), b, p,
                  b > 0 ? (p - b) / b * 100 : 0.0,
                  r.base->steps[i].counted ? "" : "  (not counted)");
    }
  }
  std::printf("\nwhere the time goes (us per step)       %12s %12s\n", "baseline", "predicted");
  const depgraph::TimeSplit& b = r.base_split;
  const depgraph::TimeSplit& p = r.pred_split;
  std::printf("  cpu only                               %12.1f %12.1f\n", b.cpu_only_ns / 1e3, p.cpu_only_ns / 1e3);
  std::printf("  gpu only                               %12.1f %12.1f\n", b.gpu_only_ns / 1e3, p.gpu_only_ns / 1e3);
  std::printf("  cpu + gpu                              %12.1f %12.1f\n", b.overlap_ns / 1e3, p.overlap_ns / 1e3);
  std::printf("  idle                                   %12.1f %12.1f\n", b.idle_ns / 1e3, p.idle_ns / 1e3);
  auto table = [](const char* title, const std::vector<whatif::GroupDelta>& v) {
    if (v.empty()) return;
    std::printf("\n%-30s %11s %11s %11s %11s %11s\n", title, "base_cpu", "base_gpu", "pred_cpu",
                "pred_gpu", "delta");
    for (const whatif::GroupDelta& d : v) {
      std::printf("  %-28.28s %11.1f %11.1f %11.1f %11.1f %+11.1f\n", d.name.c_str(), d.base_cpu_us,
                  d.base_gpu_us, d.pred_cpu_us, d.pred_gpu_us, d.delta_us());
    }
  };
  table("busy time by phase (us/iter)", r.phases);
  table("top layers by change (us/iter)", r.layers);
}

absl::Status RunPredict(Options& opt) {
  if (opt.script.scripts.empty()) {
    return UsageError("give at least one --script (e.g. --script amp.lua)");
  }
  opt.top = std::min(opt.top, 1000000);
  std::vector<std::string> inputs = opt.script.scripts;
  inputs.push_back(opt.trace);
  REVERIE_RETURN_IF_ERROR(CheckOutputs({opt.timeline}, inputs));
  whatif::LoadOptions load = Building(opt.build);
  load.host_sensitivity = true;  // printed beside the prediction's
  REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<whatif::LoadedTrace> loaded,
                           LoadForCli(opt.trace, load));
  const Graph* graph = &loaded->graph;
  const SimResult* base = &loaded->baseline;

  std::string traceback;
  absl::StatusOr<whatif::Prediction> prediction =
      whatif::Predict(*loaded, opt.script, &traceback);
  if (!prediction.ok()) {
    // The first line always; Lua's traceback only in text mode.
    return opt.json ? prediction.status() : WithDetail(prediction.status(), traceback);
  }
  const Graph& predicted = prediction->graph;
  const SimResult* pred = &prediction->sim;
  REVERIE_RETURN_IF_ERROR(exporter::MaybeWriteTimeline(opt.timeline, *graph, *base, &predicted, pred));

  const whatif::PredictionReport r = whatif::SummarizePrediction(*loaded, *prediction, opt.top);
  if (opt.json) {
    std::printf("%s\n", whatif::PredictionJson(r).c_str());
  } else {
    PrintText(r);
  }
  return absl::OkStatus();
}

RunFn SetupPredict(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArg(app, "TRACE", &o->trace, "the profiled trace");
  AddScriptFlags(app, &o->script);
  app.add_flag("--json", o->json, "machine-readable output");
  AddInt(app, "--top", &o->top, 1, kNoMax, "layers listed by change (default 10)");
  AddTimelineFlag(app, &o->timeline);
  AddCpuModelFlag(app, &o->build);
  return [o] { return RunPredict(*o); };
}

}  // namespace

REVERIE_COMMAND(predict, "predict",
                "apply optimization scripts (Lua) and predict the new step time",
                SetupPredict);

}  // namespace reverie::cli
