// File: depgraph/build_counters.h
//
// What the graph builder saw, inferred or could not explain, declared once
// with a severity and a description (perfetto's stats.h style; severities
// as in proto/trace_counters.h). `reverie info` shows the non-zero ones with
// their descriptions, replay's and info's JSON as "build_counters" by name.
#ifndef REVERIE_DEPGRAPH_BUILD_COUNTERS_H_
#define REVERIE_DEPGRAPH_BUILD_COUNTERS_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "base/checked_math.h"
#include "proto/trace_counters.h"

namespace reverie::depgraph {

// F(name, severity, description)
#define REVERIE_BUILD_COUNTERS(F)                                                                  \
  /* size of the graph */                                                                          \
  F(cpu_tasks, kInfo, "CPU tasks (API calls and CPU work between them)")                           \
  F(gpu_tasks, kInfo, "GPU tasks (kernels, copies, memsets)")                                      \
  F(edges, kInfo, "explicit dependency edges")                                                     \
  F(threads, kInfo, "CPU threads")                                                                 \
  F(streams, kInfo, "GPU streams")                                                                 \
  F(cpu_ops, kInfo, "framework ops whose CPU time is kept apart (depgraph/builder_cpu_time.cc)")   \
  F(cpu_threads_without_ops, kInfo, "threads with API calls but no op spans: whole gaps kept")     \
  /* dependencies from the trace and inferred ones */                                              \
  F(sync_edge_device, kInfo, "edges from a device-wide synchronization to the work it waited for") \
  F(sync_edge_stream, kInfo, "edges from a stream synchronization to the work it waited for")      \
  F(sync_edge_event, kInfo, "edges from an event synchronization to the work it waited for")       \
  F(event_edge_recorded, kInfo, "cross-stream edges from a recorded event wait")                   \
  F(inferred_event_edge, kInfo, "cross-stream edges inferred from a wait the trace implies")       \
  F(inferred_sync, kInfo, "synchronizations inferred from a blocking call's duration")             \
  F(inferred_blocking_copy, kInfo, "blocking copies whose wait for earlier GPU work was inferred") \
  F(inferred_blocking_copy_wait, kInfo, "blocking copies that waited for earlier work")            \
  F(inferred_blocking_copy_wait_ns, kInfo, "time blocking copies waited for earlier work, ns")     \
  F(blocking_copy_return, kInfo, "CPU work after a blocking copy's call tied to the copy's end")   \
  F(inferred_inter_thread, kInfo, "waits of one thread for another, inferred from gaps")           \
  F(inferred_inter_thread_wait_ns, kInfo, "time of those waits, ns")                               \
  F(inter_thread_gap_busy, kInfo, "gaps between a thread's calls that are CPU work, not a wait")   \
  F(thread_start_anchor, kInfo, "threads whose first task is anchored to another thread's call")   \
  F(root_anchor, kInfo,                                                                            \
    "tasks anchored at the start of the trace (nothing earlier explains them)")                    \
  F(sync_wait_ns, kInfo, "time CPU calls spent waiting in synchronizations, ns")                   \
  F(steps_not_counted, kInfo,                                                                      \
    "trailing steps left out of the mean step time (step_time.h rule 4)")                          \
  F(step_mark_moved, kInfo, "step markers moved to the thread's last call of the step")            \
  /* what the trace contradicts or cannot explain */                                               \
  F(kernel_without_launch, kAnomaly, "GPU work with no launching call: anchored by stream order")  \
  F(unmatched_correlation, kAnomaly, "GPU work whose correlation id no CPU call has")              \
  F(duplicate_correlation, kAnomaly, "two CPU calls with one correlation id (the first is used)")  \
  F(negative_duration_api_call, kAnomaly, "API calls that end before they start: zero length")     \
  F(negative_duration_gpu_op, kAnomaly, "GPU work that ends before it starts: zero length")        \
  F(nested_api_call, kAnomaly, "API calls inside another call on the same thread: flattened")      \
  F(overlapping_api_call, kAnomaly, "API calls overlapping the previous one: shortened")           \
  F(overlapping_gpu_op, kAnomaly, "GPU work overlapping the previous work on its stream")          \
  F(sync_clock_skew, kAnomaly, "syncs that returned before the work they wait for ended")          \
  F(sync_not_waiting, kAnomaly, "syncs too short to have waited: ordered, not waiting")            \
  F(sync_unknown_kind, kAnomaly, "synchronizations of an unknown kind: treated as device-wide")    \
  F(sync_without_call, kAnomaly, "synchronizations with no CPU call: dropped")                     \
  F(event_edge_rejected, kAnomaly, "event edges the recorded times contradict: dropped")           \
  F(event_wait_unresolved, kAnomaly, "event waits whose recording was not found: dropped")         \
  F(event_wait_idle_stream, kInfo,                                                                 \
    "event waits by or through a stream that runs no GPU work (a library's fork/join): followed")  \
  F(op_inputs_inconsistent, kAnomaly,                                                              \
    "op input shapes whose list ranks contradict their sizes: ignored")                            \
  F(blocking_copy_unrouted, kAnomaly, "blocking copies with no stream to wait on")                 \
  F(cross_stream_wait_inferred, kInfo,                                                             \
    "ops that waited for work on another stream with no recorded event: dependency inferred")      \
  F(cross_stream_wait_inferred_ns, kInfo, "the idle stream time those dependencies explain, ns")   \
  F(stream_wait_from_call, kInfo,                                                                  \
    "ops whose idle wait a cudaStreamWaitEvent before their launch explains: dependency inferred") \
  F(stream_wait_from_call_ns, kInfo, "the idle stream time those dependencies explain, ns")        \
  F(launch_queue_wait, kInfo,                                                                      \
    "launch calls held by the device's full queue of pending work: wait for the task that freed "  \
    "it")                                                                                          \
  F(launch_queue_wait_ns, kInfo, "the time those calls waited, ns")                                \
  F(unexplained_stream_gap, kAnomaly, "idle GPU time no dependency explains, kept as a gap")       \
  F(unexplained_stream_gap_ns, kAnomaly, "that idle GPU time, ns")                                 \
  F(unexplained_launch_wait, kAnomaly, "launch delays longer than the launch model explains")      \
  F(unexplained_launch_wait_ns, kAnomaly, "that extra delay, ns")                                  \
  F(inter_thread_gap_unexplained, kAnomaly, "gaps between calls that no dependency explains")      \
  F(inter_thread_gap_unexplained_ns, kAnomaly, "that time, ns")                                    \
  F(steps_on_thread_without_calls, kAnomaly, "steps marked on a thread that made no API call")     \
  F(trace_without_steps, kAnomaly, "no ProfilerStep or step markers: one step")

enum class BuildCounter : uint16_t { REVERIE_BUILD_COUNTERS(REVERIE_COUNTER_ENUMERATOR) };
inline constexpr CounterSpec kBuildCounterSpecs[] = {REVERIE_BUILD_COUNTERS(REVERIE_COUNTER_SPEC)};
inline constexpr size_t kBuildCounterCount = std::size(kBuildCounterSpecs);

inline constexpr const CounterSpec& Spec(BuildCounter c) {
  return kBuildCounterSpecs[static_cast<size_t>(c)];
}

// Invariant: one saturating value per declared counter (a trace's numbers
// are untrusted, so sums of them must not wrap).
class BuildStats {
 public:
  void Add(BuildCounter c, int64_t delta = 1) {
    int64_t& v = values_[static_cast<size_t>(c)];
    v = SatAdd(v, delta);
  }
  int64_t Get(BuildCounter c) const { return values_[static_cast<size_t>(c)]; }

  // Calls fn(spec, value) for every non-zero counter, by name (the order
  // of the JSON outputs).
  template <typename Fn>
  void ForEachNonZero(Fn fn) const {
    for (size_t i : ByName()) {
      if (values_[i] != 0) fn(kBuildCounterSpecs[i], values_[i]);
    }
  }
  bool empty() const {
    for (int64_t v : values_) {
      if (v != 0) return false;
    }
    return true;
  }

 private:
  static const std::array<size_t, kBuildCounterCount>& ByName() {
    static const std::array<size_t, kBuildCounterCount> order = [] {
      std::array<size_t, kBuildCounterCount> o{};
      for (size_t i = 0; i < o.size(); ++i) o[i] = i;
      std::sort(o.begin(), o.end(), [](size_t a, size_t b) {
        return kBuildCounterSpecs[a].name < kBuildCounterSpecs[b].name;
      });
      return o;
    }();
    return order;
  }

  std::array<int64_t, kBuildCounterCount> values_{};
};

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_BUILD_COUNTERS_H_
