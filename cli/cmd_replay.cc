// `reverie replay TRACE [--json] [--critical-path]`: builds the dependency
// graph, simulates it unchanged and prints measured vs simulated time per
// iteration (the fidelity of the baseline every what-if starts from), the
// Daydream-style breakdown and, when asked, the critical path.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "cli/command.h"
#include "cli/json_writer.h"
#include "cli/paths.h"
#include "cli/step_report.h"
#include "depgraph/breakdown.h"
#include "depgraph/builder.h"
#include "depgraph/critical_path.h"
#include "depgraph/replay.h"
#include "frameworks/trace_loader.h"
#include "report/timeline.h"

namespace reverie::cli {
namespace {

using depgraph::CriticalPath;
using depgraph::Graph;
using depgraph::ReplayReport;

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

void WriteBreakdownJson(JsonWriter& w, const Graph& g, const depgraph::GraphBreakdown& b) {
  auto spans = [&](const depgraph::TimeSplit& s) {
    w.BeginObject();
    w.Field("cpu_only_us", s.cpu_only_ns / 1e3);
    w.Field("gpu_only_us", s.gpu_only_ns / 1e3);
    w.Field("cpu_gpu_overlap_us", s.overlap_ns / 1e3);
    w.Field("idle_us", s.idle_ns / 1e3);
    w.EndObject();
  };
  w.BeginArray();
  for (const depgraph::IterationBreakdown& it : b.iterations) {
    w.BeginObject();
    w.Field("name", it.name);
    w.Key("measured");
    spans(it.measured);
    w.Key("simulated");
    spans(it.simulated);
    w.EndObject();
  }
  w.EndArray();
}

void WriteGroupsJson(JsonWriter& w, const std::vector<depgraph::GroupTime>& groups) {
  w.BeginArray();
  for (const depgraph::GroupTime& gt : groups) {
    w.BeginObject();
    w.Field("name", gt.name);
    w.Field("cpu_us", gt.cpu_ns / 1e3);
    w.Field("gpu_us", gt.gpu_ns / 1e3);
    w.EndObject();
  }
  w.EndArray();
}

void WriteCriticalPathJson(JsonWriter& w, const std::vector<CriticalPath>& paths) {
  auto shares = [&](const std::vector<depgraph::PathShare>& v) {
    w.BeginArray();
    for (const depgraph::PathShare& s : v) {
      w.BeginObject();
      w.Field("name", s.name);
      w.Field("us", s.ns / 1e3);
      w.Field("pct", s.pct);
      w.EndObject();
    }
    w.EndArray();
  };
  w.BeginArray();
  for (const CriticalPath& p : paths) {
    w.BeginObject();
    w.Field("name", p.name);
    w.Field("length_us", p.length_ns / 1e3);
    w.Field("tasks", static_cast<int64_t>(p.tasks.size()));
    w.Field("verdict", depgraph::BoundName(p.verdict));
    w.Key("by_resource_kind");
    shares(p.by_resource_kind);
    w.Key("by_phase");
    shares(p.by_phase);
    w.Key("by_layer");
    shares(p.by_layer);
    w.Key("by_kernel_class");
    shares(p.by_kernel_class);
    w.EndObject();
  }
  w.EndArray();
}

// The share of a step's critical path that is measured waiting no
// dependency explains (depgraph/critical_path.h unexplained_ns): replay keeps
// it as it was, so a prediction cannot move it. That share, not replay's 0%,
// says how much of the step the model explains.
double UnexplainedPct(const CriticalPath& p) {
  return p.length_ns > 0 ? 100.0 * static_cast<double>(p.unexplained_ns) / p.length_ns : 0;
}

void PrintText(const std::string& path, const Graph& g, const depgraph::BuildStats& stats,
               const ReplayReport& rep, const depgraph::GraphBreakdown& b,
               const std::vector<CriticalPath>& paths, bool show_paths) {
  std::printf("trace: %s\n", path.c_str());
  std::printf("graph: %zu tasks, %zu edges, %zu resources\n", g.live_task_count(),
              g.live_edge_count(), g.resource_count());
  // What the model inferred and what it could not explain (the full list is
  // in --json "build_counters").
  std::printf(
      "model: %lld sync edges (%lld inferred), %lld event edges (%lld inferred), %lld inter-thread "
      "(%lld inferred), %lld GPU ops without launch; untraced GPU time kept as stream gaps: "
      "%.1f us over %lld ops\n\n",
      static_cast<long long>(stats.Get("sync_edge_device") + stats.Get("sync_edge_stream") +
                             stats.Get("sync_edge_event") + stats.Get("inferred_sync") +
                             stats.Get("inferred_blocking_copy")),
      static_cast<long long>(stats.Get("inferred_sync") + stats.Get("inferred_blocking_copy")),
      static_cast<long long>(stats.Get("event_edge_recorded") + stats.Get("inferred_event_edge")),
      static_cast<long long>(stats.Get("inferred_event_edge")),
      static_cast<long long>(stats.Get("inferred_inter_thread") + stats.Get("thread_start_anchor")),
      static_cast<long long>(stats.Get("inferred_inter_thread")),
      static_cast<long long>(stats.Get("kernel_without_launch")),
      stats.Get("unexplained_stream_gap_ns") / 1e3,
      static_cast<long long>(stats.Get("unexplained_stream_gap")));
  std::printf("%s\n", kStepDefinition);
  std::printf("%-28s %14s %14s %9s %13s\n", "step", "measured_us", "simulated_us", "error",
              "unexplained");
  for (size_t i = 0; i < rep.iterations.size(); ++i) {
    const depgraph::IterationError& e = rep.iterations[i];
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
  for (const depgraph::IterationBreakdown& it : b.iterations) {
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

int RunReplay(const std::vector<std::string>& raw_args) {
  std::vector<std::string> args = raw_args;
  std::string timeline;
  if (absl::Status s = report::ExtractTimelineFlag(args, &timeline); !s.ok()) {
    return BadInput("replay: " + std::string(s.message()));
  }
  std::string path;
  bool json = false;
  bool critical = false;
  bool timings = false;
  for (const std::string& a : args) {
    if (a == "--json") {
      json = true;
    } else if (a == "--critical-path") {
      critical = true;
    } else if (a == "--timings") {
      timings = true;
    } else if (!a.empty() && a[0] == '-') {
      return BadInput("replay: unknown option '" + a + "'");
    } else if (path.empty()) {
      path = a;
    } else {
      return BadInput("replay: more than one TRACE given ('" + path + "', '" + a + "')");
    }
  }
  if (path.empty()) return BadInput("replay: missing TRACE (usage: replay TRACE [--json] [--critical-path] [--timeline OUT.json])");
  if (!timeline.empty()) {
    if (std::string why = OverwritesInput(timeline, {path}); !why.empty()) return BadInput(why);
  }
  Stopwatch clock;
  absl::StatusOr<Trace> trace = LoadTraceFile(path);
  clock.Lap("load");
  if (!trace.ok()) return BadInput(std::string(trace.status().message()));
  depgraph::BuildStats stats;
  absl::StatusOr<Graph> graph = depgraph::BuildGraph(*trace, {}, &stats);
  if (!graph.ok()) return BadInput(path + ": " + std::string(graph.status().message()));
  clock.Lap("build");
  absl::StatusOr<ReplayReport> rep = depgraph::Replay(*graph);
  if (!rep.ok()) return BadInput(path + ": cannot simulate: " + std::string(rep.status().message()));
  if (absl::Status s = report::MaybeWriteTimeline(timeline, *graph, rep->sim); !s.ok()) {
    return BadInput(std::string(s.message()));
  }
  clock.Lap("simulate");
  const depgraph::GraphBreakdown b = depgraph::ComputeBreakdown(*graph, rep->sim);
  clock.Lap("breakdown");
  const std::vector<CriticalPath> paths = depgraph::CriticalPaths(*graph, rep->sim);
  clock.Lap("critical_path");
  if (timings) std::fprintf(stderr, "timings: %s\n", clock.Report().c_str());
  if (!json) {
    PrintText(path, *graph, stats, *rep, b, paths, critical);
    return kExitOk;
  }
  JsonWriter w;
  w.BeginObject();
  w.Field("trace", path);
  w.Field("step_definition", kStepDefinition);
  w.Key("steps").BeginArray();
  for (size_t i = 0; i < rep->iterations.size(); ++i) {
    const depgraph::IterationError& e = rep->iterations[i];
    w.BeginObject();
    w.Field("name", e.name);
    w.Field("counted", e.counted);
    w.Field("measured_us", e.measured_us);
    w.Field("simulated_us", e.simulated_us);
    w.Field("error_pct", e.error_pct);
    if (i < paths.size()) {
      w.Field("unexplained_waiting_us", paths[i].unexplained_ns / 1e3);
      w.Field("unexplained_waiting_pct", UnexplainedPct(paths[i]));
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("step").BeginObject();
  w.Field("measured_us", rep->measured_steps.mean_ns / 1e3);
  w.Field("simulated_us", rep->simulated_steps.mean_ns / 1e3);
  w.Key("measured_noise");
  WriteStepJson(w, rep->measured_steps);
  w.Key("simulated_noise");
  WriteStepJson(w, rep->simulated_steps);
  w.EndObject();
  w.Key("replay_error").BeginObject();
  w.Field("steps_compared", rep->compared);
  if (rep->compared > 0) {
    w.Field("mean_abs_pct", rep->mean_abs_error_pct);
    w.Field("max_abs_pct", rep->max_abs_error_pct);
  } else {
    w.Key("mean_abs_pct").Null();
    w.Key("max_abs_pct").Null();
  }
  w.EndObject();
  w.Key("breakdown").BeginObject();
  w.Key("iterations");
  WriteBreakdownJson(w, *graph, b);
  w.Key("by_phase");
  WriteGroupsJson(w, b.by_phase);
  w.Key("by_layer");
  WriteGroupsJson(w, b.by_layer);
  w.EndObject();
  if (critical) {
    w.Key("critical_path");
    WriteCriticalPathJson(w, paths);
  }
  w.Key("build_counters").BeginObject();
  for (const auto& [name, value] : stats.counters) w.Field(name, value);
  w.EndObject();
  w.EndObject();
  std::printf("%s\n", w.str().c_str());
  return kExitOk;
}

}  // namespace

REVERIE_COMMAND(replay, "replay", "replay TRACE [--json] [--critical-path] [--timeline OUT.json] [--timings]",
                "simulate the trace unchanged: measured vs simulated time per iteration",
                RunReplay);

}  // namespace reverie::cli
