// File: depgraph/graph.h
//
// Graph: Daydream's kernel-granularity dependency graph (§4.2 of the paper),
// stored as compact arrays indexed by strong ids rather than as linked
// objects, so that a graph of millions of tasks costs well under 200 bytes a
// task and is cheap to copy (a transform works on a copy; see transforms/).
//
// Model:
// - A task is one CPU API call (with its `gap`: the untraced CPU time until
//   the next task on its thread), one GPU kernel / memcpy / memset, one
//   communication primitive, or inserted CPU work.
// - A resource is an execution thread in Daydream's sense: a CPU thread, a
//   GPU stream or a communication channel. On an *ordered* resource (threads,
//   streams) tasks run in list order; that order is the doubly linked list
//   prev_on_resource / next_on_resource, not an edge, so inserting or
//   removing a task is O(1) as in Daydream Fig. 4. On an *unordered* resource
//   (communication channels) the simulator's schedule policy picks the order.
// - An edge is an explicit cross-resource dependency: launch (API call ->
//   GPU task), sync (GPU task -> CPU task that waited), event (GPU task ->
//   GPU task on another stream via cudaEventRecord/cudaStreamWaitEvent),
//   inter-thread, communication, or user-added. The child may start
//   `delay_ns` after the parent ends.
//
// Invariants:
// - Every array indexed by TaskId has task_count() entries; ids are never
//   reused. A removed task keeps its id and is skipped by step helpers,
//   the simulator and the adjacency.
// - prev/next_on_resource link exactly the live tasks of one resource, in
//   order; first_on_resource/last_on_resource are their ends.
// - Edges join two live tasks, never a task to itself: AddEdge checks it
//   (REVERIE_CHECK) and RemoveTask()/RemoveTasks() remove the task's edges
//   (callers that must keep order rewire first; transforms/ does), so the
//   adjacency's in-degree is a task's count of live parents.
// - measured_start_ns is what the trace recorded (kNotMeasured for inserted
//   tasks); it is for reports and validation only and the simulator never
//   reads it.
// - Step markers (step_mark != kNone) are zero-length CPU tasks; the step
//   time is read off them (step_time.h).
// - Ops form a forest whose parents have smaller ids than their children;
//   a task's op, when valid, is an existing op.
// - Not thread-safe; copy it to share.
#ifndef REVERIE_DEPGRAPH_GRAPH_H_
#define REVERIE_DEPGRAPH_GRAPH_H_

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/check.h"
#include "base/strong_id.h"
#include "base/topological_order.h"
#include "depgraph/adjacency.h"
#include "depgraph/ids.h"
#include "depgraph/reach_index.h"
#include "hardware/op_work.h"

