// File: report/diff.h
//
// Two runs' time per name (a layer, a kernel) side by side: what `reverie
// compare` (whatif/compare.h) and the HTML report's layer and kernel tables
// (report/summary.h) show. Times and counts are per step.
#ifndef REVERIE_REPORT_DIFF_H_
#define REVERIE_REPORT_DIFF_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace reverie::report {

struct TimeCount {
  double total_ns = 0;  // per step
  double count = 0;     // per step
};
using TimeByName = absl::flat_hash_map<std::string, TimeCount>;

struct Diff {
  std::string name;
  double a_ns = 0, b_ns = 0;
  double a_count = 0, b_count = 0;
  double diff_ns() const { return a_ns - b_ns; }
};

// Joins `a` and `b` by name: names in both go to `both`; a name in one only
// goes to `only_a` / `only_b`, or to `both` (the other side 0) where that
// list is null. Each list is sorted by name, so that the stable sorts below
// are deterministic.
void JoinByName(const TimeByName& a, const TimeByName& b, std::vector<Diff>* both,
                std::vector<Diff>* only_a, std::vector<Diff>* only_b);

// Largest |a - b| first (stable).
void SortByAbsDiff(std::vector<Diff>& v);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_DIFF_H_
