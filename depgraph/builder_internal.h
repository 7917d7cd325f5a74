// File: depgraph/builder_internal.h
//
// State shared by the builder's passes (builder.cc: tasks and launch edges;
// builder_sync.cc: sync, event and blocking-copy edges and the blocked
// calls' residual durations; builder_threads.cc:
// inter-thread edges; builder_annotate.cc: layers, phases, steps).
// Not part of the public API.
//
// Invariants once BuildCpuTasks/BuildGpuTasks ran:
// - calls[] and ops[] are in task order; calls of one thread are contiguous
//   and sorted by start; ops of one stream are contiguous and sorted by start.
// - Every call/op has its task in the graph; times are the trace's, untouched
//   (the passes change task durations in the graph, never these records).
#ifndef REVERIE_DEPGRAPH_BUILDER_INTERNAL_H_
#define REVERIE_DEPGRAPH_BUILDER_INTERNAL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/sorted_runs.h"
#include "depgraph/builder.h"
#include "depgraph/graph.h"
#include "proto/trace.h"

namespace reverie::depgraph::internal {

inline constexpr uint32_t kNone = UINT32_MAX;

struct CpuCall {
  int64_t start = 0;
  int64_t end = 0;
  uint32_t api = 0;     // index into trace api_calls
  uint32_t thread = 0;  // index into Context::threads
  TaskId task;
  int32_t step = -1;
  uint32_t first_launch = kNone;  // op index of the first GPU task it launched
};

struct GpuOp {
  int64_t start = 0;
  int64_t end = 0;
  uint32_t act = 0;     // index into trace gpu_activities
  uint32_t stream = 0;  // index into Context::streams
  TaskId task;
  uint32_t launch = kNone;        // call index of the launching call
  bool anchored = false;          // `launch` is an anchor, not a correlated call
  EdgeId launch_edge;             // invalid when launched by nothing known
  bool explained = false;         // start explained by stream order or an event edge
};

struct ThreadInfo {
  int64_t pid = 0;
  int64_t tid = 0;
  ResourceId resource;
  uint32_t begin = 0;  // calls[begin, end)
  uint32_t end = 0;
};

struct StreamInfo {
  int32_t device = 0;
  int64_t stream = 0;
  ResourceId resource;
  uint32_t begin = 0;  // ops[begin, end)
  uint32_t end = 0;
  // Per op, the start of its launching call (the op's own start without one),
  // made non-decreasing: the order work was submitted to the stream.
  std::vector<int64_t> submitted;
};

// One profiler step (ProfilerStep#N / collector step), in graph order.
struct StepInfo {
  int64_t start = 0;  // a_i: the CPU span
  int64_t end = 0;    // b_i
  int64_t pid = 0;
  int64_t tid = 0;
};

// A CPU task the builder added beside the API calls (a stretch of op or
// framework time, a step marker), with the real interval it stands for.
struct CpuPiece {
  TaskId task;
  int64_t start = 0;
  int64_t end = 0;
  uint32_t thread = 0;
};

// A CPU task and the real time it starts at, for lookups by time.
struct Timed {
  int64_t start;
  TaskId task;
};

// std::sort, after one pass that finds most of the builder's inputs sorted
// already (the importer writes ranges and calls in time order per thread).
// With the comparators' tie-breakers the result is std::sort's.
template <typename It, typename Less>
void SortUnlessSorted(It first, It last, Less less) {
  if (!std::is_sorted(first, last, less)) std::sort(first, last, less);
}

// Sorts v stably by `less`, where v is a sequence of runs, each usually
// sorted already (a thread's pieces of CPU time, then its calls; one run
// per thread): `run_starts` holds where each run begins, ascending, from 0.
// Sorted runs are merged (MergeRuns); a run out of order makes it one
// stable sort. The result is the stable sort's either way.
template <typename T, typename A, typename Less>
void SortRuns(std::vector<T, A>& v, std::vector<size_t> run_starts, Less less) {
  run_starts.push_back(v.size());
  for (size_t r = 0; r + 1 < run_starts.size(); ++r) {
    const auto begin = v.begin() + static_cast<std::ptrdiff_t>(run_starts[r]);
    if (!std::is_sorted(begin, v.begin() + static_cast<std::ptrdiff_t>(run_starts[r + 1]), less)) {
      std::stable_sort(v.begin(), v.end(), less);
      return;
    }
  }
  MergeRuns(v.begin(), std::move(run_starts), less);
}

// Orders v by group, groups ascending by their key (a thread's pid and
// tid, a stream's device and id), keeping the input's order within a group,
// and returns where each group begins, then v.size(). Then sorting each
// group by the rest of a key is the sort by the whole key, at a cost of
// O(n) plus the groups' own sorts, which find a trace's calls and GPU work
// in time order already where the whole array interleaves its threads.
template <typename T, typename GroupOf>
std::vector<size_t> GroupStable(std::vector<T>& v, GroupOf group_of) {
  using Key = decltype(group_of(v.front()));
  absl::flat_hash_map<Key, uint32_t> slot_of;
  std::vector<Key> keys;
  std::vector<uint32_t> slots(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const Key k = group_of(v[i]);
    if (i > 0 && k == keys[slots[i - 1]]) {  // runs of one group: no lookup
      slots[i] = slots[i - 1];
      continue;
    }
    const auto [it, added] = slot_of.try_emplace(k, static_cast<uint32_t>(keys.size()));
    if (added) keys.push_back(k);
    slots[i] = it->second;
  }
  std::vector<uint32_t> by_key(keys.size());
  for (uint32_t s = 0; s < by_key.size(); ++s) by_key[s] = s;
  std::sort(by_key.begin(), by_key.end(),
            [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  std::vector<size_t> at(keys.size(), 0);  // a group's size, then where its next element goes
  for (const uint32_t s : slots) ++at[s];
  std::vector<size_t> starts;
  starts.reserve(keys.size() + 1);
  size_t sum = 0;
  for (const uint32_t s : by_key) {
    starts.push_back(sum);
    sum += std::exchange(at[s], sum);
  }
  starts.push_back(v.size());
  std::vector<T> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[at[slots[i]]++] = std::move(v[i]);
  v.swap(out);
  return starts;
}

inline bool StartsBefore(const Timed& a, const Timed& b) { return a.start < b.start; }

struct Context {
  Context(const Trace& t, const BuildOptions& o, BuildStats& s, Graph& graph)
      : trace(t), opts(o), stats(s), g(graph) {}
  const Trace& trace;
  const BuildOptions& opts;
  BuildStats& stats;
  Graph& g;

  std::vector<ThreadInfo> threads;
  std::vector<StreamInfo> streams;
  std::vector<CpuCall> calls;
  std::vector<GpuOp> ops;
  absl::flat_hash_map<uint64_t, uint32_t> call_by_corr;
  std::vector<StepInfo> steps;     // sorted by start; index = graph step
  std::vector<CpuPiece> pieces;    // per thread in time order, threads in order
  // Median idle-stream launch latency (op start - call end) per device.
  absl::flat_hash_map<int32_t, int64_t> typical_latency;
  // Per op name (string id): durations of the ops that issued no API call.
  absl::flat_hash_map<uint32_t, std::vector<int64_t>> op_ns_without_calls;

  std::string_view ApiName(const CpuCall& c) const {
    return trace.String(trace.events().api_calls(static_cast<int>(c.api)).name_sid());
  }
  const proto::GpuActivity& Act(const GpuOp& o) const {
    return trace.events().gpu_activities(static_cast<int>(o.act));
  }
  // Index of the last op on stream s submitted strictly before time t, or kNone.
  uint32_t LastSubmittedBefore(uint32_t s, int64_t t) const;
  // Index of the first op on stream s submitted at or after time t, or kNone.
  uint32_t FirstSubmittedFrom(uint32_t s, int64_t t) const;
  // Index of the last op on stream s ending at or before t, or kNone.
  uint32_t LastEndingBy(uint32_t s, int64_t t) const;
  // The call that follows call c on its thread, or kNone.
  uint32_t NextOnThread(uint32_t c) const {
    return c + 1 < threads[calls[c].thread].end ? c + 1 : kNone;
  }
  // Makes the CPU call `c` wait for GPU op `o` (a kSync edge) and records how
  // long the call waited; ApplySyncResiduals() then shrinks each blocked call
  // to its post-wait residual.
  void AddSyncEdge(uint32_t o, uint32_t c);
  std::vector<int64_t> wait_end;  // per call: latest end of a GPU op it waited for
  // Per call: where its own CPU part ends. The call's end, except for a
  // blocking copy, whose part after the copy started is the copy itself (an
  // edge from the copy to the next call on the thread carries it).
  std::vector<int64_t> own_end;
  // (call, op) of each blocking copy routed past its call (builder_sync.cc):
  // RouteBlockingCopies ties the copy to the task that follows the call once
  // the thread's ops are in place.
  std::vector<std::pair<uint32_t, uint32_t>> blocking_copies;
};

void BuildCpuTasks(Context& ctx);
void BuildGpuTasks(Context& ctx);
void AddLaunchEdges(Context& ctx);
void AnchorRoots(Context& ctx);
void FinishLaunchDelays(Context& ctx);
// An op whose idle stretch before its start (from `after`, what otherwise
// bound it) nothing recorded explains, launched after a cudaStreamWaitEvent
// on its thread: a trace without event identities (Kineto's) does not say
// which stream the event was recorded on, so the wait is tied to the work
// submitted last to another stream of the device before the wait call
// (what an event records), when that work ended inside the stretch. Adds
// the event edge with the measured residual as its delay; returns whether
// it did (builder_sync.cc).
bool InferWaitFromCall(Context& ctx, uint32_t o, int64_t after);
// An edge delay in ns as the graph stores it (int32), clamped (builder.cc).
int32_t ClampDelay(int64_t d);
void AddSyncEdges(Context& ctx);
// Launch calls held by a full device queue wait for the task that released
// them (builder_queue.cc); called by AddSyncEdges before the residuals.
void AddLaunchQueueWaits(Context& ctx);
void AddInterThreadEdges(Context& ctx);
void AddSteps(Context& ctx);
void SplitCpuTime(Context& ctx);
// After SplitCpuTime: a blocking copy's call returns after the copy, so the
// CPU work that follows the call on its thread (an op's rest, a step's end)
// waits for the copy too, not only the thread's next call (builder_sync.cc).
void RouteBlockingCopies(Context& ctx);
void Annotate(Context& ctx);
// The trace's memory events, with the layer and phase of their ops
// (builder_memory.cc).
void AddMemory(Context& ctx);
// Layer for a dotted module path, creating its ancestors first.
LayerId LayerFor(Graph& g, std::string_view path);

}  // namespace reverie::depgraph::internal

#endif  // REVERIE_DEPGRAPH_BUILDER_INTERNAL_H_