namespace reverie::depgraph {

enum class TaskKind : uint8_t {
  kCpuApi = 0,   // CUDA/HIP runtime or driver call
  kCpuWork = 1,  // CPU work that is not an API call (inserted, data loading)
  kKernel = 2,
  kMemcpy = 3,
  kMemset = 4,
  kComm = 5,     // communication primitive on a channel (modelled, not traced)
};
inline constexpr int kTaskKindCount = 6;
std::string_view TaskKindName(TaskKind k);
inline bool IsGpuKind(TaskKind k) {
  return k == TaskKind::kKernel || k == TaskKind::kMemcpy || k == TaskKind::kMemset;
}
inline bool IsCpuKind(TaskKind k) { return k == TaskKind::kCpuApi || k == TaskKind::kCpuWork; }

enum class ResourceKind : uint8_t { kCpuThread = 0, kGpuStream = 1, kCommChannel = 2 };
std::string_view ResourceKindName(ResourceKind k);

enum class EdgeKind : uint8_t {
  kLaunch = 0,       // API call -> the GPU task it launched (correlation id)
  kSync = 1,         // GPU task -> CPU task that blocked on it
  kEvent = 2,        // GPU task -> GPU task on another stream (event wait)
  kInterThread = 3,  // CPU task -> CPU task on another thread
  kComm = 4,         // gradient ready -> communication -> consumer
  kUser = 5,         // added by a script
};
inline constexpr int kEdgeKindCount = 6;
std::string_view EdgeKindName(EdgeKind k);

// Same numbering as proto::Phase.
enum class Phase : uint8_t {
  kUnknown = 0,
  kForward = 1,
  kBackward = 2,
  kUpdate = 3,
  kDataLoading = 4,
  kOther = 5,
};
inline constexpr int kPhaseCount = 6;
std::string_view PhaseName(Phase p);

struct Resource {
  ResourceKind kind = ResourceKind::kCpuThread;
  int64_t pid = 0;
  int64_t native_id = 0;  // thread id, stream id or channel number
  int32_t device = -1;    // GPU ordinal for streams, -1 otherwise
  std::string name;       // "thread 1234", "stream 7 (gpu 0)", "allreduce ring"
  bool ordered = true;
};

struct Layer {
  std::string path;  // dotted module path, "layer1.0.conv1"
  LayerId parent;    // enclosing layer, invalid at top level
};

struct Step {
  std::string name;                 // "ProfilerStep#12"
  int64_t measured_start_ns = 0;    // the trace's marker, informational
  int64_t measured_end_ns = 0;
  // Whether the step counts in the mean step time (depgraph/step_time.h):
  // the profiler's overview drops trailing steps whose GPU work it did not
  // capture; the builder decides once, on the measured trace, so baseline and
  // prediction average over the same steps.
  bool counted = true;
};

// Where a step's CPU span begins or ends: a zero-length CPU task the builder
// puts on the step's thread at the ProfilerStep marker's start and end, so
// that the simulated step span is read off the simulated timeline
// (depgraph/step_time.h). Scripts cannot select or remove them.
enum class StepMark : uint8_t { kNone = 0, kBegin = 1, kEnd = 2 };

// A framework op (an aten op, an autograd node) that issued CPU API calls.
// The builder keeps the CPU time of the op outside its API calls as kCpuWork
// tasks tagged with the op (its "own" time: the dispatcher, shape checks,
// allocation, child ops that launch nothing), apart from framework time
// between ops (Python, the data loader), so that removing an op's launches
// can remove the op's cost and nothing else (transforms/remove.h).
struct CpuOp {
  uint32_t name_id = 0;  // interned name, "aten::add"
  OpId parent;           // the enclosing op that also issued calls; invalid at top level
  int64_t own_ns = 0;    // measured own CPU time (its kCpuWork tasks at build time)
  uint32_t inputs = 0;   // 1 + index of its recorded input shapes (Graph::op_inputs); 0 = none
  uint32_t depth = 0;    // enclosing ops above it (0 at top level), kept so no one climbs
};

struct Edge {
  TaskId src;
  TaskId dst;
  int32_t delay_ns = 0;  // dst may start delay_ns after src ends
  EdgeKind kind = EdgeKind::kUser;
  bool removed = false;
  // The delay is measured waiting no dependency explains (a launch that
  // waited longer than any launch latency): kept as measured, reported by
  // replay as unexplained waiting.
  bool pinned = false;
};

// A kernel's launch geometry, what counting waves needs when its time is
// carried to another GPU (Habitat §3.3). Interned: a training step reuses a
// few hundred geometries across thousands of launches.
struct KernelGeometry {
  int64_t blocks = 0;             // grid x*y*z; 0 = unknown
  int32_t threads_per_block = 0;  // block x*y*z
  int32_t registers_per_thread = 0;
  int64_t shared_memory_bytes = 0;  // per block, static + dynamic
  bool known() const { return blocks > 0 && threads_per_block > 0; }
  friend bool operator==(const KernelGeometry&, const KernelGeometry&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const KernelGeometry& g) {
    return H::combine(std::move(h), g.blocks, g.threads_per_block, g.registers_per_thread,
                      g.shared_memory_bytes);
  }
};

// One allocation or free the trace recorded (trace.proto MemoryEvent), with
// the layer and phase of the op that made it. Kept in time order; what
// depgraph/memory.h reads a step's memory from.
struct MemoryEvent {
  int64_t measured_ns = 0;
  int64_t bytes = 0;             // > 0 an allocation, < 0 a free
  int64_t total_allocated = -1;  // the allocator's total on the device after it; -1 unknown
  int64_t recorded_bytes = 0;    // `bytes` as the trace recorded it (a script may resize bytes)
  int64_t total_reserved = -1;
  int32_t device = -1;           // GPU ordinal; -1 the host
  Phase phase = Phase::kUnknown;
  LayerId layer;
  uint32_t op_name = 0;  // interned name of the enclosing op; 0 = none
  uint32_t alloc = 0;    // for a free: 1 + index of the allocation it frees; 0 = none
  bool has_addr = false;  // recorded with an address (the 2021 schema has none)
  // > 0: an allocation a script made for a batch tensor (autocast's half
  // copy of an activation), sized for this Graph::batch_factor; a later
  // batch change resizes it from recorded_bytes (transforms/memory_scale.h).
  double batch = 0;
  // 1 + index of the allocation a script's allocation copies (a stash's
  // new allocation of a tensor) or stands in for (its stand-in); 0 = none.
  uint32_t stands_for = 0;
  // Its anchor: the CPU task of its thread it happened in, or the last one
  // before it (of any thread when its own has none), and how long after
  // that task's measured start it came; a script may tie it to another task
  // (a GPU task: freed when a copy or kernel ends, transforms/memory_edit.h). The simulator's order of memory
  // events is their anchors' (depgraph/memory_replay.h); what a thread did
  // before freeing host memory (unmapping a batch's shared memory) is time
  // a script can tie to the bytes freed (transforms/host_memory.h).
  TaskId anchor;
  int64_t anchor_offset_ns = 0;
};

// measured_start_ns of a task that is not from the trace (a script inserted
// it). Not -1: a trace's clock may be negative.
inline constexpr int64_t kNotMeasured = INT64_MIN;

// Everything needed to create a task.
struct TaskSpec {
  TaskKind kind = TaskKind::kCpuWork;
  std::string_view name;
  ResourceId resource;
  int64_t duration_ns = 0;
  int64_t gap_ns = 0;
  LayerId layer;
  Phase phase = Phase::kUnknown;
  int32_t step = -1;
  int64_t measured_start_ns = kNotMeasured;  // not from the trace (inserted)
  int64_t bytes = 0;               // memcpy / memset / comm payload
  KernelGeometry geometry;         // kernels only; unknown by default
  OpId op;                         // issuing op (CPU tasks); invalid = none / framework time
  StepMark step_mark = StepMark::kNone;
};

// The per-task arrays (structure of arrays), declared once: every operation
// that touches all of them (append, reserve, copy, memory accounting) goes
// through ForEach, so adding a column is a one-line change.
struct TaskColumns {
  std::vector<TaskKind> kind;
  std::vector<Phase> phase;
  std::vector<uint8_t> flags;  // Graph::kFlag*
  std::vector<uint32_t> name;
  std::vector<ResourceId> resource;
  std::vector<LayerId> layer;
  std::vector<int32_t> step;
  std::vector<int32_t> priority;
  std::vector<int64_t> duration;
  std::vector<int64_t> gap;
  std::vector<int64_t> measured_start;
  std::vector<int64_t> bytes;
  std::vector<uint32_t> geometry;  // index into the graph's geometries; 0 = unknown
  std::vector<OpId> op;
  std::vector<TaskId> prev;
  std::vector<TaskId> next;
  std::vector<EdgeId> launch_in;  // the live kLaunch edge into the task, if any

