// File: transforms/structure.h
//
// Structural primitives (Daydream §4.4, Fig. 4): insert a task on an
// execution thread (an O(1) splice into the resource's list), insert a GPU
// task together with the CPU launch call that triggers it, add or remove a
// dependency, and create resources (another stream, a CPU thread, a
// communication channel).
//
// Every function checks its arguments (live tasks, a task kind the resource
// can run, no self edge, no cycle for a new edge) and changes nothing when it
// returns an error. Removing tasks is in remove.h.
#ifndef REVERIE_TRANSFORMS_STRUCTURE_H_
#define REVERIE_TRANSFORMS_STRUCTURE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "depgraph/graph.h"

namespace reverie::transforms {

using depgraph::EdgeId;
using depgraph::EdgeKind;
using depgraph::Graph;
using depgraph::ResourceId;
using depgraph::TaskId;
using depgraph::TaskSpec;

// Where a new task goes: right after / before a live task on that task's
// resource, or at the end of a resource.
struct Where {
  enum class Placement : uint8_t { kAfter, kBefore, kAppend };
  Placement placement = Placement::kAppend;
  TaskId anchor;
  ResourceId resource;

  static Where After(TaskId t) { return {Placement::kAfter, t, ResourceId()}; }
  static Where Before(TaskId t) { return {Placement::kBefore, t, ResourceId()}; }
  static Where OnResource(ResourceId r) { return {Placement::kAppend, TaskId(), r}; }
};

// Whether a resource of `rk` runs tasks of kind `tk` (threads: CPU kinds,
// streams: GPU kinds, channels: kComm).
bool KindFitsResource(depgraph::TaskKind tk, depgraph::ResourceKind rk);

// Inserts one task; spec.resource is ignored unless placement is kAppend.
// kNotFound / kFailedPrecondition for a bad anchor or resource,
// kInvalidArgument when the kind does not fit the resource or a time is < 0.
absl::StatusOr<TaskId> InsertTask(Graph& g, const Where& where, const TaskSpec& spec);

// What an inserted launch call costs, inferred from the trace: the median
// duration of the existing launch calls of each kind of GPU task, and the
// median delay of their launch edges. Defaults (no such calls in the graph):
// kDefaultLaunchNs and delay 0.
struct LaunchModel {
  static constexpr int64_t kDefaultLaunchNs = 5'000;
  int64_t kernel_launch_ns = kDefaultLaunchNs;  // cudaLaunchKernel & co
  int64_t memcpy_launch_ns = kDefaultLaunchNs;  // cudaMemcpyAsync
  int64_t memset_launch_ns = kDefaultLaunchNs;  // cudaMemsetAsync
  int32_t launch_delay_ns = 0;
  int64_t kernel_launch_samples = 0;  // how many calls the kernel median is over
};
LaunchModel InferLaunchModel(const Graph& g);

struct LaunchOptions {
  bool with_launch = true;
  // The CPU task after which the launch call goes. Invalid: next to the
  // launch call of the GPU anchor (after it for kAfter / kAppend, before it
  // for kBefore), or of the nearest GPU task on the stream that has one.
  TaskId launch_after;
  int64_t launch_duration_ns = -1;  // < 0: from the LaunchModel
  int64_t launch_gap_ns = 0;
  std::string launch_name;          // empty: cudaLaunchKernel / cudaMemcpyAsync / cudaMemsetAsync
};

struct InsertedGpuTask {
  TaskId gpu;
  TaskId launch;  // invalid when with_launch is false
};

// Inserts a GPU task (spec.kind kernel / memcpy / memset) on a stream and,
// unless told not to, the CPU launch call that triggers it, with a kLaunch
// edge between them (Daydream Fig. 4b). The launch call takes the GPU task's
// phase, layer and step. `walked`, when given, counts the tasks stepped over
// looking for a GPU task with a launch call near the anchor, also when the
// insertion fails (a budget charges for them).
absl::StatusOr<InsertedGpuTask> InsertGpuTask(Graph& g, const Where& where, const TaskSpec& spec,
                                              const LaunchOptions& options,
                                              const LaunchModel& model, int64_t* walked = nullptr);

// The launch call of a GPU task (its kLaunch parent), or invalid.
TaskId LauncherOf(const Graph& g, TaskId gpu);

// Adds `src -> dst`. kFailedPrecondition when either is removed, when
// src == dst, or when dst already reaches src (the edge would close a cycle).
absl::StatusOr<EdgeId> AddDependency(Graph& g, TaskId src, TaskId dst,
                                     EdgeKind kind = EdgeKind::kUser, int32_t delay_ns = 0);

// Adds many edges with one cycle check for the lot (Graph::Validate, O(V+E))
// instead of a search per edge. On any error no edge is added; a cycle is
// reported as kFailedPrecondition naming a task on it.
struct Dependency {
  TaskId src, dst;
  EdgeKind kind = EdgeKind::kUser;
  int32_t delay_ns = 0;
};
absl::Status AddDependencies(Graph& g, const std::vector<Dependency>& deps);

// Removes every live edge src -> dst; kNotFound when there is none. Returns
// how many were removed.
absl::StatusOr<int> RemoveDependency(Graph& g, TaskId src, TaskId dst);

// New resources. A communication channel is unordered: the simulator's
// schedule policy picks among its ready tasks. Each call numbers the new
// resource from the graph's others, O(resources); use ResourceNumbering to
// add many.
ResourceId AddCommChannel(Graph& g, std::string_view name);
ResourceId AddGpuStream(Graph& g, int32_t device, std::string_view name);
ResourceId AddCpuThread(Graph& g, std::string_view name);

// Adds resources numbered as the functions above do, in O(1) each: the
// graph's resources are scanned once, on the first call, and then counted as
// they are added (issue 17, D5: a million add_channel calls were O(n^2)).
// Invariant: every resource added to the graph since the first call went
// through this object.
class ResourceNumbering {
 public:
  ResourceId AddCommChannel(Graph& g, std::string_view name);
  ResourceId AddGpuStream(Graph& g, int32_t device, std::string_view name);
  ResourceId AddCpuThread(Graph& g, std::string_view name);

 private:
  struct Streams {
    int64_t next_id = 0;
    int64_t pid = 0;
  };
  void Scan(const Graph& g);

  bool scanned_ = false;
  int64_t channels_ = 0;
  bool have_thread_pid_ = false;
  int64_t thread_pid_ = 0;
  absl::flat_hash_map<int32_t, Streams> streams_;  // by device
};

// kNotFound unless `t` is a task id of `g` that is not removed.
absl::Status CheckLive(const Graph& g, TaskId t);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_STRUCTURE_H_
