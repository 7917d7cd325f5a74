// File: depgraph/replicate.h
//
// Copying one graph's tasks into another, the step shared by
// ReplicateGraph() and the multi-rank job (depgraph/ranks.h).
#ifndef REVERIE_DEPGRAPH_REPLICATE_H_
#define REVERIE_DEPGRAPH_REPLICATE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "depgraph/graph.h"

namespace reverie::depgraph {

// Where AppendGraph() puts the source's tasks. Every span is indexed by the
// source's ids and has the source's count of them.
struct AppendMapping {
  std::span<const ResourceId> resource;  // must be valid
  std::span<const LayerId> layer;        // invalid = the task loses its layer
  std::span<const int32_t> step;    // -1 = the task is untagged
  int64_t measured_shift_ns = 0;         // added to traced tasks' measured starts
};

// Appends every live task of `src` at the end of its mapped resource in `dst`
// (in resource order, so copying onto non-empty resources puts the copy after
// what is there) with its duration, gap, phase, bytes, priority and geometry,
// then its live edges. Returns the new id of each source task by TaskId value
// (invalid for removed tasks).
std::vector<TaskId> AppendGraph(const Graph& src, const AppendMapping& mapping, Graph* dst);

// ReplicateGraph(): the graph's tasks repeated `copies` times back to back on
// the same resources, as if the profiled steps had run `copies` times in
// a row (copy k's tasks follow copy k-1's on every thread and stream; edges
// and steps are repeated inside each copy). Used to make large graphs
// from real traces for benchmarks and scale tests. copies >= 1; removed
// tasks and edges are dropped.
Graph ReplicateGraph(const Graph& graph, int copies);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_REPLICATE_H_