  template <typename F>
  void ForEach(F&& f) {
    f(kind), f(phase), f(flags), f(name), f(resource), f(layer), f(step), f(priority);
    f(duration), f(gap), f(measured_start), f(bytes), f(geometry), f(op), f(prev), f(next);
    f(launch_in);
  }
  template <typename F>
  void ForEach(F&& f) const {
    const_cast<TaskColumns*>(this)->ForEach([&f](const auto& v) { f(v); });
  }
};

class Graph {
 public:
  Graph();

  // ---- names (interned) ----
  uint32_t InternName(std::string_view s);
  std::string_view NameOf(uint32_t name_id) const { return names_[name_id]; }
  size_t name_count() const { return names_.size(); }

  // ---- resources ----
  ResourceId AddResource(Resource r);
  const Resource& resource(ResourceId id) const { return resources_[id.value()]; }
  size_t resource_count() const { return resources_.size(); }
  TaskId first_on_resource(ResourceId id) const { return res_first_[id.value()]; }
  TaskId last_on_resource(ResourceId id) const { return res_last_[id.value()]; }

  // ---- layers ----
  // Returns the existing id when `path` is already known.
  LayerId AddLayer(std::string_view path, LayerId parent);
  const Layer& layer(LayerId id) const { return layers_[id.value()]; }
  size_t layer_count() const { return layers_.size(); }
  LayerId FindLayer(std::string_view path) const;

