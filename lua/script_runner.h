// File: lua/script_runner.h
//
// ScriptRunner: applies one or more optimization scripts, in order, to a
// graph. Each script runs in its own LuaEngine on an EditSession over the
// result of the previous one; the caller's graph is replaced only when every
// script succeeded and every --set key was used by some script (so a failed
// run leaves it untouched).
//
// Scripts are found by path, or by name in the script library, or are given
// as text under a name (RunnerOptions::sources, for the Python module):
// $REVERIE_SCRIPTS_DIR (':'-separated), then the folder compiled in at build
// time (the source tree's scripts/), then <binary>/../share/reverie/scripts.
//
// Invariants: the engines (and so any Lua schedule policy) live as long as
// the runner; schedule() may point into them.
#ifndef REVERIE_LUA_SCRIPT_RUNNER_H_
#define REVERIE_LUA_SCRIPT_RUNNER_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "depgraph/model_info.h"
#include "depgraph/step_time.h"
#include "lua/lua_engine.h"
#include "transforms/session.h"

namespace reverie::lua {

// Where library scripts are looked up, in order.
std::vector<std::string> DefaultScriptDirs();

struct ResolvedScript {
  std::string display_name;  // as the user gave it ("amp.lua" for "amp")
  std::string path;          // file to read; empty for a script given as text
  std::string stem;          // "amp"
  std::optional<std::string> source;  // the text of a script given as text
};
// kNotFound naming every place looked in.
absl::StatusOr<ResolvedScript> ResolveScript(const std::string& name_or_path,
                                             const std::vector<std::string>& dirs);

// "key=value" -> (key, value); kInvalidArgument when there is no '=' or no key.
absl::StatusOr<std::pair<std::string, std::string>> ParseSetting(const std::string& text);

struct ScriptReport {
  ResolvedScript script;
  std::vector<ParamValue> params;
  std::vector<std::string> log;
  transforms::ChangeSummary changes;
  std::string policy;  // the schedule policy after this script
  ScriptOutcome outcome = ScriptOutcome::kApplied;
  std::string outcome_reason;    // reverie.nothing_to_change / refuse
  double work_factor = 1;        // reverie.work_per_step
  int64_t samples_per_step = 0;  // 0: unknown
  std::string runs_on;           // reverie.runs_on ("" = the trace's GPU)
};

// What a script declares, read without a trace: its text and its
// parameters with their defaults and bounds, from a run in describe mode
// (ScriptContext::describe) against an empty graph and empty model facts.
// `described` is false when the script ended before reverie.params (it
// declares none, or said nothing_to_change first); an error is the
// script's, as a run would report it.
struct ScriptDescription {
  ResolvedScript script;
  std::string text;
  std::vector<ParamValue> params;
  bool described = false;
};
absl::StatusOr<ScriptDescription> DescribeScript(const std::string& name_or_path,
                                                 const EngineLimits& limits,
                                                 const std::vector<std::string>& dirs);

struct RunnerOptions {
  EngineLimits limits;
  std::vector<std::string> script_dirs = DefaultScriptDirs();
  std::vector<std::pair<std::string, std::string>> settings;  // --set, in order
  // Scripts given as text: a script named exactly as one of these (its
  // display name, e.g. "inline.lua") runs this text instead of a file.
  std::vector<std::pair<std::string, std::string>> sources;
  // Receives print / reverie.log lines as they come ("[amp.lua] ..."); may be empty.
  std::function<void(std::string_view)> log_sink;
  // For one run among several made from the same --set list (a report's
  // runs of each script alone): a setting for a script this run does not
  // hold, or that no script of this run declares, is left for the other
  // runs instead of refused; the caller checks with used_settings() that
  // every setting served some run.
  bool settings_for_several_runs = false;
  // The trace's graph as built, which the cost and launch models calibrate
  // on (ScriptContext::measured); null: the graph Run is given. A run that
  // continues another's result (whatif's PredictAfter) names the trace's.
  const depgraph::Graph* measured = nullptr;
  // The baseline's steps, the frame graph:simulate() reads its steps in
  // (ScriptContext::step_frame); null: none.
  const std::vector<depgraph::StepTime>* step_frame = nullptr;
};

class ScriptRunner {
 public:
  explicit ScriptRunner(RunnerOptions options);
  ~ScriptRunner();

  // Applies `scripts` to *graph (see the file comment). Errors carry the
  // script's message ("file.lua:LINE: message\n<traceback>").
  absl::Status Run(const std::vector<std::string>& scripts, const depgraph::ModelInfo& model,
                   depgraph::Graph* graph);
  // The same, reading `input` and writing the scripts' result to *result
  // only when one committed its edits (changed(): it did not say
  // reverie.nothing_to_change): a caller that keeps its input makes no copy
  // of it for scripts that fail, refuse or find nothing to change. `result`
  // may be &input.
  absl::Status Run(const std::vector<std::string>& scripts, const depgraph::ModelInfo& model,
                   const depgraph::Graph& input, depgraph::Graph* result);
  // Whether a script of the last Run committed its edits to *result.
  bool changed() const { return changed_; }

  const std::vector<ScriptReport>& reports() const { return reports_; }
  // The --set keys a script of this run declared (and so used).
  const std::set<std::string>& used_settings() const { return used_settings_; }
  // Changes of all scripts together (a task added then modified counts once).
  const transforms::ChangeSummary& total_changes() const { return total_; }
  // The policy to simulate the result with.
  const transforms::ScheduleChoice& schedule() const { return schedule_; }
  // The first error a Lua schedule key raised in any simulation so far.
  absl::Status policy_status() const;

 private:
  RunnerOptions options_;
  std::vector<std::unique_ptr<LuaEngine>> engines_;
  std::vector<ScriptReport> reports_;
  transforms::ChangeSummary total_;
  std::set<std::string> used_settings_;
  transforms::ScheduleChoice schedule_;
  bool changed_ = false;
};

}  // namespace reverie::lua

#endif  // REVERIE_LUA_SCRIPT_RUNNER_H_
