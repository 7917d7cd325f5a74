#include "depgraph/builder.h"

#include <string>
#include <string_view>
#include <vector>

#include "depgraph/simulator.h"
#include "depgraph/test_trace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

using test_trace::Find;
using test_trace::T;

std::vector<Edge> EdgesOfKind(const Graph& g, EdgeKind k) {
  std::vector<Edge> out;
  for (const Edge& e : g.edges()) {
    if (!e.removed && e.kind == k) out.push_back(e);
  }
  return out;
}

// Every step replays exactly when nothing changed.
void ExpectFaithful(const Graph& g) {
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<StepTime> m = MeasuredSteps(g);
  ASSERT_EQ(m.size(), r->steps.size());
  for (size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(r->steps[i].duration_ns(), m[i].duration_ns()) << "step " << i;
  }
}

TEST(BuilderTest, EmptyTraceIsInvalidArgument) {
  Trace tr;
  absl::StatusOr<Graph> g = BuildGraph(tr);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BuilderTest, TasksGapsAndLaunchDelays) {
  T t;
  t.Api("cudaLaunchKernel", 1, 1000, 1010, 1);
  t.Api("cudaLaunchKernel", 1, 1030, 1040, 2);
  t.Api("cudaLaunchKernel", 1, 1100, 1110, 3);
  t.Gpu("k1", 7, 1015, 1200, 1);  // idle stream: latency 5 after the call ended
  t.Gpu("k2", 7, 1201, 1300, 2);  // queued behind k1
  t.Gpu("k3", 7, 5000, 5100, 3);  // idle stream again, long latency
  BuildStats stats;
  const Graph g = t.Build(&stats);
  EXPECT_EQ(g.task_count(), 6u);
  const TaskId c1 = Find(g, "cudaLaunchKernel", 0);
  const TaskId c3 = Find(g, "cudaLaunchKernel", 2);
  EXPECT_EQ(g.gap_ns(c1), 20);
  EXPECT_EQ(g.gap_ns(c3), 0);  // last on its thread
  EXPECT_EQ(g.gap_ns(Find(g, "k1")), 1);    // back-to-back overhead kept
  EXPECT_EQ(g.gap_ns(Find(g, "k2")), 2000);  // idle stream: capped
  const std::vector<Edge> launches = EdgesOfKind(g, EdgeKind::kLaunch);
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(launches[0].delay_ns, 5);
  EXPECT_LE(launches[1].delay_ns, 1201 - 1040);  // queued: does not bind
  EXPECT_EQ(launches[2].delay_ns, 5000 - 1110);
  EXPECT_EQ(stats.Get(BuildCounter::kernel_without_launch), 0);
  EXPECT_EQ(g.step_count(), 1u);  // no markers: one step
  ExpectFaithful(g);
}

