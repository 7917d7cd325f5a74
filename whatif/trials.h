// File: whatif/trials.h
//
// Many independent what-ifs on one loaded trace, run on all cores: what
// `reverie advise` ranks and `reverie scripts --trace` lists. A trial is one
// prediction (whatif::Predict: scripts in order, with settings) on its own
// copy of the baseline graph, with its own Lua engines; the trials share
// only the LoadedTrace, which nothing writes (pipeline.h), and the
// predictions some of them continue (Trial::after, read-only), so the
// results are the same, bit for bit, as running them one at a time, in any
// order.
//
// A trial's outcome is what a user reads first: the scripts changed the
// graph (applied: a predicted step), found nothing to change in this trace
// (reverie.nothing_to_change: the prediction is the baseline), refused
// (reverie.refuse), or failed (any other error, one line; or a prediction
// that empties a counted step which had work, which is no answer to rank).
#ifndef REVERIE_WHATIF_TRIALS_H_
#define REVERIE_WHATIF_TRIALS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "depgraph/step_time.h"
#include "lua/script_runner.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

struct Trial {
  std::vector<std::string> scripts;                           // in order
  std::vector<std::pair<std::string, std::string>> settings;  // [SCRIPT.]KEY=VALUE
  // The prediction of this trial's first scripts (as many as it has
  // reports), which the trial continues (PredictAfter) instead of running
  // them again; null: none. Set only where every setting of the trial names
  // its script (see PredictAfter).
  std::shared_ptr<const Prediction> after;
};

enum class TrialOutcome : uint8_t { kApplied, kUnchanged, kRefused, kFailed };
// "applied", "unchanged", "refused", "failed".
std::string_view TrialOutcomeName(TrialOutcome o);

struct TrialResult {
  TrialOutcome outcome = TrialOutcome::kFailed;
  // kUnchanged / kRefused: the script's reason; kFailed: the one-line error.
  std::string reason;
  depgraph::StepStats baseline, predicted;  // over the counted steps
  double speedup = 0;             // baseline / predicted mean step
  double work_factor = 1;         // Prediction::work_factor
  double throughput_speedup = 0;  // work_factor x speedup
  int64_t samples_per_step = 0;   // 0: unknown
  // The predicted step's change (%) with the CPU 10% slower
  // (Prediction::host_sensitivity_pct; -1: unknown).
  double host_sensitivity_pct = -1;
  // The first counted step's share of the change (depgraph::FirstStepShare).
  std::optional<double> first_step_share;
  std::set<std::string> used_settings;
  std::vector<lua::ScriptReport> reports;  // per script: parameters, log
};

// The refusal reason of a failed Predict ("kernels already bf16"), or ""
// when `s` is not a refusal (reverie.refuse).
std::string RefusalReason(const absl::Status& s);

// `common` gives the limits, script folders and sources every trial runs
// with (its scripts are ignored; its settings are added after each trial's
// own, so a user's --set wins); settings serve whichever trial's scripts
// declare them (ScriptSpec::settings_for_several_runs). `threads` 0 uses
// every core. Results are in trial order.
std::vector<TrialResult> RunTrials(const LoadedTrace& base, const std::vector<Trial>& trials,
                                   const ScriptSpec& common, int threads = 0);

// The predictions of `trials` (Trial::after ignored), for trials that
// later ones continue: null where one fails or chose its own schedule (a
// continuation then runs all its scripts).
std::vector<std::shared_ptr<const Prediction>> PredictTrials(const LoadedTrace& base,
                                                             const std::vector<Trial>& trials,
                                                             const ScriptSpec& common,
                                                             int threads = 0);

// The worker count RunTrials uses for `threads` (0: the machine's cores).
int TrialThreads(int threads, size_t trials);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_TRIALS_H_
