// File: depgraph/replicate.h
//
// ReplicateGraph(): the graph's tasks repeated `copies` times back to back on
// the same resources, as if the profiled iterations had run `copies` times in
// a row (copy k's tasks follow copy k-1's on every thread and stream; edges
// and iterations are repeated inside each copy). Used to make large graphs
// from real traces for benchmarks and scale tests.
#ifndef REVERIE_DEPGRAPH_REPLICATE_H_
#define REVERIE_DEPGRAPH_REPLICATE_H_

#include "depgraph/graph.h"

namespace reverie::depgraph {

// copies >= 1; removed tasks and edges are dropped.
Graph ReplicateGraph(const Graph& graph, int copies);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_REPLICATE_H_
