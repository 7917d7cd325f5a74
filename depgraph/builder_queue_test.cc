// Launch calls held by a full device queue (depgraph/builder_queue.cc).
#include <cstdint>
#include <string>
#include <vector>

#include "depgraph/builder.h"
#include "depgraph/simulator.h"
#include "depgraph/step_time.h"
#include "depgraph/test_trace.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

using test_trace::Find;
using test_trace::T;

// One thread launches `n` kernels of 100 us onto one stream, whose queue
// holds `depth` pending kernels: the first `depth` launches take 1 us (all
// issued before the first kernel ends), each later one waits until the
// oldest pending kernel ends and returns 3 us after. Times in ns.
T QueueTrace(int n, int depth) {
  T t;
  std::vector<int64_t> kernel_end(n);
  for (int i = 0; i < n; ++i) {
    kernel_end[i] = 110'000 + 100'000 * static_cast<int64_t>(i);
  }
  int64_t cpu = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t start = cpu;
    const int64_t end = i < depth ? start + 1'000 : kernel_end[i - depth] + 3'000;
    const uint64_t corr = static_cast<uint64_t>(i) + 1;
    t.Api("cudaLaunchKernel", 1, start, end, corr);
    t.Gpu("k" + std::to_string(i), 7, kernel_end[i] - 100'000, kernel_end[i], corr);
    cpu = end + 500;
  }
  return t;
}

TEST(BuilderQueueTest, ALaunchHeldByAFullQueueWaitsForTheKernelThatFreedIt) {
  BuildStats stats;
  Graph g = QueueTrace(100, 64).Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::launch_queue_wait), 36);
  // Replay stays exact.
  absl::StatusOr<SimResult> base = Simulate(g);
  ASSERT_TRUE(base.ok()) << base.status();
  const std::vector<StepTime> measured = MeasuredSteps(g);
  ASSERT_EQ(measured.size(), base->steps.size());
  for (size_t i = 0; i < measured.size(); ++i) {
    EXPECT_EQ(base->steps[i].duration_ns(), measured[i].duration_ns());
  }
  // A GPU twice as fast frees the queue twice as fast: the CPU the queue
  // held keeps up and the run takes about half as long (kept as measured
  // durations, the waits held the CPU, and the run, at the old speed).
  for (int i = 0; i < 100; ++i) {
    const TaskId k = Find(g, "k" + std::to_string(i));
    g.set_duration_ns(k, g.duration_ns(k) / 2);
  }
  absl::StatusOr<SimResult> fast = Simulate(g);
  ASSERT_TRUE(fast.ok()) << fast.status();
  EXPECT_LT(fast->makespan_ns, base->makespan_ns * 6 / 10);
}

// A peak of pending work the launches did not pile up at is no queue:
// a shallow queue (16) is the workload's own concurrency, left alone.
TEST(BuilderQueueTest, AShallowPeakOfPendingWorkIsNotAQueueLimit) {
  BuildStats stats;
  QueueTrace(100, 16).Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::launch_queue_wait), 0);
}

}  // namespace
}  // namespace reverie::depgraph
