// File: depgraph/builder.h
//
// BuildGraph(): raw Trace -> dependency Graph (Daydream §4.2-4.3, with the
// Kineto-era additions of Lumos: inter-stream event edges and inferred
// inter-thread edges).
//
// What becomes what:
// - Every ApiCall is a kCpuApi task on its (pid, tid) thread, in start order;
//   its gap is the untraced CPU time until the next call on the thread (0 for
//   the thread's last call). A call wholly inside the previous call on the same
//   thread (a driver call under its runtime call) is folded into the outer one
//   (counter nested_api_call); its correlation id then points at the outer task.
// - Every GpuActivity is a kKernel / kMemcpy / kMemset task on its
//   (device, stream) resource, in start order. Its stream gap is the measured
//   idle time before the next task on the stream, capped at
//   BuildOptions::stream_gap_cap_ns: below the cap it is the GPU's own
//   back-to-back overhead (kept exactly, so replay is faithful); above it the
//   stream was idle waiting for something, which an edge must explain.
// - Launch edge (call -> GPU task with the same correlation id). Its delay is
//   a latency measured from the trace (task start - call end; often negative:
//   a kernel starts before its launch call returns), never a start time:
//   * the op's start is explained by its stream predecessor or an event edge
//     (within explain_tolerance_ns): the launch must not bind, so the delay is
//     min(measured latency, the device's median idle-stream latency);
//   * else, latency <= max_launch_latency_ns: the op waited for its launch;
//     the delay is the measured latency, so an idle-stream kernel starts where
//     it did relative to its launch and moves with the CPU;
//   * else the op was launched long before and nothing we can see held it
//     back: the stream was busy with untraced GPU-side work (CUDA-graph nodes,
//     hardware contention). That idle time is kept as its stream
//     predecessor's gap (GPU-side, like Daydream's untraced CPU gaps) and
//     counted (unexplained_stream_gap, unexplained_stream_gap_ns), so replay
//     stays faithful and the report says how much time the model could not
//     attribute. (The first op on a stream has no predecessor: its latency is
//     kept on the launch edge, counted as unexplained_launch_wait.)
// - GPU work without a launch call (or whose correlation matches none) is
//   anchored on the last CPU call that ended before it (kernel_without_launch,
//   unmatched_correlation).
// - Sync edges (GPU task -> CPU call that blocked on it), from Sync records
//   when the trace has them, else inferred from blocking calls by name and by
//   timing (see builder_sync.cc). The blocking call's duration becomes its
//   post-wait residual so that the wait itself comes from the edge.
// - Blocking copies (cudaMemcpy; cudaMemcpyAsync from/to pageable memory)
//   whose copy ran inside the call (its end may trail the return by up to
//   max(sync_tolerance_ns, a tenth of the copy)): the call could not start
//   the copy before the work submitted earlier to its stream ended, so a
//   sync edge from that work carries the wait (inferred_blocking_copy_wait,
//   _ns) and a faster GPU shortens it. The call launches the copy, so an
//   edge copy -> call would be a cycle: the call keeps only its own part up
//   to the copy's start (a few us of issue, or the staging time on an idle
//   stream), and the copy is routed to the next call on its thread
//   (inferred_blocking_copy), with the measured hand-off as delay, and to
//   the CPU work between them (the rest of the op that copied, a step's
//   end: blocking_copy_return), which runs after the call returned.
// - Event edges (GPU -> GPU across streams) from STREAM_WAIT_EVENT records,
//   else inferred from cudaStreamWaitEvent calls. An op still left idle
//   long before its start by nothing recorded waited for another stream:
//   for work that ended within cross_stream_window_ns before it
//   (cross_stream_wait_inferred), else, when a cudaStreamWaitEvent call lies
//   between its stream predecessor's launch and its own, for the work last
//   submitted to another stream before that call, which is what an event
//   records (stream_wait_from_call: cuDNN's multi-stream FFT convolutions
//   leave side streams idle for milliseconds on a busy GPU; as fixed gaps
//   they would not move when the main stream's kernels get faster).
// - Inter-thread edges where a thread resumes after a long gap right after
//   another thread's last activity (Lumos' rule). The wait is the longest
//   stretch of the gap with no activity at all on the thread (CPU ops started
//   inside the gap count as work, e.g. the autograd thread's last
//   AccumulateGrad after its last launch), so a thread that did a little CPU
//   work before idling is still seen to wait. The edge's delay is the
//   measured hand-off (other thread's last call end -> resumed call); the
//   gap keeps only the CPU work before the idle stretch, so the waiting time
//   comes from the dependency (inferred_inter_thread, _wait_ns). Long gaps
//   that are CPU work (inter_thread_gap_busy) or that no other thread
//   explains (inter_thread_gap_unexplained, _ns: data loading, Python) stay
//   gaps. Plus one anchor per thread for its first call (builder_threads.cc).
// - When several tasks have no cause inside the trace (work already running
//   when the window opened, a thread's first call with no other thread to
//   anchor on), a zero-length "trace window start" task releases each at its
//   measured offset from the window's start (counter root_anchor): the only
//   measured offsets the model keeps, one per root.
//
// Every task gets a layer (innermost enclosing Range with a module path on
// its thread), a phase (innermost enclosing Range with a phase) and an
// step (enclosing Step on its thread, else the latest step
// started before it); GPU tasks inherit all three from their launching call.
// A trace without steps gets one step covering everything.
//
// Data anomalies are counted in BuildStats, never fatal. Errors: only
// kInvalidArgument for a trace that cannot form a graph at all (no tasks).
#ifndef REVERIE_DEPGRAPH_BUILDER_H_
#define REVERIE_DEPGRAPH_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "depgraph/build_counters.h"
#include "depgraph/graph.h"
#include "proto/trace.h"

