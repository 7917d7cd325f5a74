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
// - Iteration time (IterationTime) is the span from the earliest start to the
//   latest end over the tasks tagged with that iteration. The builder tags a GPU
//   task with the iteration of the CPU call that launched it, so the span runs
//   from the iteration's first task to the last task it caused. Measured
//   iteration time (replay, breakdown) uses the same definition on measured
//   start/end times, so the two are comparable.
// - Cost: O((V + E) log F) time, F = the event-frontier size; O(V) extra memory
//   beyond the result (a ref count per task; ready times live in start_ns).
#ifndef REVERIE_DEPGRAPH_SIMULATOR_H_
#define REVERIE_DEPGRAPH_SIMULATOR_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"

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
};

struct IterationTime {
  int32_t iteration = -1;
  int64_t start_ns = 0;  // simulated start of the iteration's first task
  int64_t end_ns = 0;    // simulated end of the last task it caused
  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct SimResult {
  // Per task (indexed by TaskId value); -1 for removed tasks.
  std::vector<int64_t> start_ns;
  std::vector<int64_t> end_ns;
  int64_t makespan_ns = 0;
  // One entry per graph iteration (graph.iteration_count()); when the graph
  // has no iterations, one entry covering every task.
  std::vector<IterationTime> iterations;
  // Mean of iterations[].duration_ns().
  double mean_iteration_ns() const;
};

// kFailedPrecondition when the graph has a cycle (names a task on it).
absl::StatusOr<SimResult> Simulate(const Graph& graph, const SimOptions& options = {});

// The same per-iteration spans computed from the trace's measured times
// (measured_start_ns + duration_ns of the tasks the builder created; inserted
// tasks, measured_start_ns < 0, are ignored). Comparable with
// SimResult::iterations entry by entry.
std::vector<IterationTime> MeasuredIterations(const Graph& graph);

// SimResult::iterations' spans, one set per group of resources:
// group_of_resource[r] in [0, groups) or -1 (not counted). The ranks of a job
// (depgraph/ranks.h) in one pass over the tasks.
std::vector<std::vector<IterationTime>> IterationSpansByGroup(
    const Graph& graph, const SimResult& sim, std::span<const int32_t> group_of_resource,
    int groups);

// The mean over iterations with work (an empty span, 0, is left out).
double MeanNonEmptyIterationNs(const std::vector<IterationTime>& iterations);

// Same as Simulate() but fills `result` in place, reusing its buffers' capacity, so that
// a caller that simulates many variants of one graph (a transform search, a benchmark)
// allocates nothing per run after the first. On error `result` is unspecified.
absl::Status SimulateInto(const Graph& graph, const SimOptions& options, SimResult* result);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_SIMULATOR_H_
