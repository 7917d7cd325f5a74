// DetectFacts (depgraph/facts.h) on synthetic traces: where its lookups by
// time (inside a counted step, inside a zero_grad span) must give what a
// pass over every step and every span gave.
#include "depgraph/facts.h"

#include <cstdint>
#include <string>

#include "depgraph/test_trace.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

using test_trace::T;

void Launch(T& t, int64_t start, uint64_t corr) {
  t.Api("cudaLaunchKernel", 1, start, start + 10, corr);
  t.Gpu("k", 7, start + 20, start + 30, corr);
}

// A zero_grad span that starts later may end sooner than one around it: a
// launch after the inner span's end is still inside the outer one.
TEST(FactsTest, ZeroGradCountsLaunchesInsideAnyOfItsSpans) {
  T t;
  t.Step(1, 1, 0, 10'000);
  t.Range(1, 1'000, 5'000, "", proto::PHASE_UNKNOWN, "Optimizer.zero_grad#SGD.zero_grad");
  t.Range(1, 1'100, 1'300, "", proto::PHASE_UNKNOWN, "Optimizer.zero_grad#SGD.zero_grad");
  Launch(t, 1'150, 1);  // in both
  Launch(t, 2'000, 2);  // in the outer one only
  Launch(t, 6'000, 3);  // in neither
  const Graph g = t.Build();
  const TraceFacts f = DetectFacts(t.tr, g);
  EXPECT_EQ(f.optimizer.zero_grad_kernels, 2);
}

// Thousands of steps: each range is placed by one lookup (it was a pass
// over the steps for every range), and every step's annotation is found.
TEST(FactsTest, OptimizerStepsFoundInEveryOfManySteps) {
  T t;
  constexpr int kSteps = 2'000;
  for (int i = 0; i < kSteps; ++i) {
    const int64_t at = 100'000 * static_cast<int64_t>(i);
    t.Step(i, 1, at, at + 100'000);
    t.Range(1, at + 50'000, at + 60'000, "", proto::PHASE_UNKNOWN, "Optimizer.step#Adam.step");
    Launch(t, at + 55'000, static_cast<uint64_t>(i + 1));
  }
  const Graph g = t.Build();
  const TraceFacts f = DetectFacts(t.tr, g);
  EXPECT_EQ(f.optimizer.name, "Adam");
  EXPECT_NEAR(f.optimizer.step_us, 10.0, 1e-9);  // 10 us a counted step
}

}  // namespace
}  // namespace reverie::depgraph