TEST(BuilderTest, UnexplainedIdleStreamTimeStaysWithTheStream) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  t.Api("cudaLaunchKernel", 1, 20, 30, 2);
  t.Gpu("a", 7, 40, 100, 1);
  t.Gpu("b", 7, 900'000, 900'100, 2);  // launched ~900 us earlier, stream idle
  BuildStats stats;
  Graph g = t.Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::unexplained_stream_gap), 1);
  EXPECT_EQ(g.gap_ns(Find(g, "a")), 900'000 - 100);
  const std::vector<Edge> launches = EdgesOfKind(g, EdgeKind::kLaunch);
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_LE(launches[1].delay_ns, 50'000);  // never the 900 us wait
  ExpectFaithful(g);
  // The wait moves with the GPU, not the CPU: a shorter "a" starts "b" sooner.
  g.set_duration_ns(Find(g, "a"), 10);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_ns[Find(g, "b").value()], 40 + 10 + (900'000 - 100));
}

// DDP's copy-back after an all-reduce on another stream, with no event
// record (RCCL traces): the copy waited for the collective, so the builder
// infers that dependency instead of pinning the idle time.
TEST(BuilderTest, IdleStreamEndingRightAfterAnotherStreamsWorkWaitedForIt) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  t.Api("ncclAllReduce", 1, 20, 30, 2);
  t.Api("cudaMemcpyAsync", 1, 40, 50, 3);
  t.Gpu("grad", 7, 15, 100, 1);
  t.Gpu("ncclDevKernel_Generic", 14, 110, 800'000, 2);
  t.Gpu("Memcpy DtoD (Device -> Device)", 7, 800'015, 800'100, 3, proto::GpuActivity::MEMCPY);
  BuildStats stats;
  Graph g = t.Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::cross_stream_wait_inferred), 1);
  EXPECT_EQ(stats.Get(BuildCounter::unexplained_stream_gap), 0);
  const TaskId copy = Find(g, "Memcpy DtoD (Device -> Device)");
  const TaskId nccl = Find(g, "ncclDevKernel_Generic");
  bool found = false;
  for (const Edge& e : EdgesOfKind(g, EdgeKind::kEvent)) {
    if (e.src == nccl && e.dst == copy) {
      found = true;
      EXPECT_EQ(e.delay_ns, 15);  // the measured residual
    }
  }
  EXPECT_TRUE(found);
  ExpectFaithful(g);
  // The copy now follows the collective: a faster network moves it.
  g.set_duration_ns(nccl, 5000);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_ns[copy.value()], r->end_ns[nccl.value()] + 15);
}

// Beyond the window (30 us by default) nothing is inferred: the idle time
// stays unexplained and is counted.
TEST(BuilderTest, NoCrossStreamWaitIsInferredBeyondTheWindow) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  t.Api("ncclAllReduce", 1, 20, 30, 2);
  t.Api("cudaMemcpyAsync", 1, 40, 50, 3);
  t.Gpu("grad", 7, 15, 100, 1);
  t.Gpu("ncclDevKernel_Generic", 14, 110, 800'000, 2);
  t.Gpu("Memcpy DtoD (Device -> Device)", 7, 900'000, 900'100, 3, proto::GpuActivity::MEMCPY);
  BuildStats stats;
  Graph g = t.Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::cross_stream_wait_inferred), 0);
  EXPECT_EQ(stats.Get(BuildCounter::unexplained_stream_gap), 1);
  ExpectFaithful(g);
}

TEST(BuilderTest, InferredDeviceSyncWaitsAndKeepsResidual) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  t.Api("cudaDeviceSynchronize", 1, 20, 520, 2);
  t.Api("cudaLaunchKernel", 1, 530, 540, 3);
  t.Gpu("k1", 7, 15, 510, 1);
  t.Gpu("k2", 7, 545, 600, 3);
  BuildStats stats;
  Graph g = t.Build(&stats);
  const TaskId sync = Find(g, "cudaDeviceSynchronize");
  const std::vector<Edge> syncs = EdgesOfKind(g, EdgeKind::kSync);
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0].src, Find(g, "k1"));
  EXPECT_EQ(syncs[0].dst, sync);
  EXPECT_EQ(g.duration_ns(sync), 10);  // 520 - 510: the post-wait residual
  EXPECT_EQ(stats.Get(BuildCounter::inferred_sync), 1);
  ExpectFaithful(g);
  // The wait now comes from the edge: a shorter kernel returns the sync earlier.
  g.set_duration_ns(Find(g, "k1"), 95);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end_ns[sync.value()], 15 + 95 + 10);
}