namespace reverie::depgraph {

struct BuildOptions {
  // Idle time on a stream up to this much is the GPU's back-to-back overhead
  // and stays in the task's gap; beyond it the stream was waiting.
  int64_t stream_gap_cap_ns = 2'000;
  // The most of an op's measured launch latency (start - launching call's
  // end) a launch edge may carry. Longer latencies on an idle stream were
  // waits for something (another stream, untraced GPU work); the graph must
  // explain them with edges, and what it cannot is kept as stream gap and
  // counted (unexplained_stream_gap / _ns), see above.
  int64_t max_launch_latency_ns = 50'000;
  // An op is explained by its stream predecessor or an event edge when that
  // constraint lands within this much of its measured start.
  int64_t explain_tolerance_ns = 0;
  // An op nothing recorded explains that starts at most this long after
  // work on another stream of its device ended waited for that work (an
  // event the trace did not record): the builder adds the dependency and
  // counts it (cross_stream_wait_inferred). 0 turns the inference off.
  int64_t cross_stream_window_ns = 30'000;
  // A blocking call that ends within this long after a GPU task ends is taken
  // to have waited for it (sync inference without Sync records).
  int64_t sync_tolerance_ns = 30'000;
  // A thread that resumes after a gap longer than this, within
  // inter_thread_window_ns after the last activity (API call or CPU range
  // boundary) of another thread of the process that was active during the
  // gap, is taken to have waited for that thread.
  int64_t inter_thread_gap_ns = 1'000'000;
  int64_t inter_thread_window_ns = 2'000'000;
  // The same for gaps on either side of the autograd engine's hand-off (a
  // thread that runs `autograd::engine::evaluate_function` ops, and the
  // threads of its process): loss.backward() blocks its thread until the
  // engine is done, and the engine waits for backward() to be called, in
  // steps far shorter than a millisecond.
  int64_t autograd_gap_ns = 100'000;
  // Infer syncs, events and inter-thread edges (tests switch it off to see the
  // raw graph).
  bool infer_dependencies = true;
  // Keep the CPU time of ops apart from framework time where the trace has op
  // spans (builder_cpu_time.cc); false keeps every call's gap whole (the
  // model before ops were kept, for comparisons).
  bool cpu_ops = true;
};

// `stats` may be null.
absl::StatusOr<Graph> BuildGraph(const Trace& trace, const BuildOptions& opts = {},
                                 BuildStats* stats = nullptr);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_BUILDER_H_
