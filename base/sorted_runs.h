// File: base/sorted_runs.h
//
// Sorting what is mostly sorted already: a trace lists a thread's calls and
// a stream's GPU work in time order, bar a few, and a graph's tasks run in
// order resource by resource. MergeRuns merges runs known to be sorted;
// SortNatural finds the runs itself. Both give std::stable_sort's order.
#ifndef REVERIE_BASE_SORTED_RUNS_H_
#define REVERIE_BASE_SORTED_RUNS_H_

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace reverie {

// Merges the sorted runs that begin at first + run_starts[i] (ascending,
// from 0, the last entry the end), pairwise, neighbours left to right, in
// O(n log runs): the stable sort's order.
template <typename It, typename Less>
void MergeRuns(It first, std::vector<size_t> run_starts, Less less) {
  const auto at = [&](size_t i) { return first + static_cast<std::ptrdiff_t>(i); };
  while (run_starts.size() > 2) {
    std::vector<size_t> merged;
    for (size_t r = 0; r + 1 < run_starts.size(); r += 2) {
      merged.push_back(run_starts[r]);
      if (r + 2 < run_starts.size()) {
        std::inplace_merge(at(run_starts[r]), at(run_starts[r + 1]), at(run_starts[r + 2]), less);
      }
    }
    merged.push_back(run_starts.back());
    run_starts = std::move(merged);
  }
}

// std::stable_sort for input that is mostly in order (a thread's calls, a
// stream's GPU work as the trace lists them: a handful of items out of
// place in tens of thousands; intervals gathered resource by resource): it
// cuts [first, last) where an item is less than the one before and merges
// the pieces, in one pass and a few merges. Input with many pieces is left
// to std::stable_sort. Same result.
template <typename It, typename Less>
void SortNatural(It first, It last, Less less) {
  const size_t n = static_cast<size_t>(last - first);
  constexpr size_t kMostPieces = 64;
  std::vector<size_t> starts = {0};
  for (size_t i = 1; i < n; ++i) {
    if (!less(first[i], first[i - 1])) continue;
    if (starts.size() == kMostPieces) {
      std::stable_sort(first, last, less);
      return;
    }
    starts.push_back(i);
  }
  starts.push_back(n);
  MergeRuns(first, std::move(starts), less);
}

}  // namespace reverie

#endif  // REVERIE_BASE_SORTED_RUNS_H_