  // ---- steps ----
  int32_t AddStep(Step it);
  const Step& step_info(int32_t i) const { return steps_[i]; }
  void set_step_counted(int32_t i, bool counted) { steps_[i].counted = counted; }
  size_t step_count() const { return steps_.size(); }

  // ---- memory ----
  // Appends in time order; `alloc` must index an earlier allocation.
  void AddMemoryEvent(const MemoryEvent& m);
  std::span<const MemoryEvent> memory_events() const { return memory_; }
  // Gives each allocation named (index into memory_events(), new size > 0)
  // its new size; the frees of it follow, so a free still returns what its
  // allocation took. A free tied to no allocation (alloc == 0) may be named
  // too and returns the new size. What a script's change makes larger or
  // smaller (a batch's activations, transforms/memory_scale.h).
  void ResizeAllocations(std::span<const std::pair<uint32_t, int64_t>> sizes);
  // Ties event `index` to `anchor` (live), `offset_ns` (>= 0) after its
  // simulated start: where a script's change makes a tensor go or come.
  void ReanchorMemoryEvent(uint32_t index, TaskId anchor, int64_t offset_ns);
  // Appends an event a script made (no measured time, so the measured
  // memory report leaves it out): anchored on a live task, a free after
  // its allocation. Returns its index.
  uint32_t AddScriptMemoryEvent(MemoryEvent m);

  // ---- framework ops ----
  // `parent` must be an existing op (or invalid): ops form a forest.
  OpId AddOp(std::string_view name, OpId parent, int64_t own_ns);
  const CpuOp& op(OpId id) const { return ops_[id.value()]; }
  std::string_view op_name(OpId id) const { return names_[ops_[id.value()].name_id]; }
  size_t op_count() const { return ops_.size(); }
  // Calls f(id) for every op named `name` (latest first) and returns how
  // many: without a pass over every op (graph:op_cost, with_op).
  template <typename F>
  int64_t ForEachOpNamed(std::string_view name, F&& f) const {
    const auto it = name_index_.find(absl::string_view(name.data(), name.size()));
    if (it == name_index_.end() || it->second >= op_last_of_name_.size()) return 0;
    int64_t n = 0;
    for (OpId o = op_last_of_name_[it->second]; o.valid();
         o = op_links_[o.value()].prev_same_name) {
      f(o), ++n;
    }
    return n;
  }
  // Calls f(id) for each op directly inside `parent`, in id order, and
  // returns how many (graph:op_children).
  template <typename F>
  int64_t ForEachChildOp(OpId parent, F&& f) const {
    int64_t n = 0;
    for (OpId o = op_links_[parent.value()].first_child; o.valid();
         o = op_links_[o.value()].next_sibling) {
      f(o), ++n;
    }
    return n;
  }
  void set_op_own_ns(OpId id, int64_t ns) { ops_[id.value()].own_ns = ns; }
  // The op's inputs as the profiler recorded them (record_shapes), interned
  // (a step repeats its shapes); nullptr when none were recorded.
  const hardware::OpArgs* op_inputs(OpId id) const {
    const uint32_t i = ops_[id.value()].inputs;
    return i == 0 ? nullptr : &op_inputs_[i - 1];
  }
  void set_op_inputs(OpId id, hardware::OpArgs inputs);
  // Ops that issued no API call are not graph ops (their time is part of
  // their owner's or the framework's), but what one costs is a fact a
  // script inserting such a dispatch needs (a cast on the CPU side of an
  // fp32 run times the chain autocast adds): the median duration of the
  // trace's ops of that name that issued no call, with the ops inside them
  // (on the threads that made API calls, where ops are read).
  void SetOpCostWithoutCalls(std::string_view name, int64_t median_ns);
  std::optional<int64_t> op_cost_without_calls(std::string_view name) const;

