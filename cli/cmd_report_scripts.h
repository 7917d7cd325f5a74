// File: cli/cmd_report_scripts.h
//
// Shared by every command that runs scripts (`reverie predict`, `report`,
// `sweep`, `export`): load a trace, build and simulate its graph, and predict
// the effect of one or more optimization scripts run in order with the Lua
// engine, under the limits of the command's script flags (cli/script_args.h).
// Header-only because cli/ compiles command files straight into the
// executable (command.h), so there is no cli library to put it in.
//
// Errors are one line naming the file (trace or script).
#ifndef REVERIE_CLI_CMD_REPORT_SCRIPTS_H_
#define REVERIE_CLI_CMD_REPORT_SCRIPTS_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/sv.h"
#include "cli/script_args.h"
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

// What the scripts did, copied out of the ScriptRunner so that no Lua state
// outlives Predict (a custom schedule policy is only needed while simulating).
struct Prediction {
  depgraph::Graph graph;
  depgraph::SimResult sim;
  transforms::ChangeSummary changes;       // all scripts together
  std::vector<lua::ScriptReport> reports;  // per script: parameters, log, changes
  transforms::ScheduleChoice::Kind schedule_kind = transforms::ScheduleChoice::Kind::kEarliestReady;
  std::string schedule_description = "earliest_ready";
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

inline absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadAndSimulate(
    const std::string& path, const depgraph::BuildOptions& build = {}) {
  auto out = std::make_unique<LoadedTrace>();
  out->path = path;
  report::Progress progress("reverie", 3);
  progress.Update(0, "importing " + path);
  absl::StatusOr<Trace> trace = LoadTraceFile(path);
  if (!trace.ok()) return Named(path, trace.status());
  out->trace = std::move(*trace);
  progress.Update(1, "building the graph");
  absl::StatusOr<depgraph::Graph> g = depgraph::BuildGraph(out->trace, build, &out->stats);
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

// Runs args.scripts in order on a copy of the baseline graph (the library's
// ScriptRunner) with args.settings and args.limits (instruction budget,
// memory cap, sandbox), then simulates with the schedule policy the scripts
// chose. Every command predicts through here, so the script flags
// (cli/script_args.h) mean the same everywhere.
//
// Errors are one line naming the script (a Lua error: "file.lua:LINE: ...");
// when `traceback` is given it receives the lines after the first (Lua's
// stack traceback), for callers that show it.
inline absl::StatusOr<Prediction> Predict(const LoadedTrace& base, const ScriptArgs& args,
                                          std::string* traceback = nullptr) {
  auto script_error = [traceback](const absl::Status& s) {
    const std::string_view msg = StdSv(s.message());
    const size_t nl = msg.find('\n');
    if (traceback != nullptr && nl != std::string_view::npos) {
      *traceback = std::string(msg.substr(nl + 1));
    }
    return absl::Status(s.code(), OneLine(msg));
  };
  lua::RunnerOptions options;
  options.limits = args.limits;
  options.settings = args.settings;
  lua::ScriptRunner runner(std::move(options));
  Prediction p;
  p.graph = base.graph;
  if (absl::Status s = runner.Run(args.scripts, base.model, &p.graph); !s.ok()) {
    return script_error(s);
  }
  depgraph::SimOptions opts;
  opts.policy = runner.schedule().policy();
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(p.graph, opts);
  // A Lua schedule key that failed explains a failed simulation best.
  if (absl::Status s = runner.policy_status(); !s.ok()) return script_error(s);
  if (!sim.ok()) {
    return Named(args.scripts.empty() ? base.path : args.scripts.back(),
                 absl::Status(sim.status().code(),
                              absl::StrCat("cannot simulate the transformed graph: ",
                                           sim.status().message())));
  }
  p.sim = std::move(*sim);
  p.changes = runner.total_changes();
  p.reports = runner.reports();
  p.schedule_kind = runner.schedule().kind;
  p.schedule_description = runner.schedule().description;
  return p;
}

}  // namespace reverie::cli::report_scripts

#endif  // REVERIE_CLI_CMD_REPORT_SCRIPTS_H_
