// File: depgraph/step_time.h
//
// The step time: the one definition every command, script and JSON output
// uses (docs/ACCURACY.md). It is the number the PyTorch profiler's
// TensorBoard overview shows: the `ProfilerStep#N` CPU span extended to the
// GPU work the step launched (kineto tb_plugin's StepParser), because that
// is what a user compares reverie with. Where every step synchronizes with
// the GPU it equals the CPU span; where the CPU runs ahead (no sync, CUDA
// graphs) the CPU span is no step time at all and the GPU period is.
//
// The rule, for steps s_1..s_n with CPU spans [a_i, b_i]:
// 1. A GPU task (kernel, memcpy, memset, communication) belongs to the step
//    whose CPU span contains the whole runtime call that launched it (the
//    builder tags it: Graph::step_of; -1 = no step).
// 2. prev = a_1, raised to the end of every GPU task of no step that ends
//    before step 1's first GPU task.
// 3. start_i = max(prev, a_i); end_i = max(b_i, end of step i's last GPU
//    task), or max(b_i, start_i) when it launched none; prev = end_i.
// 4. Trailing steps that launched no GPU task are not counted, nor is the
//    last step when it launched fewer than 0.8x the GPU tasks of the one
//    before (the profiler did not capture all its work). The builder decides
//    this once on the measured trace (Step::counted), so a prediction
//    averages over the same steps as its baseline.
// 5. The step time is the mean over counted steps; its noise band is their
//    min, max and standard deviation.
// 6. Without any GPU task the steps are the CPU spans. A trace without step
//    markers is one step from its first task's start to its last task's end.
//
// The same function reads measured times (the trace's) and simulated times
// (a SimResult's): a_i and b_i are the times of the step's zero-length
// marker tasks (Graph::step_mark), which the simulator moves like any task.
//
// A prediction is read in its baseline's frame (StepSpans' `frame`): what
// the baseline left out of its steps stays out. Its first step starts no
// earlier than the baseline's first step did less A, and step i starts no
// earlier than d_i after step i-1 ends, d_i = the baseline's start_i -
// end_{i-1} (the CPU time between ProfilerStep spans the rule above does
// not count). A is the least any counted step's own end (its end marker or
// last GPU task, before the rule raises it to its start) moved earlier than
// the baseline's end, or 0.
// Why: the rule starts step 1 where earlier GPU work ends (rule 2) and drops
// the time between steps, so a prediction that shortens the work before
// step 1, or the CPU between steps, would see its steps grow while its run
// ends no later. In the frame, take the last counted step k that ends at
// its own end: the counted steps sum to at most end_k - start_1(baseline) +
// A - sum d_i <= the baseline's steps up to k (A <= how much end_k moved),
// so a prediction whose work only shrinks (the simulator is max-plus: no
// task ends later) never reports a longer step. A lets a run that moved
// earlier as a whole be read where it now runs: without it the first step
// was cut off at the baseline's start, after its own work had run (a step
// of 0 us, a speedup of 6x for a run 2.2x shorter). Read on the baseline
// itself the frame changes nothing.
#ifndef REVERIE_DEPGRAPH_STEP_TIME_H_
#define REVERIE_DEPGRAPH_STEP_TIME_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "depgraph/graph.h"

namespace reverie::depgraph {

// One step's span under the rule above.
struct StepTime {
  int32_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool counted = true;  // Step::counted of the graph
  int64_t duration_ns() const { return end_ns - start_ns; }
};

// The step time and its noise band over the counted steps (all in ns).
struct StepStats {
  int counted = 0;
  double mean_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
  double stddev_ns = 0;  // population standard deviation; 0 for one step

  // The standard error of the mean step (0 for one step): two means closer
  // than twice their errors combined cannot be told apart (validate's
  // verdict, advise's order note).
  double mean_error_ns() const {
    return counted > 1 ? stddev_ns / std::sqrt(static_cast<double>(counted)) : 0;
  }
};

// The noise between two means with standard errors `a` and `b` (in one
// unit): twice their errors combined. Means closer than this cannot be
// told apart (validate's verdict, advise's first place).
inline double TwoMeansNoise(double a, double b) { return 2 * std::sqrt(a * a + b * b); }

// Per-task times under which to read steps or splits: indexed by TaskId
// value; kNotMeasured for a task to skip.
struct TaskTimes {
  std::vector<int64_t> start;
  std::vector<int64_t> end;
};
// The trace's measured times: measured_start_ns and + duration for traced
// tasks; kNotMeasured for inserted and removed ones.
TaskTimes MeasuredTimes(const Graph& graph);

// Step spans of `graph` under per-task times start[t], end[t] (indexed by
// TaskId value; a task with end[t] == kNotMeasured is skipped), one vector per group of
// resources: group_of_resource[r] in [0, groups) or -1 (not counted); an
// empty group_of_resource puts every resource in group 0 of 1. Each vector
// has one entry per graph step (one covering every task when the graph
// has none). `frames`, when given, holds one baseline per group (a
// prediction's frame, above; an empty one is no frame).
std::vector<std::vector<StepTime>> StepSpans(const Graph& graph,
                                                  std::span<const int64_t> start,
                                                  std::span<const int64_t> end,
                                                  std::span<const int32_t> group_of_resource,
                                                  int groups,
                                                  std::span<const std::vector<StepTime>> frames = {});

// One group's spans read in the frame of `baseline` (the baseline's spans,
// one per graph step; see above). An empty `baseline` is no frame.
std::vector<StepTime> StepSpansInFrame(const Graph& graph, std::span<const int64_t> start,
                                            std::span<const int64_t> end,
                                            const std::vector<StepTime>& baseline);

// The spans under the trace's measured times (measured_start_ns + duration
// of traced tasks; inserted tasks, Graph::measured() false, are skipped).
std::vector<StepTime> MeasuredSteps(const Graph& graph);

StepStats SummarizeSteps(const std::vector<StepTime>& steps);

// The step time: the mean over counted steps (SummarizeSteps' mean), the one
// figure every command reports for a measured or simulated run.
double MeanStepNs(const std::vector<StepTime>& steps);

// The share of the steps' movement the first counted step holds: |d_1| /
// sum |d_i| over the baseline's counted steps, d_i = predicted - baseline
// (absolute, so changes that cancel, -50%, -50%, +50%, are not read as the
// first step's); none with fewer than three counted steps or a movement
// under 0.1% of the baseline's steps.
// Near 1, the change is a one-time shift at the start of the profiled
// window (work that moved into or out of the first step, a backlog before
// it), not a cost or gain per step: a longer run spreads it thinner.
std::optional<double> FirstStepShare(const std::vector<StepTime>& base,
                                     const std::vector<StepTime>& pred);
// From this share on, commands say the change sits in the first step.
inline constexpr double kFirstStepNote = 0.8;

// Rule 4 on the measured graph: sets Step::counted and returns how many
// steps it dropped (0 when all count).
int MarkCountedSteps(Graph* graph);

// GPU-side tasks for the rule (kernels, copies, sets, communication).
inline bool IsDeviceWork(TaskKind k) { return IsGpuKind(k) || k == TaskKind::kComm; }

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_STEP_TIME_H_