  // ---- tasks ----
  // Appends at the end of the spec's resource.
  TaskId AppendTask(const TaskSpec& spec);
  // Inserts right after / before `anchor` on the anchor's resource (the
  // spec's resource is ignored).
  TaskId InsertTaskAfter(TaskId anchor, const TaskSpec& spec);
  TaskId InsertTaskBefore(TaskId anchor, const TaskSpec& spec);
  // Unlinks the task from its resource and removes its edges. Does not
  // rewire dependencies through it (see transforms/).
  void RemoveTask(TaskId t);
  // Removes every listed live task and all their edges with one pass over
  // the edge list (O(V+E) however many), where RemoveTask costs an adjacency
  // rebuild each. Same rewiring caveat as RemoveTask.
  void RemoveTasks(const std::vector<TaskId>& tasks);

  // Pre-sizes the task and edge arrays (builders and copies that know their
  // size avoid the growth slack of push_back).
  void Reserve(size_t tasks, size_t edges);

  size_t task_count() const { return col_.kind.size(); }
  size_t live_task_count() const { return live_tasks_; }
  bool removed(TaskId t) const { return col_.flags[t.value()] & kFlagRemoved; }
  // A task of this graph that was not removed.
  bool live(TaskId t) const { return t.valid() && t.value() < task_count() && !removed(t); }