TEST(BuilderTest, RecordedStreamSyncUsesItsStreamOnly) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  t.Api("cudaLaunchKernel", 1, 10, 20, 2);
  t.Api("cudaStreamSynchronize", 1, 30, 210, 3);
  t.Gpu("a", 7, 15, 200, 1);
  t.Gpu("b", 8, 25, 400, 2);
  t.Sync(proto::Sync::STREAM, 3, 7);
  BuildStats stats;
  const Graph g = t.Build(&stats);
  const std::vector<Edge> syncs = EdgesOfKind(g, EdgeKind::kSync);
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0].src, Find(g, "a"));
  EXPECT_EQ(stats.Get(BuildCounter::sync_edge_stream), 1);
  EXPECT_EQ(stats.Get(BuildCounter::inferred_sync), 0);
  ExpectFaithful(g);
}

TEST(BuilderTest, RecordedStreamWaitEventMakesAGpuToGpuEdge) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);      // producer on stream 7
  t.Api("cudaEventRecord", 1, 12, 14, 2);      // recorded on 7
  t.Api("cudaLaunchKernel", 1, 15, 20, 3);     // after the record: not waited for
  t.Api("cudaStreamWaitEvent", 1, 22, 24, 4);  // stream 8 waits
  t.Api("cudaLaunchKernel", 1, 25, 30, 5);     // consumer on stream 8
  t.Gpu("producer", 7, 12, 300, 1);
  t.Gpu("later", 7, 301, 900, 3);
  t.Gpu("consumer", 8, 302, 400, 5);
  proto::Sync* s = t.Sync(proto::Sync::STREAM_WAIT_EVENT, 4, 8);
  s->set_wait_on_stream(7);
  s->set_event_record_correlation_id(2);
  BuildStats stats;
  Graph g = t.Build(&stats);
  const std::vector<Edge> ev = EdgesOfKind(g, EdgeKind::kEvent);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].src, Find(g, "producer"));
  EXPECT_EQ(ev[0].dst, Find(g, "consumer"));
  EXPECT_EQ(ev[0].delay_ns, 2);
  ExpectFaithful(g);
  // The consumer follows the producer, not its own (early) launch.
  g.set_duration_ns(Find(g, "producer"), 1000);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_ns[Find(g, "consumer").value()], 12 + 1000 + 2);
}

// cuDNN's fork/join over a stream pool, as an H100 ResNet-50 trace recorded
// it: stream 7 records an event, streams 8 (busy) and 9 (runs nothing) wait
// on it, record their own, and stream 7 waits on those. The waits by and on
// the empty stream add no edge and are no anomaly; a chain through it
// (producer on 8 -> empty 9 -> consumer on 10) keeps its dependency.
TEST(BuilderTest, StreamWaitsThroughAStreamThatRunsNothingAreFollowed) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);      // producer on 8
  t.Api("cudaEventRecord", 1, 12, 14, 2);      // E1 on 8
  t.Api("cudaStreamWaitEvent", 1, 15, 16, 3);  // 9 waits E1
  t.Api("cudaEventRecord", 1, 17, 18, 4);      // E2 on 9 (empty)
  t.Api("cudaStreamWaitEvent", 1, 19, 20, 5);  // 10 waits E2
  t.Api("cudaLaunchKernel", 1, 21, 25, 6);     // consumer on 10
  t.Gpu("producer", 8, 12, 300, 1);
  t.Gpu("consumer", 10, 302, 400, 6);
  proto::Sync* fork = t.Sync(proto::Sync::STREAM_WAIT_EVENT, 3, 9);
  fork->set_wait_on_stream(8);
  fork->set_event_record_correlation_id(2);
  proto::Sync* join = t.Sync(proto::Sync::STREAM_WAIT_EVENT, 5, 10);
  join->set_wait_on_stream(9);
  join->set_event_record_correlation_id(4);
  BuildStats stats;
  Graph g = t.Build(&stats);
  const std::vector<Edge> ev = EdgesOfKind(g, EdgeKind::kEvent);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].src, Find(g, "producer"));
  EXPECT_EQ(ev[0].dst, Find(g, "consumer"));
  EXPECT_EQ(stats.Get(BuildCounter::event_wait_unresolved), 0);
  EXPECT_EQ(stats.Get(BuildCounter::event_wait_idle_stream), 2);  // the fork and the join
  EXPECT_EQ(stats.Get(BuildCounter::event_edge_recorded), 1);
  ExpectFaithful(g);
}

