// File: whatif/diagnosis.h
//
// What limits a step, in three lines a student understands: the first
// part of `reverie advise`. From the baseline simulation's critical paths
// (depgraph/critical_path.h: the chain of tasks that bounds each step) and
// its breakdown (depgraph/breakdown.h: how busy the CPU and the GPU are),
// over the counted steps.
//
// The critical path's time is split into six causes: data loading (CPU work
// of the DataLoader phase), CPU (the rest of the CPU: Python, op dispatch,
// kernel launches), GPU (kernels), host copies (memcpy / memset),
// communication (collectives and NCCL/RCCL kernels), and idle (what is
// left: launch and sync latency, waiting the trace does not explain).
// The three lines: the step and how busy each side is; the causes on the
// critical path; which side bounds the step (the one busy nearly all of it)
// and what to try, in the order of that side's causes.
#ifndef REVERIE_WHATIF_DIAGNOSIS_H_
#define REVERIE_WHATIF_DIAGNOSIS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "depgraph/step_time.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

// The causes, as keys ("data loading", "CPU", "GPU", "host copies",
// "communication", "idle").
inline constexpr std::string_view kDataLoading = "data loading";
inline constexpr std::string_view kCpu = "CPU";
inline constexpr std::string_view kGpu = "GPU";
inline constexpr std::string_view kHostCopies = "host copies";
inline constexpr std::string_view kCommunication = "communication";
inline constexpr std::string_view kIdle = "idle";

struct LimitShare {
  std::string what;        // one of the keys above
  double share = 0;        // of the critical path, 0..1
  double us_per_step = 0;  // critical-path time per counted step
};

struct Diagnosis {
  depgraph::StepStats step;   // the baseline's counted steps
  double gpu_busy = 0;        // share of the step the GPU works (0..1)
  double cpu_busy = 0;        // likewise the CPU
  std::vector<LimitShare> limits;  // every cause, largest first
  std::string bound;               // limits[0].what, or "" without steps
  // The side busy nearly all the step (90% or more), which bounds it
  // whatever the critical path's shares: "CPU", "GPU", "both", "neither";
  // "no GPU" when the trace records no GPU work at all.
  std::string side;
  double unexplained = 0;          // depgraph::UnexplainedShare
  std::string warning;             // UnexplainedWarning, or ""
  std::vector<std::string> lines;  // the three lines
  // The share of `what` (0 when absent).
  double Share(std::string_view what) const;
};

// Reads base.graph's critical paths (which fill its lazy caches): call it
// before sharing `base` with other threads (whatif/trials.h).
Diagnosis Diagnose(const LoadedTrace& base);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_DIAGNOSIS_H_
