#include "report/diff.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace reverie::report {

void JoinByName(const TimeByName& a, const TimeByName& b, std::vector<Diff>* both,
                std::vector<Diff>* only_a, std::vector<Diff>* only_b) {
  for (const auto& [name, tc] : a) {
    Diff d{name, tc.total_ns, 0, tc.count, 0};
    if (auto it = b.find(name); it != b.end()) {
      d.b_ns = it->second.total_ns;
      d.b_count = it->second.count;
      both->push_back(std::move(d));
    } else {
      (only_a != nullptr ? only_a : both)->push_back(std::move(d));
    }
  }
  for (const auto& [name, tc] : b) {
    if (a.contains(name)) continue;
    (only_b != nullptr ? only_b : both)->push_back({name, 0, tc.total_ns, 0, tc.count});
  }
  const auto by_name = [](const Diff& x, const Diff& y) { return x.name < y.name; };
  for (std::vector<Diff>* v : {both, only_a, only_b}) {
    if (v != nullptr) std::sort(v->begin(), v->end(), by_name);
  }
}

void SortByAbsDiff(std::vector<Diff>& v) {
  std::stable_sort(v.begin(), v.end(), [](const Diff& x, const Diff& y) {
    return std::fabs(x.diff_ns()) > std::fabs(y.diff_ns());
  });
}

}  // namespace reverie::report
