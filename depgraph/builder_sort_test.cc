// SortRuns (depgraph/builder_internal.h): runs each usually sorted (a
// thread's pieces of CPU time and its calls; one run per thread), ordered as
// a stable sort of the whole would order them. GroupStable: items of a few
// groups interleaved (calls of several threads), grouped in key order, each
// group in its input order.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
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

// Items of up to five groups (a thread's pid and tid) interleaved, in runs
// or one by one: grouped by key, each group in the input's order, and where
// each group starts, as a stable sort by the group key gives them.
TEST(GroupStableTest, GivesTheStableSortByGroupAndWhereEachGroupStarts) {
  struct Item {
    int64_t pid, tid;
    uint32_t index;
  };
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 50, groups = 1 + rng() % 5;
    std::vector<Item> v;
    int64_t pid = 0, tid = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i == 0 || rng() % 3 == 0) {  // a new run
        const int64_t g = static_cast<int64_t>(rng() % groups);
        pid = g % 2;
        tid = 100 - g;
      }
      v.push_back({pid, tid, static_cast<uint32_t>(i)});
    }
    std::vector<Item> want = v;
    std::stable_sort(want.begin(), want.end(), [](const Item& a, const Item& b) {
      return std::pair(a.pid, a.tid) < std::pair(b.pid, b.tid);
    });
    const std::vector<size_t> starts =
        GroupStable(v, [](const Item& x) { return std::pair(x.pid, x.tid); });
    ASSERT_EQ(v.size(), want.size());
    for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i].index, want[i].index) << "at " << i;
    ASSERT_FALSE(starts.empty());
    EXPECT_EQ(starts.front(), 0u);
    EXPECT_EQ(starts.back(), n);
    for (size_t g = 0; g + 1 < starts.size(); ++g) {
      ASSERT_LT(starts[g], starts[g + 1]) << "an empty group";
      for (size_t i = starts[g]; i < starts[g + 1]; ++i) {
        EXPECT_EQ(v[i].pid, v[starts[g]].pid);
        EXPECT_EQ(v[i].tid, v[starts[g]].tid);
      }
      if (g > 0) {
        EXPECT_LT(std::pair(v[starts[g - 1]].pid, v[starts[g - 1]].tid),
                  std::pair(v[starts[g]].pid, v[starts[g]].tid));
      }
    }
  }
}

}  // namespace
}  // namespace reverie::depgraph::internal
