// File: transforms/remove.h
//
// RemoveTasks(): Daydream's "remove a task" (§4.4, Fig. 4) for a whole
// selection at once, keeping every ordering the removed tasks carried.
//
// Rewiring rule: for each surviving task c that depended on a removed task
// (by an edge, or by coming next on an ordered resource), c gets an edge from
// each surviving task s that reached it only through removed tasks. Resource
// order closes up by itself (the linked list), so s -> c is not added when s
// precedes c on the same ordered resource, or precedes a surviving parent of
// c on that parent's ordered resource (a kernel's own, later launch call
// already orders it). Of several such s on one ordered resource only the
// latest is kept (it implies the others). Edge delays on paths dropped as
// implied are not carried. The new edge keeps the kind of the last
// explicit edge on the path when that kind fits its ends (launch: CPU -> GPU
// and c has no other launcher; sync: GPU -> CPU; event: GPU -> GPU;
// inter_thread: CPU -> CPU; comm: a comm end; user: any), else the kind that
// fits its ends; it takes that edge's delay.
//
// Cost: O(V + E) to rank resources and mark the set, plus the work on the
// removed tasks and their neighbours; one call for N tasks costs far less
// than N single removals (which each rebuild the adjacency). A chain of
// removed tasks (kernels of many threads on one stream) hands its set of
// surviving ancestors down the chain rather than copying it at each task.
#ifndef REVERIE_TRANSFORMS_REMOVE_H_
#define REVERIE_TRANSFORMS_REMOVE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "transforms/selection.h"

namespace reverie::transforms {

struct RemoveResult {
  int64_t removed = 0;      // live tasks removed
  int64_t edges_added = 0;  // rewiring edges
  int64_t work = 0;         // ancestors gathered and edges considered
};

// Bounds on one removal (a script's budget and memory cap: lua/). Rewiring
// a task with n surviving parents and m surviving children adds up to n * m
// edges (issue 29, D25: a hub between 6,000 producers and 6,000 consumers
// made 36 million); past a bound RemoveTasks fails with kResourceExhausted,
// names the bound in *hit, and changes nothing.
struct RemoveLimits {
  int64_t max_work = INT64_MAX;
  int64_t max_new_edges = INT64_MAX;
};
enum class RemoveLimitHit { kNone, kWork, kNewEdges };

// Removes the live members of `s` (removed ones are ignored), and the own CPU
// time of every op left without calls (transforms/ops.h). The graph stays
// acyclic: every new edge stands for a path that existed.
absl::StatusOr<RemoveResult> RemoveTasks(depgraph::Graph& g, const Selection& s,
                                         const RemoveLimits& limits = {},
                                         RemoveLimitHit* hit = nullptr);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_REMOVE_H_
