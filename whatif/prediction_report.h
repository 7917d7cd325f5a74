// File: whatif/prediction_report.h
//
// What a prediction reports beside its step times: where the time goes
// (CPU only / GPU only / overlap / idle, mean over counted steps), busy time
// per phase and per layer, baseline vs predicted, per step, and the JSON of
// `reverie predict --json`, which the Python module's Trace.predict() reads
// too, so both give the same fields in the same units (us).
//
// Invariants: a PredictionReport points into the LoadedTrace and the
// Prediction it was made from; it must not outlive them.
#ifndef REVERIE_WHATIF_PREDICTION_REPORT_H_
#define REVERIE_WHATIF_PREDICTION_REPORT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "depgraph/breakdown.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "depgraph/step_time.h"
#include "whatif/memory_fit.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

// Busy time of one phase or layer per step, baseline vs predicted.
struct GroupDelta {
  std::string name;
  double base_cpu_us = 0, base_gpu_us = 0, pred_cpu_us = 0, pred_gpu_us = 0;
  double delta_us() const { return (pred_cpu_us + pred_gpu_us) - (base_cpu_us + base_gpu_us); }
};

struct PredictionReport {
  std::string trace_path;
  const depgraph::Graph* base_graph = nullptr;
  const depgraph::Graph* pred_graph = nullptr;
  const depgraph::SimResult* base = nullptr;
  const depgraph::SimResult* pred = nullptr;
  const Prediction* prediction = nullptr;
  std::vector<GroupDelta> phases, layers;  // layers: the `top` that changed most
  depgraph::TimeSplit base_split, pred_split;
  std::vector<double> base_iter_us, pred_iter_us;
  // The baseline's critical path share no dependency explains (0..1); above
  // kUnexplainedWarning the prediction says it cannot move that part.
  double base_unexplained = 0;
  // The steps' change (%) with the host 10% slower (-1: unknown).
  double base_host_sensitivity_pct = -1, pred_host_sensitivity_pct = -1;
  std::optional<double> first_step_share;  // depgraph::FirstStepShare
  std::vector<MemoryFit> memory;  // per GPU whose allocations the trace recorded
};

inline constexpr double kUnexplainedWarning = 0.2;
// The one-line warning for a share above kUnexplainedWarning, else "".
std::string UnexplainedWarning(double share);

// The note predict prints when the first counted step holds
// depgraph::kFirstStepNote or more of the change (depgraph::FirstStepShare),
// else "".
std::string FirstStepNote(const PredictionReport& r);

// "host speed ..." lines: the two sensitivities, and a note when the
// prediction is bound by the host; "" when unknown.
std::string HostSensitivityText(const PredictionReport& r);

PredictionReport SummarizePrediction(const LoadedTrace& base, const Prediction& prediction,
                                     int top);

// `reverie predict --json`.
std::string PredictionJson(const PredictionReport& r);

// The step's name in `g`, or "step i".
std::string StepName(const depgraph::Graph& g, const depgraph::StepTime& it, size_t i);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_PREDICTION_REPORT_H_