  TaskKind kind(TaskId t) const { return col_.kind[t.value()]; }
  uint32_t name_id(TaskId t) const { return col_.name[t.value()]; }
  std::string_view name(TaskId t) const { return names_[col_.name[t.value()]]; }
  ResourceId resource_of(TaskId t) const { return col_.resource[t.value()]; }
  int64_t duration_ns(TaskId t) const { return col_.duration[t.value()]; }
  int64_t gap_ns(TaskId t) const { return col_.gap[t.value()]; }
  // The live launch edge into a GPU task (invalid when none), kept as edges
  // come and go: what launched a task is asked after every insert, and
  // rebuilding the adjacency for it made thousands of inserts quadratic.
  EdgeId launch_edge_in(TaskId t) const { return col_.launch_in[t.value()]; }
  LayerId layer_of(TaskId t) const { return col_.layer[t.value()]; }
  Phase phase(TaskId t) const { return col_.phase[t.value()]; }
  int32_t step_of(TaskId t) const { return col_.step[t.value()]; }
  int64_t measured_start_ns(TaskId t) const { return col_.measured_start[t.value()]; }
  // Whether the task came from the trace (it has a measured start).
  bool measured(TaskId t) const { return col_.measured_start[t.value()] != kNotMeasured; }
  int64_t bytes(TaskId t) const { return col_.bytes[t.value()]; }
  int32_t priority(TaskId t) const { return col_.priority[t.value()]; }
  OpId op_of(TaskId t) const { return col_.op[t.value()]; }
  StepMark step_mark(TaskId t) const {
    const uint8_t f = col_.flags[t.value()];
    return (f & kFlagStepBegin) ? StepMark::kBegin
                                : ((f & kFlagStepEnd) ? StepMark::kEnd : StepMark::kNone);
  }
  // The task's gap is measured idle time no dependency explains (a stream
  // that waited for something the trace does not show), kept as measured.
  bool pinned_gap(TaskId t) const { return col_.flags[t.value()] & kFlagPinnedGap; }
  void set_pinned_gap(TaskId t) { col_.flags[t.value()] |= kFlagPinnedGap; }
  // The task ran inside the optimizer's step (an `Optimizer.step#...`
  // range, or launched from a call inside one): depgraph/kernel_class.h.
  bool in_optimizer_step(TaskId t) const { return col_.flags[t.value()] & kFlagOptimizerStep; }
  void set_in_optimizer_step(TaskId t) { col_.flags[t.value()] |= kFlagOptimizerStep; }
  // Kernel class per interned name, filled on first use by TaskClass (a
  // cache: copies share nothing and may refill it).
  std::vector<int8_t>& name_class_cache() const { return name_class_; }
  // A kernel name's math, packed, per interned name (0: not read yet),
  // filled on first use by KernelNameMath; a cache like name_class_cache().
  std::vector<uint8_t>& name_math_cache() const { return name_math_; }
  bool is_step_mark(TaskId t) const {
    return col_.flags[t.value()] & (kFlagStepBegin | kFlagStepEnd);
  }
  // Unknown (all zero) for tasks that are not traced kernels.
  const KernelGeometry& geometry(TaskId t) const { return geometries_[col_.geometry[t.value()]]; }
  void set_geometry(TaskId t, const KernelGeometry& g) { col_.geometry[t.value()] = InternGeometry(g); }
  TaskId prev_on_resource(TaskId t) const { return col_.prev[t.value()]; }
  TaskId next_on_resource(TaskId t) const { return col_.next[t.value()]; }

  // The setters check what the invariants above require of their argument
  // (a callers' bug, never input data: transforms/ and the Lua bindings
  // validate a script's numbers first and return a Status).
  void set_duration_ns(TaskId t, int64_t d) {
    REVERIE_CHECK(t.value() < task_count() && d >= 0 && (d == 0 || !is_step_mark(t)));
    col_.duration[t.value()] = d;
  }
  void set_gap_ns(TaskId t, int64_t g) {
    REVERIE_CHECK(t.value() < task_count() && g >= 0);
    col_.gap[t.value()] = g;
  }
  void set_layer(TaskId t, LayerId l) {
    REVERIE_CHECK(t.value() < task_count() && (!l.valid() || l.value() < layer_count()));
    col_.layer[t.value()] = l;
  }
  void set_phase(TaskId t, Phase p) {
    REVERIE_CHECK(t.value() < task_count());
    col_.phase[t.value()] = p;
  }
  void set_step(TaskId t, int32_t i) {
    REVERIE_CHECK(t.value() < task_count() && i >= -1 &&
                  (i == -1 || static_cast<size_t>(i) < step_count()));
    col_.step[t.value()] = i;
  }
  void set_priority(TaskId t, int32_t p) {
    REVERIE_CHECK(t.value() < task_count());
    col_.priority[t.value()] = p;
  }
  void set_bytes(TaskId t, int64_t b) {
    REVERIE_CHECK(t.value() < task_count() && b >= 0);
    col_.bytes[t.value()] = b;
  }
  void set_name(TaskId t, std::string_view n) {
    REVERIE_CHECK(t.value() < task_count());
    col_.name[t.value()] = InternName(n);
  }
  void set_op(TaskId t, OpId o) {
    REVERIE_CHECK(t.value() < task_count() && (!o.valid() || o.value() < op_count()));
    col_.op[t.value()] = o;
  }
  // For builders that re-time a task's modelled span (a blocking call shrunk
  // to its post-wait residual); never read by the simulator.
  void set_measured_start_ns(TaskId t, int64_t v) { col_.measured_start[t.value()] = v; }

