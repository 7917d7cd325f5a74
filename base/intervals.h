// File: base/intervals.h
//
// The union of [start, end) time intervals as sorted, disjoint intervals:
// one home for what the breakdown (busy time inside a window) and the
// facts (is a time inside a counted step) each merged with a loop of
// their own.
#ifndef REVERIE_BASE_INTERVALS_H_
#define REVERIE_BASE_INTERVALS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <utility>
#include <vector>

#include "base/sorted_runs.h"

namespace reverie {

using Interval = std::pair<int64_t, int64_t>;  // [first, second)

// Sorted by start, disjoint: intervals that overlap or touch are one, and
// empty or reversed ones (second <= first) hold no time and are dropped.
// Input that comes sorted (the intersection of two unions), or in a few
// sorted runs (a graph's tasks resource by resource), is merged, not sorted
// again (base/sorted_runs.h).
inline std::vector<Interval> MergeIntervals(std::vector<Interval> v) {
  SortNatural(v.begin(), v.end(), std::less<Interval>());
  size_t kept = 0;
  for (const Interval& x : v) {
    if (x.second <= x.first) continue;
    if (kept > 0 && x.first <= v[kept - 1].second) {
      v[kept - 1].second = std::max(v[kept - 1].second, x.second);
    } else {
      v[kept++] = x;
    }
  }
  v.resize(kept);
  return v;
}

// Whether t lies in one of `merged` (MergeIntervals' output).
inline bool Covers(const std::vector<Interval>& merged, int64_t t) {
  auto it = std::upper_bound(merged.begin(), merged.end(), t,
                             [](int64_t x, const Interval& i) { return x < i.first; });
  return it != merged.begin() && t < std::prev(it)->second;
}

}  // namespace reverie

#endif  // REVERIE_BASE_INTERVALS_H_