// cuDNN's multi-stream kernels, as Kineto records them (no event identities):
// a side stream sits idle for 0.5 ms, then starts 100 us (beyond the
// cross-stream window) after the main stream's kernel ends; a
// cudaStreamWaitEvent between its two launches says it was told to wait.
// The wait is tied to what the main stream had been given before it, so the
// side kernel moves with it; without the wait call the idle time stays a gap.
T SideStreamTrace(bool with_wait) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);   // side0 on 8
  t.Api("cudaLaunchKernel", 1, 20, 30, 2);  // main1 on 7
  if (with_wait) t.Api("cudaStreamWaitEvent", 1, 40, 45, 3);
  t.Api("cudaLaunchKernel", 1, 50, 60, 4);  // main2 on 7
  t.Api("cudaLaunchKernel", 1, 70, 80, 5);  // side1 on 8
  t.Gpu("side0", 8, 15, 1'000, 1);
  t.Gpu("main1", 7, 35, 400'000, 2);
  t.Gpu("main2", 7, 400'000, 800'000, 4);
  t.Gpu("side1", 8, 500'000, 510'000, 5);
  return t;
}

TEST(BuilderTest, AStreamWaitCallBeforeALaunchExplainsALongIdleStretch) {
  BuildStats stats;
  Graph g = SideStreamTrace(true).Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::stream_wait_from_call), 1);
  EXPECT_EQ(stats.Get(BuildCounter::stream_wait_from_call_ns), 400'000 - (80 + 50'000));
  bool found = false;
  for (const Edge& e : EdgesOfKind(g, EdgeKind::kEvent)) {
    if (e.dst != Find(g, "side1")) continue;
    found = true;
    EXPECT_EQ(e.src, Find(g, "main1"));
    EXPECT_EQ(e.delay_ns, 100'000);
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(g.gap_ns(Find(g, "side0")), 2'000);  // the GPU's own overhead, not the wait
  ExpectFaithful(g);
  g.set_duration_ns(Find(g, "main1"), 100'000 - 35);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_ns[Find(g, "side1").value()], 200'000);

  BuildStats bare;
  Graph h = SideStreamTrace(false).Build(&bare);
  EXPECT_EQ(bare.Get(BuildCounter::stream_wait_from_call), 0);
  EXPECT_GE(bare.Get(BuildCounter::unexplained_stream_gap), 1);
  ExpectFaithful(h);
  h.set_duration_ns(Find(h, "main1"), 100'000 - 35);
  absl::StatusOr<SimResult> q = Simulate(h);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->start_ns[Find(h, "side1").value()], 500'000);
}

TEST(BuilderTest, InferredStreamWaitEventWithoutRecords) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  t.Api("cudaStreamWaitEvent", 1, 22, 24, 4);
  t.Api("cudaLaunchKernel", 1, 25, 30, 5);
  t.Gpu("producer", 7, 12, 300, 1);
  t.Gpu("nccl", 14, 301, 400, 5);
  BuildStats stats;
  const Graph g = t.Build(&stats);
  const std::vector<Edge> ev = EdgesOfKind(g, EdgeKind::kEvent);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].dst, Find(g, "nccl"));
  EXPECT_EQ(stats.Get(BuildCounter::inferred_event_edge), 1);
  ExpectFaithful(g);
}

