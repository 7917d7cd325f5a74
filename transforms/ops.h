// File: transforms/ops.h
//
// The CPU time of framework ops in transformations (depgraph/graph.h
// CpuOp, depgraph/builder_cpu_time.cc).
//
// The rule: an op's own CPU time (its kCpuWork tasks) goes when the op
// issues no API call any more. Removing a launch (or a kernel with its
// launch) therefore also removes the dispatcher time of the aten op that
// issued it, once that op launches nothing that survives, and of every
// enclosing op left without calls; framework time between ops (Python, the
// data loader) always stays. A script that also wants framework time gone
// (a Python loop that disappears, like an optimizer's per-parameter loop
// under a fused kernel) removes it explicitly.
#ifndef REVERIE_TRANSFORMS_OPS_H_
#define REVERIE_TRANSFORMS_OPS_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "transforms/selection.h"

namespace reverie::transforms {

// `s` plus the live op-time tasks of every op that removing `s` leaves
// without a live API call (and of those ops' descendants). O(V) when `s`
// holds a CPU call of an op; `s` unchanged otherwise.
Selection WithOrphanedOpTime(const depgraph::Graph& g, const Selection& s);

// The median own CPU time of the graph's ops named `name` (as the trace
// measured it); for a name whose ops issued no API call (so none is a graph
// op), the median duration of those ops (Graph::op_cost_without_calls);
// nullopt when the trace has none. `read`, when given, counts the ops read
// (those of that name: a budget charges them).
std::optional<int64_t> MedianOpCost(const depgraph::Graph& g, std::string_view name,
                                    int64_t* read = nullptr);

// Gives the CPU call `call` an op of its own named `op_name` that costs
// `cost_ns` of CPU time (a kCpuWork task right before the call, with the
// call's phase, layer and step), as the framework's dispatch of an inserted
// op would (an autocast cast: "aten::to"). Removing the call later removes
// that time too. Returns the op-time task. kInvalidArgument for a call that
// is not a live CPU task or a negative cost.
absl::StatusOr<depgraph::TaskId> AddOpTime(depgraph::Graph& g, depgraph::TaskId call,
                                           std::string_view op_name, int64_t cost_ns);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_OPS_H_
