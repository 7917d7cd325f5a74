// `reverie replay TRACE [--json] [--critical-path]`: builds the dependency
// graph, simulates it unchanged and prints measured vs simulated time per
// step (the fidelity of the baseline every what-if starts from), the
// Daydream-style breakdown and, when asked, the critical path.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/paths.h"
#include "depgraph/breakdown.h"
#include "depgraph/builder.h"
#include "depgraph/critical_path.h"
#include "depgraph/replay.h"
#include "export/timeline.h"
#include "whatif/pipeline.h"
#include "whatif/replay.h"
#include "whatif/step_report.h"

namespace reverie::cli {
namespace {

using depgraph::CriticalPath;
using depgraph::Graph;
using depgraph::ReplayReport;
using whatif::kStepDefinition;
using whatif::StepText;
using whatif::UnexplainedPct;

// Wall time per phase, for --timings (stderr, so --json stays clean).
class Stopwatch {
 public:
  void Lap(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    report_ += absl::StrFormat("%s%s %.1f ms", report_.empty() ? "" : ", ", name,
                               std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }
  const std::string& Report() const { return report_; }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::string report_;
};

void PrintText(const std::string& path, const Graph& g, const depgraph::BuildStats& stats,
               const ReplayReport& rep, const depgraph::GraphBreakdown& b,
               const std::vector<CriticalPath>& paths, bool show_paths) {
  std::printf("trace: %s\n", path.c_str());
  std::printf("graph: %zu tasks, %zu edges, %zu resources\n", g.live_task_count(),
              g.live_edge_count(), g.resource_count());
  // What the model inferred and what it could not explain (the full list is
  // in --json "build_counters").
  absl::PrintF(
      "model: %lld sync edges (%lld inferred), %lld event edges (%lld inferred), %lld inter-thread "
      "(%lld inferred), %lld GPU ops without launch; untraced GPU time kept as stream gaps: "
      "%.1f us over %lld ops\n\n",
      stats.Get(depgraph::BuildCounter::sync_edge_device) + stats.Get(depgraph::BuildCounter::sync_edge_stream) +
                             stats.Get(depgraph::BuildCounter::sync_edge_event) + stats.Get(depgraph::BuildCounter::inferred_sync) +
                             stats.Get(depgraph::BuildCounter::inferred_blocking_copy),
      stats.Get(depgraph::BuildCounter::inferred_sync) + stats.Get(depgraph::BuildCounter::inferred_blocking_copy),
      stats.Get(depgraph::BuildCounter::event_edge_recorded) + stats.Get(depgraph::BuildCounter::inferred_event_edge),
      stats.Get(depgraph::BuildCounter::inferred_event_edge),
      stats.Get(depgraph::BuildCounter::inferred_inter_thread) + stats.Get(depgraph::BuildCounter::thread_start_anchor),
      stats.Get(depgraph::BuildCounter::inferred_inter_thread),
      stats.Get(depgraph::BuildCounter::kernel_without_launch),
      stats.Get(depgraph::BuildCounter::unexplained_stream_gap_ns) / 1e3,
      stats.Get(depgraph::BuildCounter::unexplained_stream_gap));
  std::printf("%s\n", kStepDefinition);
  std::printf("%-28s %14s %14s %9s %13s\n", "step", "measured_us", "simulated_us", "error",
              "unexplained");
  for (size_t i = 0; i < rep.steps.size(); ++i) {
    const depgraph::StepError& e = rep.steps[i];
    const double unexplained = i < paths.size() ? UnexplainedPct(paths[i]) : 0;
    std::printf("%-28s %14.1f %14.1f %+8.2f%% %12.1f%%%s\n", e.name.c_str(), e.measured_us,
                e.simulated_us, e.error_pct, unexplained, e.counted ? "" : "  (not counted)");
  }
  std::printf("step time: measured %s\n", StepText(rep.measured_steps).c_str());
  std::printf("           simulated %s\n", StepText(rep.simulated_steps).c_str());
  if (rep.compared == 0) {
    std::printf("replay error: no step with a measured time to compare\n");
  } else {
    std::printf("replay error: mean abs %.2f%%, max abs %.2f%% over %d steps (a regression guard: "
                "replay is exact by construction, not a measure of accuracy)\n",
                rep.mean_abs_error_pct, rep.max_abs_error_pct, rep.compared);
  }
  std::printf("unexplained: the share of each step's critical path that is measured waiting no "
              "dependency explains (kept as it was; a prediction cannot move it)\n\n");
  std::printf("%-34s %10s %10s %10s %10s\n", "breakdown (us)", "cpu_only", "gpu_only", "overlap",
              "idle");
  for (const depgraph::StepBreakdown& it : b.steps) {
    const depgraph::TimeSplit* rows[2] = {&it.measured, &it.simulated};
    const char* labels[2] = {"measured", "simulated"};
    for (int k = 0; k < 2; ++k) {
      std::printf("  %-22.22s %-9s %10.1f %10.1f %10.1f %10.1f\n", it.name.c_str(), labels[k],
                  rows[k]->cpu_only_ns / 1e3, rows[k]->gpu_only_ns / 1e3,
                  rows[k]->overlap_ns / 1e3, rows[k]->idle_ns / 1e3);
    }
  }
  std::printf("\n%-34s %10s %10s\n", "by phase (us, cpu incl. gaps)", "cpu", "gpu");
  for (const depgraph::GroupTime& gt : b.by_phase) {
    std::printf("  %-32s %10.1f %10.1f\n", gt.name.c_str(), gt.cpu_ns / 1e3, gt.gpu_ns / 1e3);
  }
  if (!show_paths) return;
  for (const CriticalPath& p : paths) {
    std::printf("\ncritical path of %s: %.1f us over %zu tasks -> %s-bound\n", p.name.c_str(),
                p.length_ns / 1e3, p.tasks.size(), std::string(depgraph::BoundName(p.verdict)).c_str());
    auto top = [](const char* title, const std::vector<depgraph::PathShare>& v) {
      std::printf("  %s:", title);
      for (size_t i = 0; i < v.size() && i < 5; ++i) {
        std::printf(" %s %.1f%%;", v[i].name.c_str(), v[i].pct);
      }
      std::printf("\n");
    };
    top("resource", p.by_resource_kind);
    top("phase", p.by_phase);
    top("kernel class", p.by_kernel_class);
    top("layer", p.by_layer);
  }
}

struct Options {
  std::string path;
  bool json = false;
  bool critical = false;
  bool timings = false;
  std::string timeline;
};

absl::Status RunReplay(const Options& o) {
  const std::string& path = o.path;
  REVERIE_RETURN_IF_ERROR(CheckOutputs({o.timeline}, {path}));
  Stopwatch clock;
  static const char* const kStage[] = {"load", "build", "simulate"};
  whatif::LoadOptions load;
  // A stage's lap ends when the next begins (simulate: below).
  load.progress = [&clock](int stage, std::string_view) {
    if (stage > 0 && stage <= 2) clock.Lap(kStage[stage - 1]);
  };
  REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<whatif::LoadedTrace> t, whatif::LoadAndSimulate(path, load));
  clock.Lap("simulate");
  REVERIE_RETURN_IF_ERROR(exporter::MaybeWriteTimeline(o.timeline, t->graph, t->baseline));
  const whatif::ReplayResult r = whatif::Replay(*t);
  clock.Lap("breakdown and critical paths");
  if (o.timings) std::fprintf(stderr, "timings: %s\n", clock.Report().c_str());
  if (!o.json) {
    PrintText(path, t->graph, t->stats, r.report, r.breakdown, r.paths, o.critical);
  } else {
    std::printf("%s\n", whatif::ReplayJson(*t, r, o.critical).c_str());
  }
  return absl::OkStatus();
}

RunFn SetupReplay(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArg(app, "TRACE", &o->path, "the trace");
  app.add_flag("--json", o->json, "machine-readable output");
  app.add_flag("--critical-path", o->critical, "show each step's critical path");
  AddTimelineFlag(app, &o->timeline);
  app.add_flag("--timings", o->timings, "wall time per phase on stderr");
  return [o] { return RunReplay(*o); };
}

}  // namespace

REVERIE_COMMAND(replay, "replay",
                "simulate the trace unchanged: measured vs simulated time per step",
                SetupReplay);

}  // namespace reverie::cli
