// File: whatif/validate.h
//
// `reverie validate BEFORE AFTER --script F` and the Python module's
// Trace.validate(): a prediction checked against a measured run of the
// optimized program. The prediction is BEFORE's graph
// transformed by the scripts and simulated; the measurement is AFTER's trace
// on its own measured times. Both sides, and the baseline (BEFORE simulated
// unchanged), are profiled the same way per counted step (step_time.h):
// step time, GPU busy time (the union of GPU work inside the step spans),
// CPU busy time (likewise for CPU work, gaps included), kernel count, time
// per kernel class and per kernel name.
//
// Noise. A measurement varies from step to step; a prediction can only be
// judged against that variation. A file's counted steps give its mean, its
// min-max range and standard deviation sd, and the standard error of its
// mean, se = sd / sqrt(n). Verdicts, on the mean step:
// - "cannot decide": the measured effect |AFTER - BEFORE| is at most
//   2 sqrt(se_before^2 + se_after^2) (Welch: the two means do not differ
//   beyond their noise), so the pair does not show what the optimization did;
// - "inside the noise band": the predicted mean lies within AFTER's mean
//   +- 2 se_after;
// - "outside the noise band" otherwise. A one-step AFTER has no band: the
//   verdict then rests on the error alone and says so.
#ifndef REVERIE_WHATIF_VALIDATE_H_
#define REVERIE_WHATIF_VALIDATE_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "depgraph/breakdown.h"
#include "depgraph/graph.h"
#include "depgraph/host_speed.h"
#include "depgraph/kernel_class.h"
#include "depgraph/step_time.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

// One side of the comparison, per counted step.
struct StepProfile {
  std::vector<depgraph::StepTime> steps;
  depgraph::StepStats stats;
  double gpu_busy_ns = 0;
  double cpu_busy_ns = 0;
  double kernels = 0;
  std::array<double, depgraph::kKernelClassCount> class_ns{};
  absl::flat_hash_map<std::string, std::pair<double, double>> by_name;  // count, ns per step
};

// Times are per task (indexed by TaskId value; kNotMeasured = skip).
StepProfile ProfileSteps(const depgraph::Graph& g, std::span<const int64_t> start,
                         std::span<const int64_t> end,
                         const std::vector<depgraph::StepTime>& steps);

struct Metric {
  std::string name;
  double baseline = 0, predicted = 0, measured = 0;
  double error_pct() const { return measured != 0 ? (predicted - measured) / measured * 100 : 0; }
};

struct KernelDelta {
  std::string name;
  double baseline_count = 0, predicted_count = 0, measured_count = 0;
  double baseline_us = 0, predicted_us = 0, measured_us = 0;
  std::string change;  // "added", "removed", "changed" (what the optimization did)
};

struct Validation {
  std::vector<std::string> step_names;
  std::vector<double> baseline_us, predicted_us, measured_us;  // per step
  depgraph::StepStats baseline, predicted, measured;
  std::string verdict;       // see the header
  double measured_effect_pct = 0;   // (AFTER - BEFORE) / BEFORE
  double predicted_effect_pct = 0;  // (predicted - baseline) / baseline
  double error_pct = 0;             // (predicted - AFTER) / AFTER, on the mean step
  std::vector<Metric> metrics;      // step, gpu busy, cpu busy, kernels (per step)
  std::vector<Metric> classes;      // us per step per kernel class
  std::vector<KernelDelta> kernels; // the largest measured changes
  // How fast AFTER's host ran kernel launches and pageable copies against
  // BEFORE's (depgraph/host_speed.h) and, where known and the scripts kept
  // the simulator's default schedule, the prediction again with every CPU
  // task (durations and gaps) and every pageable copy scaled by those
  // ratios: the error left once the
  // hosts' difference, which nothing in BEFORE shows, is taken out. An
  // attribution of the error, never the prediction: it reads AFTER.
  depgraph::HostSpeed host;
  double at_after_host_us = 0;  // 0: not computed
  double at_after_host_error_pct = 0;
  // The predicted step's change (%) with the CPU 10% slower
  // (Prediction::host_sensitivity_pct; -1: unknown): read from BEFORE alone,
  // it says which predictions rest on the host's speed before AFTER does.
  double host_sensitivity_pct = -1;
  // The share of BEFORE's distinct op names (aten::conv2d, ...) that AFTER
  // ran too; -1 when BEFORE records no ops. The corpus' pairs (AMP, fused
  // optimizers, batch and GPU changes) keep 90-100%; two models share what
  // every model runs (ResNet-50's ops in GPT-2: 51%): below kSameProgramOps
  // the text warns that AFTER may be another program.
  double op_overlap = -1;
};

inline constexpr double kSameProgramOps = 0.8;

Validation Validate(const StepProfile& baseline, const StepProfile& predicted,
                    const StepProfile& measured, const std::vector<std::string>& step_names,
                    int top_kernels);

std::string ValidationText(const Validation& v);
// `reverie validate --json`: the files, the CPU-time model ("ops" or
// "gaps") and the scripts, then `v` (times in us).
std::string ValidationJson(const Validation& v, const std::string& before,
                           const std::string& after, const std::string& cpu_model,
                           const std::vector<std::string>& scripts);

// One-line errors (kFailedPrecondition) when one trace has step markers and
// the other none, or their counted step counts differ (not the same loop
// profiled twice); a script's error as Predict gives it (`traceback` gets
// its Lua traceback, may be null).
absl::StatusOr<Validation> ValidatePrediction(const LoadedTrace& before,
                                              const LoadedTrace& after, const ScriptSpec& spec,
                                              int top_kernels, std::string* traceback = nullptr);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_VALIDATE_H_