  // ---- edges ----
  EdgeId AddEdge(TaskId src, TaskId dst, EdgeKind kind, int32_t delay_ns = 0);
  void RemoveEdge(EdgeId e);
  const Edge& edge(EdgeId e) const { return edges_[e.value()]; }
  void set_edge_delay_ns(EdgeId e, int32_t d) { edges_[e.value()].delay_ns = d; }
  void set_edge_pinned(EdgeId e) { edges_[e.value()].pinned = true; }
  size_t edge_count() const { return edges_.size(); }  // including removed
  // Every edge by EdgeId value, removed ones included (check Edge::removed).
  const std::vector<Edge>& edges() const { return edges_; }
  size_t live_edge_count() const { return live_edges_; }

  // Live out/in edges of every task; valid until the next mutation that adds
  // or removes a task or an edge.
  const Adjacency& adjacency() const;
  // The same, packed (as built, not patched): the simulator's layout. A
  // patched adjacency is built again, as every change used to make it.
  const Adjacency& packed_adjacency() const;
  // About how many steps (list entries moved or counted) the next
  // adjacency() takes: none when it is current, the changes' lists when it
  // is patched, every task and edge when it is built.
  int64_t AdjacencyWork() const;

  // Whether `to` depends on `from` through live edges and the order of
  // ordered resources (true when they are the same task): the cycle check
  // before adding a dependency to -> from. Searches only the tasks between
  // the two in a topological numbering that edits keep up to date
  // (reach_index.h), built by the first call.
  bool Reaches(TaskId from, TaskId to) const {
    REVERIE_CHECK(live(from) && live(to));
    return reach_.Reaches(*this, from, to);
  }
  // Steps Reaches and the edits that kept its numbering have taken so far;
  // a budget charges the difference around a call.
  int64_t reach_work() const { return reach_.work(); }

  // Calls f(d) for each task that depends on `t` directly: the destinations
  // of its live edges in `adj` (this graph's adjacency), then, on an
  // ordered resource, the next task.
  template <typename F>
  void ForEachDependent(const Adjacency& adj, TaskId t, F&& f) const {
    for (const EdgeId e : adj.out(t)) f(edges_[e.value()].dst);
    const TaskId next = col_.next[t.value()];
    if (next.valid() && resources_[col_.resource[t.value()].value()].ordered) f(next);
  }
  // The live tasks in an order where every dependency (a live edge, the
  // order of an ordered resource) comes before its dependent: emit(t) for
  // each. Incomplete on a cycle: FirstUnordered() names a task on or behind
  // one (CycleError).
  template <typename Emit>
  TopologicalResult SortDependencies(Emit&& emit) const {
    const Adjacency& adj = adjacency();
    return TopologicalOrder(
        DependencyCounts(adj),
        [&](uint32_t t, auto visit) {
          ForEachDependent(adj, TaskId(t), [&](TaskId d) { visit(d.value()); });
        },
        [&](uint32_t t) { emit(TaskId(t)); });
  }

  // Checks the invariants above and that live edges plus resource order
  // form no cycle. kFailedPrecondition names the first offending task.
  absl::Status Validate() const;

  // Bytes held by the arrays (for the memory benchmark).
  size_t MemoryBytes() const;

