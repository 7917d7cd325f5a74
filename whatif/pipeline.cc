#include "whatif/pipeline.h"

#include <exception>
#include <mutex>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/parallel.h"
#include "base/sv.h"
#include "base/text.h"
#include "depgraph/host_speed.h"
#include "depgraph/kernel_class.h"
#include "frameworks/trace_loader.h"
#include "transforms/session.h"

namespace reverie::whatif {

absl::Status Named(const std::string& path, const absl::Status& s) {
  std::string msg = FirstLine(StdSv(s.message()));
  if (msg.find(path) == std::string::npos) msg = absl::StrCat(path, ": ", msg);
  return absl::Status(s.code(), msg);
}

namespace {

// What ran out of memory, naming the input (issue 29, D22: "internal error:
// std::bad_alloc" named neither the trace nor the script).
absl::Status OutOfMemory(const std::string& input, std::string_view while_doing) {
  return absl::ResourceExhaustedError(absl::StrCat(
      input, ": out of memory while ", Sv(while_doing),
      " (it needs more memory than is available to reverie)"));
}

absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadAndSimulateUnchecked(const std::string& path,
                                                                     const LoadOptions& options,
                                                                     std::string* stage) {
  auto progress = [&](int stage, std::string_view what) {
    if (options.progress) options.progress(stage, what);
  };
  auto out = std::make_unique<LoadedTrace>();
  out->path = path;
  progress(0, absl::StrCat("importing ", path));
  absl::StatusOr<Trace> trace = LoadTraceFile(path, options.import);
  if (!trace.ok()) return Named(path, trace.status());
  out->trace = std::move(*trace);
  *stage = "building the graph";
  progress(1, "building the graph");
  absl::StatusOr<depgraph::Graph> g = depgraph::BuildGraph(out->trace, options.build, &out->stats);
  if (!g.ok()) return Named(path, g.status());
  out->graph = std::move(*g);
  *stage = "simulating the baseline";
  progress(2, "simulating the baseline");
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(out->graph);
  if (!sim.ok()) {
    return Named(path, absl::Status(sim.status().code(),
                                    absl::StrCat("cannot simulate: ", sim.status().message())));
  }
  out->baseline = std::move(*sim);
  *stage = "reading the model's facts";
  out->model = depgraph::ModelInfoFromTrace(out->trace);
  out->model.facts = depgraph::DetectFacts(out->trace, out->graph);
  // How much the step moves with the host, while the graph is this
  // thread's alone (it is scaled in place and given back).
  if (options.host_sensitivity) {
    depgraph::SimOptions in_frame;
    in_frame.step_frame = &out->baseline.steps;
    out->host_sensitivity_pct =
        depgraph::HostSensitivityPct(out->graph, in_frame, out->baseline.mean_step_ns());
  }
  // Predictions share the loaded trace read-only, from several threads at
  // once (whatif/trials.h, the Python module).
  PrepareToShare(out->graph);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadAndSimulate(const std::string& path,
                                                            const LoadOptions& options) {
  if (path.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("a trace path holds a NUL byte");
  }
  std::string stage = "loading the trace";
  try {
    return LoadAndSimulateUnchecked(path, options, &stage);
  } catch (const std::bad_alloc&) {
    return OutOfMemory(path, stage);
  }
}

absl::StatusOr<std::vector<std::unique_ptr<LoadedTrace>>> LoadAndSimulateAll(
    const std::vector<std::string>& paths, const LoadOptions& options, int threads) {
  LoadOptions each = options;
  // The traces are the parallel work; each import's own threads would only
  // compete with the other imports for the cores.
  if (WorkerCount(threads, paths.size()) > 1) each.import.threads = 1;
  std::mutex progress_mu;
  if (options.progress) {
    each.progress = [&](int stage, std::string_view what) {
      std::lock_guard<std::mutex> lock(progress_mu);
      options.progress(stage, what);
    };
  }
  std::vector<absl::StatusOr<std::unique_ptr<LoadedTrace>>> loaded(paths.size());
  // A worker must not throw (base/parallel.h); what a library throws becomes
  // that trace's error, as main would have reported it.
  ParallelFor(paths.size(), threads, [&](size_t i) {
    try {
      loaded[i] = LoadAndSimulate(paths[i], each);
    } catch (const std::exception& e) {
      loaded[i] = absl::InternalError(absl::StrCat(paths[i], ": internal error: ", e.what()));
    }
  });
  std::vector<std::unique_ptr<LoadedTrace>> out;
  out.reserve(paths.size());
  for (absl::StatusOr<std::unique_ptr<LoadedTrace>>& l : loaded) {
    if (!l.ok()) return l.status();
    out.push_back(*std::move(l));
  }
  return out;
}

namespace {

// Runs spec.scripts on a copy of `start` (base.graph, or the graph of
// `before`'s scripts), the models calibrated on base.graph either way, and
// simulates; `before` (may be null) holds the scripts already run.
absl::StatusOr<Prediction> RunAndSimulate(const LoadedTrace& base, const Prediction* before,
                                          const ScriptSpec& spec, std::string* traceback) {
  auto script_error = [traceback](const absl::Status& s) {
    const std::string_view msg = StdSv(s.message());
    const size_t nl = msg.find('\n');
    // A refusal (reverie.refuse) is a deliberate one-line answer: no traceback.
    if (traceback != nullptr && nl != std::string_view::npos &&
        s.code() != absl::StatusCode::kFailedPrecondition) {
      *traceback = std::string(msg.substr(nl + 1));
    }
    return absl::Status(s.code(), FirstLine(msg));
  };
  lua::RunnerOptions options;
  options.limits = spec.limits;
  options.settings = spec.settings;
  options.script_dirs = spec.script_dirs;
  options.sources = spec.sources;
  options.settings_for_several_runs = spec.settings_for_several_runs;
  options.measured = &base.graph;
  options.step_frame = &base.baseline.steps;
  lua::ScriptRunner runner(std::move(options));
  // A step of 0 us has no speedup (issue 29, D27): refused before any
  // script runs, whatever the scripts would say about such a trace.
  if (!(base.baseline.mean_step_ns() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        base.path, ": every step of the baseline takes 0 us: there is no step time to predict "
        "a change of"));
  }
  Prediction p;
  const std::string scripts =
      spec.scripts.empty() ? base.path : absl::StrJoin(spec.scripts, ", ");
  try {
    // The scripts read the start graph in place; it is copied only when
    // they change nothing (a refusal copies nothing).
    const depgraph::Graph& start = before != nullptr ? before->graph : base.graph;
    if (absl::Status s = runner.Run(spec.scripts, base.model, start, &p.graph); !s.ok()) {
      return script_error(s);
    }
    if (!runner.changed()) p.graph = start;
  } catch (const std::bad_alloc&) {
    return OutOfMemory(scripts, "running the scripts");
  }
  depgraph::SimOptions opts;
  opts.policy = runner.schedule().policy();
  opts.step_frame = &base.baseline.steps;  // never a longer step for less work
  absl::StatusOr<depgraph::SimResult> sim = absl::InternalError("not simulated");
  try {
    sim = depgraph::Simulate(p.graph, opts);
  } catch (const std::bad_alloc&) {
    return OutOfMemory(scripts, "simulating the transformed graph");
  }
  // A Lua schedule key that failed explains a failed simulation best.
  if (absl::Status s = runner.policy_status(); !s.ok()) return script_error(s);
  if (!sim.ok()) {
    return Named(spec.scripts.empty() ? base.path : spec.scripts.back(),
                 absl::Status(sim.status().code(),
                              absl::StrCat("cannot simulate the transformed graph: ",
                                           sim.status().message())));
  }
  p.sim = std::move(*sim);
  // A step of 0 us has no speedup: refused rather than printed as "0.000x"
  // (issue 29, D27).
  if (!(p.sim.mean_step_ns() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        scripts, ": after the scripts every step takes 0 us (they removed its work, or moved it "
                 "out of every step): there is no step time to compare"));
  }
  p.changes = runner.total_changes();
  p.reports = runner.reports();
  p.used_settings = runner.used_settings();
  if (before != nullptr) {
    // As one run of all the scripts reports them: every script's report in
    // order, and the changes of all against the trace as built.
    p.reports.insert(p.reports.begin(), before->reports.begin(), before->reports.end());
    p.used_settings.insert(before->used_settings.begin(), before->used_settings.end());
    p.changes = transforms::Diff(base.graph, p.graph);
  }
  for (const lua::ScriptReport& r : p.reports) {
    p.work_factor *= r.work_factor;
    if (r.samples_per_step > 0) p.samples_per_step = r.samples_per_step;
    if (!r.runs_on.empty()) p.runs_on = r.runs_on;
  }
  p.schedule_kind = runner.schedule().kind;
  p.schedule_description = runner.schedule().description;
  if (p.schedule_kind == transforms::ScheduleChoice::Kind::kEarliestReady) {
    depgraph::SimOptions in_frame;
    in_frame.step_frame = &base.baseline.steps;
    p.host_sensitivity_pct = depgraph::HostSensitivityPct(p.graph, in_frame, p.sim.mean_step_ns());
  }
  return p;
}

}  // namespace

void PrepareToShare(const depgraph::Graph& g) {
  (void)g.adjacency();
  for (uint32_t t = 0; t < g.task_count(); ++t) {
    (void)depgraph::TaskClass(g, depgraph::TaskId(t));
    (void)depgraph::KernelNameMath(g, depgraph::TaskId(t));
  }
}

absl::StatusOr<Prediction> Predict(const LoadedTrace& base, const ScriptSpec& spec,
                                   std::string* traceback) {
  return RunAndSimulate(base, nullptr, spec, traceback);
}

absl::StatusOr<Prediction> PredictAfter(const LoadedTrace& base, const Prediction& before,
                                        const ScriptSpec& spec, std::string* traceback) {
  // A schedule policy other than the default may be a Lua key function,
  // which lives in the engine of the run that set it.
  if (before.schedule_kind != transforms::ScheduleChoice::Kind::kEarliestReady) {
    return absl::FailedPreconditionError(
        "a prediction that chose its own schedule cannot be continued: run all its scripts again");
  }
  return RunAndSimulate(base, &before, spec, traceback);
}

}  // namespace reverie::whatif
