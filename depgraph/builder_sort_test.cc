// SortByStart (depgraph/builder_internal.h): a thread's pieces of CPU time
// and its calls, each run usually sorted, ordered as a stable sort would.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "depgraph/builder_internal.h"
#include "gtest/gtest.h"

namespace reverie::depgraph::internal {
namespace {

std::vector<Timed> StableSorted(std::vector<Timed> v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const Timed& a, const Timed& b) { return a.start < b.start; });
  return v;
}

void ExpectSameOrder(const std::vector<Timed>& got, const std::vector<Timed>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].start, want[i].start) << "at " << i;
    EXPECT_EQ(got[i].task, want[i].task) << "at " << i;
  }
}

// Two runs of starts drawn from few values (many ties between and within
// runs), each sorted or not, at every split: the order is the stable sort's,
// so at one start the first run's tasks come first, each run in its order.
TEST(SortByStartTest, GivesTheStableSortsOrderWhetherOrNotTheRunsAreSorted) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = rng() % 40;
    const size_t mid = n == 0 ? 0 : rng() % (n + 1);
    std::vector<Timed> v(n);
    for (size_t i = 0; i < n; ++i)
      v[i] = {static_cast<int64_t>(rng() % 8), TaskId(static_cast<uint32_t>(i))};
    const bool sort_runs = trial % 2 == 0;
    if (sort_runs) {
      const auto by_start = [](const Timed& a, const Timed& b) { return a.start < b.start; };
      std::stable_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), by_start);
      std::stable_sort(v.begin() + static_cast<std::ptrdiff_t>(mid), v.end(), by_start);
    }
    const std::vector<Timed> want = StableSorted(v);
    SortByStart(v, mid);
    ExpectSameOrder(v, want);
  }
}

TEST(SortByStartTest, AtOneStartThePiecesComeBeforeTheCalls) {
  std::vector<Timed> v = {{5, TaskId(0)}, {9, TaskId(1)}, {5, TaskId(2)}, {7, TaskId(3)}};
  SortByStart(v, 2);
  ExpectSameOrder(v, {{5, TaskId(0)}, {5, TaskId(2)}, {7, TaskId(3)}, {9, TaskId(1)}});
}

}  // namespace
}  // namespace reverie::depgraph::internal