TEST(BuilderTest, BlockingMemcpyWaitIsRoutedToTheNextCallWithoutACycle) {
  T t;
  t.Api("cudaMemcpy", 1, 0, 500, 1);
  t.Api("cudaLaunchKernel", 1, 510, 520, 2);
  t.Gpu("Memcpy DtoH (Device -> Pageable)", 7, 20, 490, 1, proto::GpuActivity::MEMCPY);
  t.Gpu("k", 7, 530, 600, 2);
  BuildStats stats;
  Graph g = t.Build(&stats);  // Build() validates: no cycle
  EXPECT_EQ(stats.Get(BuildCounter::inferred_blocking_copy), 1);
  const TaskId copy = Find(g, "Memcpy DtoH (Device -> Pageable)");
  const TaskId next = Find(g, "cudaLaunchKernel");
  bool routed = false;
  for (const Edge& e : EdgesOfKind(g, EdgeKind::kSync)) routed |= e.src == copy && e.dst == next;
  EXPECT_TRUE(routed);
  ExpectFaithful(g);
  g.set_duration_ns(copy, 1000);  // a slower copy holds the CPU back
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_ns[next.value()], 20 + 1000 + 20);
}

// The CPU work between a blocking copy's call and the thread's next call
// (the rest of the op that copied, the step's end) runs after the call
// returned, so it waits for the copy too: the step ends as measured, and
// later when the copy takes longer.
TEST(BuilderTest, WorkAfterABlockingCopysCallWaitsForTheCopy) {
  T t;
  t.Step(1, 1, 0, 705);
  t.Op(1, 5, 700, "aten::copy_");
  t.Api("cudaMemcpy", 1, 10, 500, 1);
  t.Api("cudaLaunchKernel", 1, 710, 720, 2);
  t.Gpu("Memcpy DtoH (Device -> Pageable)", 7, 20, 490, 1, proto::GpuActivity::MEMCPY);
  t.Gpu("k", 7, 730, 760, 2);
  BuildStats stats;
  Graph g = t.Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::inferred_blocking_copy), 1);
  EXPECT_EQ(stats.Get(BuildCounter::blocking_copy_return), 1);
  ExpectFaithful(g);
  absl::StatusOr<SimResult> base = Simulate(g);
  ASSERT_TRUE(base.ok());
  const TaskId copy = Find(g, "Memcpy DtoH (Device -> Pageable)");
  g.set_duration_ns(copy, 1000);  // 530 ns longer
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->steps[0].end_ns, base->steps[0].end_ns + 530);
}

TEST(BuilderTest, BlockingHtoDCopyWaitsForEarlierStreamWorkThroughAnEdge) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  // Pageable HtoD copy: queued behind k, returns once the copy has run.
  t.Api("cudaMemcpyAsync", 1, 50, 1130, 2);
  t.Api("cudaLaunchKernel", 1, 1140, 1150, 3);
  t.Gpu("k", 7, 20, 1000, 1);
  t.Gpu("Memcpy HtoD (Pageable -> Device)", 7, 1005, 1100, 2, proto::GpuActivity::MEMCPY);
  t.Gpu("k2", 7, 1200, 1300, 3);
  BuildStats stats;
  Graph g = t.Build(&stats);  // validates: no cycle
  EXPECT_EQ(stats.Get(BuildCounter::inferred_blocking_copy), 1);
  EXPECT_EQ(stats.Get(BuildCounter::inferred_blocking_copy_wait), 1);
  const TaskId call = Find(g, "cudaMemcpyAsync");
  EXPECT_EQ(g.duration_ns(call), 5);  // the residual after the wait, not the wait
  ExpectFaithful(g);
  // A faster GPU shortens the wait: k ends at 500, the copy starts 5 ns
  // later, and so does the call's own part end.
  g.set_duration_ns(Find(g, "k"), 480);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end_ns[call.value()], 505);
  EXPECT_EQ(r->start_ns[Find(g, "cudaLaunchKernel", 1).value()], 505 + 95 + 40);
}

