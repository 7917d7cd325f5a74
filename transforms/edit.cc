#include "transforms/edit.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace reverie::transforms {
namespace {

using depgraph::Graph;
using depgraph::TaskId;

absl::Status CheckFactor(double f, const char* what) {
  if (!std::isfinite(f) || f < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a finite number >= 0, got ", f));
  }
  return absl::OkStatus();
}

absl::Status CheckNs(int64_t ns, const char* what) {
  if (ns < 0) return absl::InvalidArgumentError(absl::StrCat(what, " must be >= 0, got ", ns));
  return absl::OkStatus();
}

inline int64_t ScaleNs(int64_t v, double f) {
  const double r = std::nearbyint(static_cast<double>(v) * f);
  return r > 9.0e18 ? static_cast<int64_t>(9.0e18) : static_cast<int64_t>(r);
}

}  // namespace

absl::Status ScaleDuration(Graph& g, const Selection& s, double factor) {
  if (absl::Status st = CheckFactor(factor, "scale factor"); !st.ok()) return st;
  for (TaskId t : s) {
    if (!g.removed(t)) g.set_duration_ns(t, ScaleNs(g.duration_ns(t), factor));
  }
  return absl::OkStatus();
}

absl::Status ShrinkDuration(Graph& g, const Selection& s, double divisor) {
  if (!std::isfinite(divisor) || divisor <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("shrink divisor must be a finite number > 0, got ", divisor));
  }
  return ScaleDuration(g, s, 1.0 / divisor);
}

absl::Status SetDuration(Graph& g, const Selection& s, int64_t ns) {
  if (absl::Status st = CheckNs(ns, "duration"); !st.ok()) return st;
  for (TaskId t : s) {
    if (!g.removed(t)) g.set_duration_ns(t, ns);
  }
  return absl::OkStatus();
}

absl::Status AddDuration(Graph& g, const Selection& s, int64_t delta_ns) {
  for (TaskId t : s) {
    if (g.removed(t)) continue;
    const int64_t d = g.duration_ns(t) + delta_ns;
    g.set_duration_ns(t, d < 0 ? 0 : d);
  }
  return absl::OkStatus();
}

absl::Status ScaleGap(Graph& g, const Selection& s, double factor) {
  if (absl::Status st = CheckFactor(factor, "gap factor"); !st.ok()) return st;
  for (TaskId t : s) {
    if (!g.removed(t)) g.set_gap_ns(t, ScaleNs(g.gap_ns(t), factor));
  }
  return absl::OkStatus();
}

absl::Status SetGap(Graph& g, const Selection& s, int64_t ns) {
  if (absl::Status st = CheckNs(ns, "gap"); !st.ok()) return st;
  for (TaskId t : s) {
    if (!g.removed(t)) g.set_gap_ns(t, ns);
  }
  return absl::OkStatus();
}

absl::Status SetPriority(Graph& g, const Selection& s, int32_t priority) {
  for (TaskId t : s) {
    if (!g.removed(t)) g.set_priority(t, priority);
  }
  return absl::OkStatus();
}

int64_t TotalDurationNs(const Graph& g, const Selection& s) {
  int64_t sum = 0;
  for (TaskId t : s) {
    if (!g.removed(t)) sum += g.duration_ns(t);
  }
  return sum;
}

}  // namespace reverie::transforms