  // The GPU (a key of hardware's table) the kernels now stand for, once a
  // script moved them (retarget_gpu.lua); empty: the trace's own. Later
  // retimes start from it, so a second GPU change, or a dtype change after
  // one, moves kernels from where they are now.
  std::string_view gpu_key() const { return gpu_key_; }
  void set_gpu_key(std::string key) { gpu_key_ = std::move(key); }
  // Likewise the batch the forward and backward kernels now run, as a
  // multiple of the trace's (batch_size.lua); 1: as recorded.
  double batch_factor() const { return batch_factor_; }
  void set_batch_factor(double f) {
    REVERIE_CHECK(f > 0 && std::isfinite(f));
    batch_factor_ = f;
  }
  // Non-empty when a script sized memory events by an estimate rather than
  // from what the trace recorded (a peak read from them says it is one),
  // or could not size them at all (no peak is predicted): says why.
  std::string_view memory_estimate() const { return memory_estimate_; }
  // Adds `why` (once) to what memory_estimate says, after a "; ".
  void AddMemoryEstimate(std::string_view why);
  std::string_view memory_unknown() const { return memory_unknown_; }
  void set_memory_unknown(std::string why) { memory_unknown_ = std::move(why); }

 private:
  static constexpr uint8_t kFlagRemoved = 1;
  static constexpr uint8_t kFlagStepBegin = 2;
  static constexpr uint8_t kFlagStepEnd = 4;
  static constexpr uint8_t kFlagPinnedGap = 8;
  static constexpr uint8_t kFlagOptimizerStep = 16;

  TaskId NewTask(const TaskSpec& spec, ResourceId resource);
  void LinkAfter(TaskId anchor, TaskId t);   // anchor may be invalid: at the front
  void Unlink(TaskId t);
  void Touch() { adjacency_.Invalidate(); }
  // Each live task's count of direct dependencies (SortDependencies's
  // `pending`); kNotANode for a removed task.
  std::vector<uint32_t> DependencyCounts(const Adjacency& adj) const;
  // Records an edge added or removed for the next patch of the adjacency.
  void RecordEdgeChange(EdgeId e, bool added);
  size_t PatchLimit() const;
  // Applies the recorded changes to the built adjacency; false when it
  // should be built again instead.
  bool PatchAdjacency() const;
  const Adjacency& BuildAdjacency() const;
  uint32_t InternGeometry(const KernelGeometry& g);

  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, uint32_t> name_index_;
  mutable std::vector<int8_t> name_class_;  // name_class_cache()
  mutable std::vector<uint8_t> name_math_;  // name_math_cache()

  std::vector<Resource> resources_;
  std::vector<TaskId> res_first_;
  std::vector<TaskId> res_last_;

  std::vector<Layer> layers_;
  absl::flat_hash_map<std::string, LayerId> layer_index_;
  std::vector<Step> steps_;
  std::vector<MemoryEvent> memory_;
  std::vector<CpuOp> ops_;
  // Per op: the previous op of its name, its first and last child, its next
  // sibling (ForEachOpNamed, ForEachChildOp); per name id: its latest op.
  struct OpLinks {
    OpId prev_same_name, first_child, last_child, next_sibling;
  };
  std::vector<OpLinks> op_links_;
  std::vector<OpId> op_last_of_name_;
  std::vector<hardware::OpArgs> op_inputs_;
  absl::flat_hash_map<std::string, uint32_t> op_inputs_index_;
  absl::flat_hash_map<std::string, int64_t> op_cost_without_calls_;
  std::vector<KernelGeometry> geometries_;  // [0] is the unknown geometry
  absl::flat_hash_map<KernelGeometry, uint32_t> geometry_index_;

  TaskColumns col_;
  size_t live_tasks_ = 0;
  std::string gpu_key_;
  double batch_factor_ = 1;
  std::string memory_estimate_;
  std::string memory_unknown_;

  std::vector<Edge> edges_;
  size_t live_edges_ = 0;

  mutable AdjacencyCache adjacency_;
  mutable ReachIndex reach_;
};

// The one message for a dependency cycle: "dependency cycle through task N
// (name)", naming a task on the cycle or behind it (kFailedPrecondition).
absl::Status CycleError(const Graph& g, TaskId t);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_GRAPH_H_
