// SortNatural and MergeRuns (base/sorted_runs.h): std::stable_sort's order
// for input mostly in order.
#include "base/sorted_runs.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace reverie {
namespace {

bool ByFirst(const std::pair<int64_t, uint32_t>& a, const std::pair<int64_t, uint32_t>& b) {
  return a.first < b.first;
}

// Sorted input with a few items moved (a thread's calls as a trace lists
// them), or shuffled past the pieces it merges: the stable sort's order.
TEST(SortNaturalTest, GivesTheStableSortsOrder) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 400;
    std::vector<std::pair<int64_t, uint32_t>> v(n);
    for (size_t i = 0; i < n; ++i) {
      v[i] = {static_cast<int64_t>(i / 3), static_cast<uint32_t>(i)};  // ties in threes
    }
    const size_t moved = trial % 4 == 0 ? n : rng() % 6;
    for (size_t k = 0; k < moved && n > 1; ++k) std::swap(v[rng() % n], v[rng() % n]);
    auto want = v;
    std::stable_sort(want.begin(), want.end(), ByFirst);
    SortNatural(v.begin(), v.end(), ByFirst);
    EXPECT_EQ(v, want);
  }
}

}  // namespace
}  // namespace reverie
