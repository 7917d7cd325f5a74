// File: depgraph/simulator.h
//
// Simulate(): Daydream's Algorithm 1 over a Graph. Uses durations, gaps,
// dependencies and edge delays only, never measured start times, so that
// changing one task's duration moves everything that depends on it.
//
// Semantics (the contract transforms/ and reports rely on):
// - A task on an ordered resource starts no earlier than its predecessor on
//   the resource ends plus that predecessor's gap.
// - A task starts no earlier than each edge parent's end + edge.delay_ns.
// - On an unordered resource (communication channels) at most one task runs
//   at a time; when several are ready the SchedulePolicy picks (default:
//   earliest ready, then lowest TaskId).
// - Deterministic: the same graph gives the same result.
// - Step (step) times follow the one definition of depgraph/step_time.h
//   on the simulated timeline; MeasuredSteps() applies it to the trace's
//   times, so the two are comparable step by step.
// - Cost: O((V + E) log F) time, F = the event-frontier size; O(V) extra memory
//   beyond the result (a ref count per task; ready times live in start_ns).
#ifndef REVERIE_DEPGRAPH_SIMULATOR_H_
#define REVERIE_DEPGRAPH_SIMULATOR_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "depgraph/step_time.h"

namespace reverie::depgraph {

// Picks among ready tasks competing for one unordered resource: the task
// with the smallest key runs first (ties: smaller TaskId).
class SchedulePolicy {
 public:
  virtual ~SchedulePolicy() = default;
  virtual int64_t Key(const Graph& g, TaskId t, int64_t ready_ns) const = 0;
};

// Default: earliest ready first.
class EarliestReadyPolicy : public SchedulePolicy {
 public:
  int64_t Key(const Graph& g, TaskId t, int64_t ready_ns) const override { return ready_ns; }
};

// Lowest Graph::priority() first (P3-style prioritised communication).
class PriorityPolicy : public SchedulePolicy {
 public:
  int64_t Key(const Graph& g, TaskId t, int64_t ready_ns) const override {
    return g.priority(t);
  }
};

struct SimOptions {
  const SchedulePolicy* policy = nullptr;  // nullptr: EarliestReadyPolicy
  // A prediction's baseline steps: the simulated steps are read in their
  // frame (StepSpansInFrame, step_time.h) so that a graph whose work only
  // shrinks never reports a longer step. nullptr: the plain rule.
  const std::vector<StepTime>* step_frame = nullptr;
};

struct SimResult {
  // Per task (indexed by TaskId value); -1 for removed tasks.
  std::vector<int64_t> start_ns;
  std::vector<int64_t> end_ns;
  int64_t makespan_ns = 0;
  // The earliest task start: the run's end-to-end span is makespan_ns -
  // first_start_ns (printed beside the step, which counts only the steps).
  int64_t first_start_ns = 0;
  int64_t span_ns() const { return makespan_ns - first_start_ns; }
  // One entry per graph step (graph.step_count()); when the graph
  // has no steps, one entry covering every task (step_time.h).
  std::vector<StepTime> steps;
  // The step time: the mean over counted steps (SummarizeSteps).
  double mean_step_ns() const;
};

// kFailedPrecondition when the graph has a cycle (names a task on it).
absl::StatusOr<SimResult> Simulate(const Graph& graph, const SimOptions& options = {});

// SimResult::steps' spans, one set per group of resources:
// group_of_resource[r] in [0, groups) or -1 (not counted). The ranks of a job
// (depgraph/ranks.h) in one pass over the tasks.
std::vector<std::vector<StepTime>> StepSpansByGroup(
    const Graph& graph, const SimResult& sim, std::span<const int32_t> group_of_resource,
    int groups, std::span<const std::vector<StepTime>> frames = {});

// Same as Simulate() but fills `result` in place, reusing its buffers' capacity, so that
// a caller that simulates many variants of one graph (a transform search, a benchmark)
// allocates nothing per run after the first. On error `result` is unspecified.
absl::Status SimulateInto(const Graph& graph, const SimOptions& options, SimResult* result);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_SIMULATOR_H_
