// SortRuns (depgraph/builder_internal.h): runs each usually sorted (a
// thread's pieces of CPU time and its calls; one run per thread), ordered as
// a stable sort of the whole would order them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "depgraph/builder_internal.h"
#include "gtest/gtest.h"

namespace reverie::depgraph::internal {
namespace {

void ExpectSameOrder(const std::vector<Timed>& got, const std::vector<Timed>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].start, want[i].start) << "at " << i;
    EXPECT_EQ(got[i].task, want[i].task) << "at " << i;
  }
}

// Up to six runs (some empty) of starts drawn from few values, so that
// items tie within and across runs, each run sorted or (every third trial)
// left as drawn: the order is the stable sort's, so at one start the items
// of an earlier run come first, each run in its own order.
TEST(SortRunsTest, GivesTheStableSortsOrderWhetherOrNotTheRunsAreSorted) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 40;
    std::vector<size_t> starts = {0};
    for (size_t r = rng() % 6; r > 0; --r) starts.push_back(n == 0 ? 0 : rng() % (n + 1));
    std::sort(starts.begin(), starts.end());
    std::vector<Timed> v(n);
    for (size_t i = 0; i < n; ++i) {
      v[i] = {static_cast<int64_t>(rng() % 8), TaskId(static_cast<uint32_t>(i))};
    }
    if (trial % 3 != 0) {
      for (size_t r = 0; r < starts.size(); ++r) {
        const size_t end = r + 1 < starts.size() ? starts[r + 1] : n;
        std::stable_sort(v.begin() + static_cast<std::ptrdiff_t>(starts[r]),
                         v.begin() + static_cast<std::ptrdiff_t>(end), StartsBefore);
      }
    }
    std::vector<Timed> want = v;
    std::stable_sort(want.begin(), want.end(), StartsBefore);
    SortRuns(v, starts, StartsBefore);
    ExpectSameOrder(v, want);
  }
}

TEST(SortRunsTest, AtOneStartTheEarlierRunComesFirst) {
  std::vector<Timed> v = {
      {5, TaskId(0)}, {9, TaskId(1)}, {5, TaskId(2)}, {7, TaskId(3)}, {5, TaskId(4)}};
  SortRuns(v, {0, 2, 4}, StartsBefore);
  ExpectSameOrder(v,
                  {{5, TaskId(0)}, {5, TaskId(2)}, {5, TaskId(4)}, {7, TaskId(3)}, {9, TaskId(1)}});
}

}  // namespace
}  // namespace reverie::depgraph::internal
