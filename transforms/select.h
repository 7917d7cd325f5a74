// File: transforms/select.h
//
// Select(): Daydream's selection primitive. A TaskQuery is a conjunction of
// optional filters (kind, name, layer, phase, resource, step); each
// filter is a disjunction of its values. A name, layer or op pattern is
// matched once per distinct name, layer or op the tested tasks carry
// (transforms/pattern.h), so a query is one forward pass over the tasks it
// tests (the graph, or a selection's members): linear with a few byte
// compares per task, whatever the patterns.
#ifndef REVERIE_TRANSFORMS_SELECT_H_
#define REVERIE_TRANSFORMS_SELECT_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "transforms/selection.h"

namespace reverie::transforms {

// Bit masks over TaskKind / Phase / ResourceKind values; 0 means "any".
inline uint32_t KindBit(depgraph::TaskKind k) { return 1u << static_cast<int>(k); }
inline uint32_t PhaseBit(depgraph::Phase p) { return 1u << static_cast<int>(p); }
inline uint32_t ResourceKindBit(depgraph::ResourceKind k) { return 1u << static_cast<int>(k); }

struct TaskQuery {
  uint32_t kinds = 0;
  std::vector<std::string> names;  // patterns (transforms/pattern.h), any of
  std::string name_regex;          // RE2 syntax, searched; empty = none
  std::vector<std::string> layers;  // path patterns incl. sub-layers, any of
  bool no_layer = false;            // only tasks without a layer
  uint32_t phases = 0;
  std::vector<depgraph::ResourceId> resources;  // any of
  uint32_t resource_kinds = 0;
  std::vector<int32_t> steps;  // any of
  // Op name patterns (transforms/pattern.h): a task matches when its op or
  // an enclosing op matches (kernels carry their launch's op).
  std::vector<std::string> ops;
  uint32_t cpu_times = 0;  // CpuTimeBit mask: API calls, ops' own time, framework time
  // Kernel classes (depgraph/kernel_class.h), bit per KernelClass; GPU tasks only.
  uint32_t kernel_classes = 0;

  bool HasNameFilter() const { return !names.empty() || !name_regex.empty(); }
};

// The kind of CPU time a task stands for (depgraph/cpu_time.h).
enum class CpuTime : uint8_t { kApi = 0, kOp = 1, kFramework = 2 };
inline uint32_t CpuTimeBit(CpuTime c) { return 1u << static_cast<int>(c); }
absl::StatusOr<CpuTime> ParseCpuTime(std::string_view name);
// A kernel class by its name ("gemm", "elementwise", ...), as a mask bit.
absl::StatusOr<uint32_t> ParseKernelClassBit(std::string_view name);

// Live tasks that satisfy every filter of `q`, in TaskId order. The builder's
// step markers are never selected (they only mark where steps begin and end).
// kInvalidArgument for a bad regex or an out-of-range resource.
absl::StatusOr<Selection> Select(const depgraph::Graph& g, const TaskQuery& q);

// The tasks of `within` (strictly increasing ids) that Select(g, q) would
// return, in their order, for the cost of testing them: name, layer and op
// patterns are matched only for the candidates' names, layers and ops. A
// refinement of a small selection costs its size, not a pass over the graph.
// `*work` (if not null): the candidates plus bytes matched / 8 and verdicts.
absl::StatusOr<std::vector<depgraph::TaskId>> SelectWithin(const depgraph::Graph& g,
                                                           const TaskQuery& q,
                                                           std::span<const depgraph::TaskId> within,
                                                           int64_t* work);

// Every live task.
Selection SelectAll(const depgraph::Graph& g);

// Live tasks (no step markers) for which `pred` is true.
Selection SelectIf(const depgraph::Graph& g, const std::function<bool(depgraph::TaskId)>& pred);

// The launch calls (parents over kLaunch edges) of the GPU tasks in `gpu`.
Selection LaunchesOf(const depgraph::Graph& g, const Selection& gpu);

// Parsing of the names used by scripts and the CLI. A kind name may also be
// "gpu" (kernel|memcpy|memset) or "cpu" (cpu_api|cpu_work); all return a mask.
absl::StatusOr<uint32_t> ParseKindMask(std::string_view name);
absl::StatusOr<depgraph::TaskKind> ParseTaskKind(std::string_view name);
absl::StatusOr<depgraph::Phase> ParsePhase(std::string_view name);
absl::StatusOr<depgraph::ResourceKind> ParseResourceKind(std::string_view name);
absl::StatusOr<depgraph::EdgeKind> ParseEdgeKind(std::string_view name);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_SELECT_H_