TEST(BuilderTest, ThreadResumingAfterAnotherThreadsWorkWaitsForIt) {
  T t;
  // Main thread: forward (one long stretch of CPU work), then the loss.
  t.Api("main_first", 1, 0, 10);
  t.Api("main_long", 1, 1000, 4000);
  t.Api("main_last", 1, 4900, 4910);
  // Backward thread: a call, a short CPU op after it, idle until the main
  // thread hands over, then a CPU op leading to its next call.
  t.Api("bw_first", 2, 20, 30);
  t.Range(2, 35, 45, "", proto::BACKWARD);
  t.Range(2, 5000, 5200, "", proto::BACKWARD);
  t.Api("bw_resume", 2, 5100, 5110);
  BuildOptions opts;
  opts.inter_thread_gap_ns = 1000;
  opts.inter_thread_window_ns = 200;
  BuildStats stats;
  Graph g = t.Build(&stats, opts);
  EXPECT_EQ(stats.Get(BuildCounter::inferred_inter_thread), 1);
  EXPECT_EQ(stats.Get(BuildCounter::inferred_inter_thread_wait_ns), 5000 - 45);
  // The gap keeps only the CPU op before the thread went idle.
  EXPECT_EQ(g.gap_ns(Find(g, "bw_first")), 15);
  ExpectFaithful(g);
  // Shorter main-thread work moves the resume earlier by as much.
  g.set_duration_ns(Find(g, "main_long"), 1000);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_ns[Find(g, "bw_resume").value()], 5100 - 2000);
}

TEST(BuilderTest, NestedDriverCallIsFoldedIntoItsRuntimeCall) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 100, 1);
  t.Api("cuLaunchKernel", 1, 10, 90, 2);
  t.Gpu("k", 7, 95, 200, 2);
  BuildStats stats;
  const Graph g = t.Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::nested_api_call), 1);
  EXPECT_EQ(g.task_count(), 2u);
  const std::vector<Edge> launches = EdgesOfKind(g, EdgeKind::kLaunch);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].src, Find(g, "cudaLaunchKernel"));
  ExpectFaithful(g);
}

TEST(BuilderTest, KernelWithoutLaunchIsAnchoredAndCounted) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  t.Api("cudaFree", 1, 1000, 1010, 0);
  t.Gpu("k", 7, 15, 100, 1);
  t.Gpu("orphan", 7, 2000, 2100, 0);
  t.Gpu("lost", 8, 3000, 3100, 99);
  BuildStats stats;
  const Graph g = t.Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::kernel_without_launch), 2);
  EXPECT_EQ(stats.Get(BuildCounter::unmatched_correlation), 1);
  ExpectFaithful(g);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_ns[Find(g, "orphan").value()], 2000);
}

TEST(BuilderTest, InterThreadEdgeHandsTheGapToTheOtherThread) {
  T t;
  // Main thread launches, then idles while the backward thread works, then resumes.
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  t.Api("cudaLaunchKernel", 1, 400, 410, 2);
  t.Api("cudaLaunchKernel", 2, 20, 30, 3);
  t.Api("cudaLaunchKernel", 2, 300, 390, 4);
  t.Gpu("k1", 7, 15, 20, 1);
  t.Gpu("k3", 7, 35, 40, 3);
  t.Gpu("k4", 7, 395, 398, 4);
  t.Gpu("k2", 7, 415, 420, 2);
  BuildOptions opts;
  opts.inter_thread_gap_ns = 100;
  opts.inter_thread_window_ns = 20;
  BuildStats stats;
  Graph g = t.Build(&stats, opts);
  EXPECT_EQ(stats.Get(BuildCounter::inferred_inter_thread), 1);
  EXPECT_EQ(stats.Get(BuildCounter::thread_start_anchor), 1);  // thread 2 starts after thread 1's call
  ExpectFaithful(g);
  // The backward thread finishing later delays the main thread's resume.
  g.set_duration_ns(Find(g, "cudaLaunchKernel", 3), 190);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_ns[Find(g, "cudaLaunchKernel", 1).value()], 500);
}

