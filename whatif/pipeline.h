// File: whatif/pipeline.h
//
// The what-if pipeline as a library: load a trace, build its dependency
// graph, simulate the baseline, run optimization scripts on a copy and
// simulate the prediction (Daydream's collect -> build -> transform ->
// simulate). Every command, test, benchmark and the Python module go through
// here, so a prediction is made one way.
//
// Invariants: a LoadedTrace is immutable once loaded (Predict works on a
// copy of its graph, and the graph's lazy caches are filled at load, so
// several threads may predict from one LoadedTrace at once); a Prediction
// owns everything it reports (no Lua state outlives Predict: a script's
// schedule policy is only used while it simulates). Errors are absl::Status with one line naming the file (trace)
// or the script ("file.lua:LINE: ..."); a Lua traceback, when any, is handed
// back separately.
#ifndef REVERIE_WHATIF_PIPELINE_H_
#define REVERIE_WHATIF_PIPELINE_H_

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/builder.h"
#include "depgraph/graph.h"
#include "depgraph/model_info.h"
#include "depgraph/simulator.h"
#include "frameworks/kineto/kineto_importer.h"
#include "lua/lua_engine.h"
#include "lua/script_runner.h"
#include "proto/trace.h"
#include "transforms/session.h"

namespace reverie::whatif {

struct LoadedTrace {
  std::string path;
  Trace trace;
  depgraph::Graph graph;
  depgraph::BuildStats stats;
  depgraph::SimResult baseline;
  depgraph::ModelInfo model;
  // The baseline step's change (%) with the host 10% slower
  // (depgraph::HostSensitivityPct); -1 when not measured
  // (LoadOptions::host_sensitivity).
  double host_sensitivity_pct = -1;
};

// Called with the stage (0: import, 1: build, 2: simulate) and what it does.
using ProgressFn = std::function<void(int stage, std::string_view what)>;

struct LoadOptions {
  ImportOptions
      import;  // JSON traces' (LoadAndSimulateAll: one thread each when several load at once)
  depgraph::BuildOptions build;
  ProgressFn progress;  // may be empty
  // Measure LoadedTrace::host_sensitivity_pct: one more simulation and a
  // pass over the graph (2.9% of `replay`'s instructions), so only for
  // what prints it (`predict`).
  bool host_sensitivity = false;
};

// Loads, builds and simulates the baseline. Errors name `path`.
absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadAndSimulate(const std::string& path,
                                                            const LoadOptions& options = {});

// LoadAndSimulate for each of `paths`, `threads` at once (0: $REVERIE_THREADS,
// else every core: the traces are independent), in `paths` order; the
// error is that of the first path, in that order, that failed, whatever
// the thread count. `options.progress` is called from one thread at a time.
absl::StatusOr<std::vector<std::unique_ptr<LoadedTrace>>> LoadAndSimulateAll(
    const std::vector<std::string>& paths, const LoadOptions& options = {}, int threads = 0);

// The scripts of a prediction and the limits they run under.
struct ScriptSpec {
  std::vector<std::string> scripts;                           // in order
  std::vector<std::pair<std::string, std::string>> settings;  // [SCRIPT.]KEY=VALUE, in order
  lua::EngineLimits limits;
  std::vector<std::string> script_dirs = lua::DefaultScriptDirs();
  // Scripts given as text, by name (lua::RunnerOptions::sources).
  std::vector<std::pair<std::string, std::string>> sources;
  // lua::RunnerOptions::settings_for_several_runs (one of a report's runs).
  bool settings_for_several_runs = false;
};

struct Prediction {
  depgraph::Graph graph;
  depgraph::SimResult sim;
  transforms::ChangeSummary changes;       // all scripts together
  std::vector<lua::ScriptReport> reports;  // per script: parameters, log, changes
  std::set<std::string> used_settings;     // the --set keys its scripts declared
  // Work (samples) per step relative to the baseline: the product of the
  // scripts' reverie.work_per_step factors; and the baseline's samples per
  // step when a script knew it (0: unknown).
  double work_factor = 1;
  int64_t samples_per_step = 0;
  std::string runs_on;  // the GPU table key the last script that said so moved the work to
  transforms::ScheduleChoice::Kind schedule_kind = transforms::ScheduleChoice::Kind::kEarliestReady;
  std::string schedule_description = "earliest_ready";
  // The predicted step's change (%) with the host 10% slower
  // (depgraph::HostSensitivityPct); -1 when unknown, as under a schedule
  // a script chose (its key function lives in the run that set it).
  double host_sensitivity_pct = -1;
};

// Runs spec.scripts in order on a copy of base.graph, each atomic, then
// simulates with the schedule policy they chose. `traceback` (may be null)
// receives the Lua traceback lines of a failing script.
absl::StatusOr<Prediction> Predict(const LoadedTrace& base, const ScriptSpec& spec,
                                   std::string* traceback = nullptr);

// Fills the lazy caches of `g` (adjacency, kernel classes, names' math) so
// that threads may share it read-only: no const use writes to it after
// (the loaded trace's graph, a prediction several trials continue).
void PrepareToShare(const depgraph::Graph& g);

// The prediction of `before`'s scripts followed by spec.scripts, without
// running the former again: spec.scripts run on a copy of before.graph,
// the models calibrated on base.graph as in one run of them all, and the
// reports, settings used and changes are those of all the scripts. The
// same prediction as Predict with before's scripts and settings and
// spec's, provided every setting of either names its script (STEM.KEY),
// so that neither run's scripts read the other's; advise's combinations
// share their first scripts this way. `before` must be a Predict of `base`
// that kept the default schedule (else an error: a Lua schedule key lives
// in the run that set it).
absl::StatusOr<Prediction> PredictAfter(const LoadedTrace& base, const Prediction& before,
                                        const ScriptSpec& spec, std::string* traceback = nullptr);

// `s` made one line (base/text.h FirstLine) that names `path`.
absl::Status Named(const std::string& path, const absl::Status& s);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_PIPELINE_H_
