// File: cli/cmd_report_scripts.h
//
// Shared by `reverie predict`, `reverie report` and `reverie sweep`: load a trace, build and simulate its graph, and predict the
// effect of one or more optimization scripts run in order with the Lua
// engine. Header-only because cli/ compiles command files straight into the
// executable (command.h), so there is no cli library to put it in.
//
// Errors are one line naming the file (trace or script).
#ifndef REVERIE_CLI_CMD_REPORT_SCRIPTS_H_
#define REVERIE_CLI_CMD_REPORT_SCRIPTS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/sv.h"
#include "depgraph/builder.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "frameworks/trace_loader.h"
#include "report/progress.h"
#include "scripts/script_runner.h"
#include "transforms/model_info.h"
#include "transforms/session.h"

namespace reverie::cli::report_scripts {

struct LoadedTrace {
  std::string path;
  Trace trace;
  depgraph::Graph graph;
  depgraph::BuildStats stats;
  depgraph::SimResult baseline;
  transforms::ModelInfo model;
};

struct Prediction {
  depgraph::Graph graph;
  depgraph::SimResult sim;
  transforms::ChangeSummary changes;
  std::vector<std::string> log;
};

inline std::string OneLine(std::string_view s) {
  std::string line(s.substr(0, s.find('\n')));
  return line;
}

inline absl::Status Named(const std::string& path, const absl::Status& s) {
  std::string msg = OneLine(StdSv(s.message()));
  if (msg.find(path) == std::string::npos) msg = absl::StrCat(path, ": ", msg);
  return absl::Status(s.code(), msg);
}

inline absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadAndSimulate(const std::string& path) {
  auto out = std::make_unique<LoadedTrace>();
  out->path = path;
  report::Progress progress("reverie", 3);
  progress.Update(0, "importing " + path);
  absl::StatusOr<Trace> trace = LoadTraceFile(path);
  if (!trace.ok()) return Named(path, trace.status());
  out->trace = std::move(*trace);
  progress.Update(1, "building the graph");
  absl::StatusOr<depgraph::Graph> g = depgraph::BuildGraph(out->trace, {}, &out->stats);
  if (!g.ok()) return Named(path, g.status());
  out->graph = std::move(*g);
  progress.Update(2, "simulating the baseline");
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(out->graph);
  if (!sim.ok()) {
    return Named(path, absl::Status(sim.status().code(),
                                    absl::StrCat("cannot simulate: ", sim.status().message())));
  }
  out->baseline = std::move(*sim);
  out->model = transforms::ModelInfoFromTrace(out->trace);
  return out;
}

// Runs `scripts` in order on a copy of the baseline graph (the library's
// ScriptRunner: same lookup and --set rules as `reverie predict`), then
// simulates with the schedule policy the scripts chose.
inline absl::StatusOr<Prediction> Predict(
    const LoadedTrace& base, const std::vector<std::string>& scripts,
    const std::vector<std::pair<std::string, std::string>>& settings) {
  lua::RunnerOptions options;
  options.settings = settings;
  lua::ScriptRunner runner(std::move(options));
  Prediction p;
  p.graph = base.graph;
  if (absl::Status s = runner.Run(scripts, base.model, &p.graph); !s.ok()) {
    return absl::Status(s.code(), OneLine(StdSv(s.message())));
  }
  depgraph::SimOptions opts;
  opts.policy = runner.schedule().policy();
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(p.graph, opts);
  if (!sim.ok()) return Named(scripts.empty() ? base.path : scripts.back(), sim.status());
  if (absl::Status s = runner.policy_status(); !s.ok()) {
    return absl::Status(s.code(), OneLine(StdSv(s.message())));
  }
  p.sim = std::move(*sim);
  p.changes = runner.total_changes();
  for (const lua::ScriptReport& r : runner.reports()) {
    for (const std::string& line : r.log) p.log.push_back(line);
  }
  return p;
}

}  // namespace reverie::cli::report_scripts

#endif  // REVERIE_CLI_CMD_REPORT_SCRIPTS_H_