// loss.backward() blocks the main thread until the autograd engine's thread
// is done, in waits far below the 1 ms of the general rule: a thread that
// runs autograd::engine::evaluate_function ops hands off at 100 us.
TEST(BuilderTest, MainThreadWaitsForTheAutogradEngineEvenBriefly) {
  // Times in ns: a 690 us wait on the main thread, the engine busy 300 us.
  auto build = [](const char* engine_op, BuildStats* stats) {
    T t;
    t.Api("fwd_launch", 1, 0, 10'000, 1);
    t.Api("step_launch", 1, 700'000, 710'000, 2);  // the optimizer, after backward()
    t.Range(2, 200'000, 500'000, "", proto::BACKWARD, engine_op, proto::Range::CPU_OP);
    t.Api("bwd_launch", 2, 210'000, 220'000, 3);
    t.Api("bwd_last", 2, 480'000, 490'000, 4);
    t.Gpu("k1", 7, 15'000, 20'000, 1);
    t.Gpu("k3", 7, 225'000, 230'000, 3);
    t.Gpu("k4", 7, 495'000, 498'000, 4);
    t.Gpu("k2", 7, 715'000, 720'000, 2);
    return t.Build(stats);
  };
  BuildStats stats;
  Graph g = build("autograd::engine::evaluate_function: AddmmBackward0", &stats);
  EXPECT_EQ(stats.Get(BuildCounter::inferred_inter_thread), 1);
  ExpectFaithful(g);
  // A longer backward delays the optimizer by as much.
  g.set_duration_ns(Find(g, "bwd_last"), 110'000);
  absl::StatusOr<SimResult> r = Simulate(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_ns[Find(g, "step_launch").value()], 800'000);
  // Without the engine's ops the same short gap is not taken for a wait.
  BuildStats plain;
  build("aten::mm", &plain);
  EXPECT_EQ(plain.Get(BuildCounter::inferred_inter_thread), 0);
  EXPECT_EQ(plain.Get(BuildCounter::inter_thread_gap_unexplained), 0);
}

// Issue 29, D22: layers of a module path are made iteratively, ancestors
// first (the recursion went one level per dot).
TEST(BuilderTest, DeepModulePathsMakeEveryAncestorOnce) {
  T t;
  std::string path = "m0";
  for (int i = 1; i < 32; ++i) path += ".m" + std::to_string(i);
  t.Range(1, 0, 500, path, proto::FORWARD);
  t.Range(1, 600, 900, path.substr(0, path.rfind('.')) + ".other", proto::FORWARD);
  t.Api("cudaLaunchKernel", 1, 50, 60, 1);
  t.Api("cudaLaunchKernel", 1, 650, 660, 2);
  t.Gpu("k1", 7, 70, 80, 1);
  t.Gpu("k2", 7, 670, 680, 2);
  const Graph g = t.Build();
  EXPECT_EQ(g.layer_count(), 33u);
  const LayerId leaf = g.FindLayer(path);
  ASSERT_TRUE(leaf.valid());
  EXPECT_EQ(g.layer_of(Find(g, "k1")), leaf);
  int depth = 0;
  for (LayerId l = leaf; l.valid(); l = g.layer(l).parent) ++depth;
  EXPECT_EQ(depth, 32);
  EXPECT_EQ(g.layer(g.FindLayer(path.substr(0, path.rfind('.')) + ".other")).parent,
            g.layer(leaf).parent);
}

TEST(BuilderTest, LayersPhasesAndSteps) {
  T t;
  t.Step(1, 1, 0, 1000);
  t.Step(2, 1, 1000, 2000);
  t.Range(1, 0, 500, "encoder.layer.0", proto::FORWARD);
  t.Range(1, 100, 200, "encoder.layer.0.attn", proto::PHASE_UNKNOWN);
  t.Range(1, 1000, 1500, "", proto::BACKWARD);
  t.Api("cudaLaunchKernel", 1, 50, 60, 1);    // layer.0, forward
  t.Api("cudaLaunchKernel", 1, 150, 160, 2);  // attn, forward (inherited)
  t.Api("cudaLaunchKernel", 1, 1100, 1110, 3);  // no layer, backward, step 2
  t.Api("cudaLaunchKernel", 2, 1200, 1210, 4);  // other thread: latest step
  t.Gpu("k1", 7, 70, 80, 1);
  t.Gpu("k2", 7, 170, 180, 2);
  t.Gpu("k3", 7, 1120, 1130, 3);
  t.Gpu("k4", 7, 1220, 1230, 4);
  const Graph g = t.Build();
  ASSERT_EQ(g.step_count(), 2u);
  EXPECT_EQ(g.step_info(1).name, "ProfilerStep#2");
  const LayerId attn = g.FindLayer("encoder.layer.0.attn");
  ASSERT_TRUE(attn.valid());
  EXPECT_EQ(g.layer(attn).parent, g.FindLayer("encoder.layer.0"));
  EXPECT_EQ(g.layer(g.FindLayer("encoder.layer")).parent, g.FindLayer("encoder"));
  EXPECT_EQ(g.layer_of(Find(g, "k1")), g.FindLayer("encoder.layer.0"));
  EXPECT_EQ(g.layer_of(Find(g, "k2")), attn);
  EXPECT_EQ(g.phase(Find(g, "k2")), Phase::kForward);
  EXPECT_EQ(g.phase(Find(g, "k3")), Phase::kBackward);
  EXPECT_FALSE(g.layer_of(Find(g, "k3")).valid());
  EXPECT_EQ(g.step_of(Find(g, "k1")), 0);
  EXPECT_EQ(g.step_of(Find(g, "k3")), 1);
  EXPECT_EQ(g.step_of(Find(g, "k4")), 1);
  ExpectFaithful(g);
}


TEST(BuilderTest, KernelGeometryIsKeptAndInternedAndSurvivesCopies) {
  T t;
  t.Api("cudaLaunchKernel", 1, 0, 10, 1);
  t.Api("cudaLaunchKernel", 1, 20, 30, 2);
  t.Api("cudaMemcpyAsync", 1, 40, 50, 3);
  t.Gpu("k", 7, 100, 200, 1);
  t.Gpu("k", 7, 300, 400, 2);
  t.Gpu("copy", 7, 500, 600, 3, proto::GpuActivity::MEMCPY);
  for (int i = 0; i < 2; ++i) {
    proto::GpuActivity* g = t.tr.events().mutable_gpu_activities(i);
    g->set_grid_x(50);
    g->set_grid_y(2);
    g->set_block_x(128);
    g->set_block_y(2);
    g->set_registers_per_thread(40);
    g->set_shared_memory_bytes(4096);
  }
  const Graph g = t.Build();
  const KernelGeometry& k0 = g.geometry(Find(g, "k", 0));
  EXPECT_EQ(k0.blocks, 100);  // grid_z 0 (unset) counts as 1
  EXPECT_EQ(k0.threads_per_block, 256);
  EXPECT_EQ(k0.registers_per_thread, 40);
  EXPECT_EQ(k0.shared_memory_bytes, 4096);
  EXPECT_TRUE(k0.known());
  // Same geometry, one interned entry: both tasks see equal values.
  EXPECT_EQ(g.geometry(Find(g, "k", 1)), k0);
  EXPECT_FALSE(g.geometry(Find(g, "copy")).known());
  EXPECT_FALSE(g.geometry(Find(g, "cudaLaunchKernel")).known());
  Graph copy = g;
  EXPECT_EQ(copy.geometry(Find(copy, "k", 1)), k0);
  copy.set_geometry(Find(copy, "k", 1), KernelGeometry{});
  EXPECT_FALSE(copy.geometry(Find(copy, "k", 1)).known());
  EXPECT_TRUE(g.geometry(Find(g, "k", 1)).known());  // the original is untouched
}

}  // namespace
}  // namespace reverie::depgraph
