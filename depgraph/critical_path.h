// File: depgraph/critical_path.h
//
// Critical path of each simulated step: the chain of tasks that bounds
// it. Walking back from the step's last-ending task, each step goes to
// the *binding* predecessor, the one whose constraint set the task's
// simulated start: the resource predecessor (end + gap), an edge parent
// (end + delay), or on a channel the task that held the channel. The walk
// stops at the step's start or at a task nothing held back.
//
// Attribution: each path task's duration (clipped to the step span)
// goes to its resource kind, phase, layer and kernel class; the link time
// between a task and its binding predecessor goes to "cpu gap" (untraced
// CPU work on a thread), "gpu gap" (stream overhead) or "<edge kind>
// latency". The verdict is the largest of CPU (thread tasks + cpu gaps),
// GPU compute (kernels, copies, gpu gaps) and communication (comm tasks and
// communication kernels such as NCCL's).
#ifndef REVERIE_DEPGRAPH_CRITICAL_PATH_H_
#define REVERIE_DEPGRAPH_CRITICAL_PATH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/simulator.h"

namespace reverie::depgraph {

enum class Bound : uint8_t { kCpu, kGpu, kCommunication, kUnknown };
std::string_view BoundName(Bound b);  // "cpu", "gpu", "communication", "unknown"

// A task's label on the path: "cpu" for CPU tasks, else its class
// (depgraph/kernel_class.h TaskClass).
std::string_view ClassLabel(const Graph& graph, TaskId t);

struct PathShare {
  std::string name;
  int64_t ns = 0;
  double pct = 0;  // of the path length
};

struct CriticalPath {
  int32_t step = -1;
  std::string name;
  int64_t length_ns = 0;      // the step's simulated span
  std::vector<TaskId> tasks;  // in time order
  int64_t cpu_ns = 0;
  int64_t gpu_ns = 0;
  int64_t comm_ns = 0;
  int64_t latency_ns = 0;  // edge delays on the path
  // Measured waiting on the path that no dependency explains (pinned stream
  // gaps and launch waits, Graph::pinned_gap / Edge::pinned): the part of
  // the step a prediction cannot move.
  int64_t unexplained_ns = 0;
  Bound verdict = Bound::kUnknown;
  std::vector<PathShare> by_resource_kind;  // largest first
  std::vector<PathShare> by_phase;
  std::vector<PathShare> by_layer;
  std::vector<PathShare> by_kernel_class;
};

// One per SimResult::steps entry.
std::vector<CriticalPath> CriticalPaths(const Graph& graph, const SimResult& sim);

// The share (0..1) of the counted steps' critical paths that is waiting no
// dependency explains (CriticalPath::unexplained_ns over length_ns): how
// much of the step a prediction cannot move.
double UnexplainedShare(const Graph& graph, const SimResult& sim);

// The binding predecessor of `t` in `sim`, or an invalid id when nothing held
// it back. `via` (may be null) gets the edge that bound it, invalid when it
// was the resource order.
TaskId BindingPredecessor(const Graph& graph, const SimResult& sim, TaskId t, EdgeId* via);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_CRITICAL_PATH_H_
