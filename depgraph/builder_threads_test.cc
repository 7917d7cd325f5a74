// Inter-thread edges (depgraph/builder_threads.cc) where several threads
// qualify at once: whether the process is asked thread by thread or, with
// many threads, through its index by time, the pick is the loop's over the
// threads in order, the lowest-numbered thread on a tie.
#include <cstdint>
#include <string>
#include <vector>

#include "depgraph/builder.h"
#include "depgraph/test_trace.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

using test_trace::Find;
using test_trace::T;

// The names of the sources of the live inter-thread edges into `dst`.
std::vector<std::string> InterThreadSources(const Graph& g, TaskId dst) {
  std::vector<std::string> out;
  for (const Edge& e : g.edges()) {
    if (!e.removed && e.kind == EdgeKind::kInterThread && e.dst == dst) {
      out.emplace_back(g.name(e.src));
    }
  }
  return out;
}

// A process with few threads is asked thread by thread; one with many is
// indexed. `padding` threads of the same process, active only long after
// the times that matter, push it over that line and change no edge here.
class BuilderThreadsTest : public testing::TestWithParam<int> {
 protected:
  void Pad(T& t) {
    for (int i = 0; i < GetParam(); ++i) {
      t.Api("pad" + std::to_string(i), 1000 + i, 1'000'000 + 10 * i, 1'000'000 + 10 * i + 2);
    }
  }
};

TEST_P(BuilderThreadsTest, AThreadStartsAfterTheLowestThreadAmongCallsThatEndTogether) {
  T t;
  t.Api("a", 1, 0, 100);
  t.Api("b", 2, 50, 100);
  t.Api("early", 3, 10, 20);
  t.Api("c", 4, 200, 210);
  Pad(t);
  const Graph g = t.Build();
  EXPECT_EQ(InterThreadSources(g, Find(g, "c")), std::vector<std::string>({"a"}));
  // Thread 2 starts after thread 3's call, which ended first; threads 1 and
  // 3 start before any other call ended.
  EXPECT_EQ(InterThreadSources(g, Find(g, "b")), std::vector<std::string>({"early"}));
  EXPECT_TRUE(InterThreadSources(g, Find(g, "a")).empty());
  EXPECT_TRUE(InterThreadSources(g, Find(g, "early")).empty());
}

TEST_P(BuilderThreadsTest, AWaitIsOnTheLowestThreadAmongThoseActiveLast) {
  T t;
  t.Api("before", 1, 0, 10);
  t.Api("resume", 1, 5000, 5010);
  t.Api("x2", 2, 4000, 4990);
  t.Api("x3", 3, 4500, 4990);
  t.Api("late", 4, 100, 200);  // active before the wait began: not a candidate
  Pad(t);
  BuildOptions opts;
  opts.inter_thread_gap_ns = 100;
  opts.inter_thread_window_ns = 20;
  BuildStats stats;
  const Graph g = t.Build(&stats, opts);
  EXPECT_EQ(InterThreadSources(g, Find(g, "resume")), std::vector<std::string>({"x2"}));
  EXPECT_EQ(stats.Get(BuildCounter::inferred_inter_thread), 1);
}

INSTANTIATE_TEST_SUITE_P(FewAndManyThreads, BuilderThreadsTest, testing::Values(0, 20));

// Thousands of threads in one process, each with one call: every thread
// but the first starts after the call before it, as the rule says, and
// building it is linear in threads (it was quadratic: 30,000 threads took
// 3.8 s, now 0.24 s; no time is asserted here).
TEST(BuilderThreadsManyTest, ManyThreadsEachStartAfterTheCallBeforeThem) {
  T t;
  constexpr int kThreads = 5000;
  for (int i = 0; i < kThreads; ++i) t.Api("call" + std::to_string(i), i + 1, 10 * i, 10 * i + 2);
  BuildStats stats;
  const Graph g = t.Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::thread_start_anchor), kThreads - 1);
  for (int i : {1, 2, kThreads / 2, kThreads - 1}) {
    EXPECT_EQ(InterThreadSources(g, Find(g, "call" + std::to_string(i))),
              std::vector<std::string>({"call" + std::to_string(i - 1)}));
  }
}

}  // namespace
}  // namespace reverie::depgraph
