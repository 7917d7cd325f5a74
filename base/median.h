// File: base/median.h
//
// Medians and quantiles of samples (call durations, launch latencies),
// found in place: std::nth_element, O(n), reorders the vector and copies
// nothing. One home for what the builder, the launch model, the cost model
// and the host-speed comparison each computed with a loop of their own.
#ifndef REVERIE_BASE_MEDIAN_H_
#define REVERIE_BASE_MEDIAN_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace reverie {

// The upper median: the element at index size/2 once sorted, so always one
// of the samples; `fallback` when there are none.
inline int64_t UpperMedianInPlace(std::vector<int64_t>& v, int64_t fallback = 0) {
  if (v.empty()) return fallback;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// The median: for an even count the mean of the two middle samples; 0 when
// there are none.
inline double MedianInPlace(std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double upper = static_cast<double>(*mid);
  if (v.size() % 2 == 1) return upper;
  // nth_element leaves the smaller half before `mid`: its largest is the
  // lower middle sample.
  return (static_cast<double>(*std::max_element(v.begin(), mid)) + upper) / 2;
}

// The sample at rank q (0 <= q <= 1) of the sorted samples, index
// floor(q * (n - 1)), so always one of them: what a trace's short kernels
// or launch calls take is its 10th percentile. `fallback` when there are
// none.
template <typename T>
T QuantileInPlace(std::vector<T>& v, double q, T fallback) {
  if (v.empty()) return fallback;
  const auto at = v.begin() + static_cast<std::ptrdiff_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), at, v.end());
  return *at;
}

}  // namespace reverie

#endif  // REVERIE_BASE_MEDIAN_H_
