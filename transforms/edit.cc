#include "transforms/edit.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"

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

// Durations and gaps stay within [0, kMaxDurationNs] (2^50 ns, 13 days;
// base/checked_math.h), so the simulator's sums of them cannot overflow and
// "much longer" can never wrap around into "faster" (issue 17, D7).
absl::Status CheckNs(int64_t ns, const char* what) {
  if (ns < 0 || ns > kMaxDurationNs) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be between 0 and 2^50 ns (13 days), got ", ns));
  }
  return absl::OkStatus();
}

absl::Status TooLong(const Graph& g, TaskId t, double ns, const char* what) {
  return absl::InvalidArgumentError(absl::StrCat(
      what, " would make task ", t.value(), " last ", ns,
      " ns, beyond the 2^50 ns (13 days) a task may last; nothing was changed"));
}

// v * f rounded, or false when beyond kMaxDurationNs.
bool ScaleNs(int64_t v, double f, int64_t* out) {
  return DoubleToInt64(std::nearbyint(static_cast<double>(v) * f), kMaxDurationNs, out);
}

// Whether an edit may change t's duration: a live task that is not a step
// marker (markers stay zero-length, graph.h: the step is read off them).
bool HasEditableDuration(const Graph& g, TaskId t) { return !g.removed(t) && !g.is_step_mark(t); }

// Scales durations (gaps when `gaps`) of the live members of `s` by
// `factor`; checks every result before changing any.
absl::Status ScaleAll(Graph& g, const Selection& s, double factor, bool gaps, const char* what) {
  int64_t r = 0;
  auto skip = [&](TaskId t) { return gaps ? g.removed(t) : !HasEditableDuration(g, t); };
  for (TaskId t : s) {
    if (skip(t)) continue;
    const int64_t v = gaps ? g.gap_ns(t) : g.duration_ns(t);
    if (!ScaleNs(v, factor, &r)) return TooLong(g, t, static_cast<double>(v) * factor, what);
  }
  for (TaskId t : s) {
    if (skip(t)) continue;
    if (gaps) {
      ScaleNs(g.gap_ns(t), factor, &r);
      g.set_gap_ns(t, r);
    } else {
      ScaleNs(g.duration_ns(t), factor, &r);
      g.set_duration_ns(t, r);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ScaleDuration(Graph& g, const Selection& s, double factor) {
  REVERIE_RETURN_IF_ERROR(CheckFactor(factor, "scale factor"));
  return ScaleAll(g, s, factor, /*gaps=*/false, "scale");
}

absl::Status ShrinkDuration(Graph& g, const Selection& s, double divisor) {
  if (!std::isfinite(divisor) || divisor <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("shrink divisor must be a finite number > 0, got ", divisor));
  }
  return ScaleDuration(g, s, 1.0 / divisor);
}

absl::Status SetDuration(Graph& g, const Selection& s, int64_t ns) {
  REVERIE_RETURN_IF_ERROR(CheckNs(ns, "duration"));
  for (TaskId t : s) {
    if (HasEditableDuration(g, t)) g.set_duration_ns(t, ns);
  }
  return absl::OkStatus();
}

absl::Status AddDuration(Graph& g, const Selection& s, int64_t delta_ns) {
  if (delta_ns < -kMaxDurationNs || delta_ns > kMaxDurationNs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "add_duration: ", delta_ns, " ns is beyond the 2^50 ns (13 days) a task may last"));
  }
  // Both terms are within 2^50: the sums cannot overflow.
  for (TaskId t : s) {
    if (HasEditableDuration(g, t) && g.duration_ns(t) + delta_ns > kMaxDurationNs) {
      return TooLong(g, t, static_cast<double>(g.duration_ns(t) + delta_ns), "add_duration");
    }
  }
  for (TaskId t : s) {
    if (!HasEditableDuration(g, t)) continue;
    const int64_t d = g.duration_ns(t) + delta_ns;
    g.set_duration_ns(t, d < 0 ? 0 : d);
  }
  return absl::OkStatus();
}

absl::Status ScaleGap(Graph& g, const Selection& s, double factor) {
  REVERIE_RETURN_IF_ERROR(CheckFactor(factor, "gap factor"));
  return ScaleAll(g, s, factor, /*gaps=*/true, "scale_gap");
}

absl::Status SetTaskDuration(Graph& g, TaskId t, int64_t ns) {
  REVERIE_RETURN_IF_ERROR(CheckNs(ns, "duration_ns"));
  if (!g.live(t)) return absl::InvalidArgumentError(absl::StrCat("task ", t.value(), " was removed"));
  if (ns != 0 && g.is_step_mark(t)) {
    return absl::InvalidArgumentError("a step marker has no duration");
  }
  g.set_duration_ns(t, ns);
  return absl::OkStatus();
}

absl::Status SetTaskGap(Graph& g, TaskId t, int64_t ns) {
  REVERIE_RETURN_IF_ERROR(CheckNs(ns, "gap_ns"));
  if (!g.live(t)) return absl::InvalidArgumentError(absl::StrCat("task ", t.value(), " was removed"));
  g.set_gap_ns(t, ns);
  return absl::OkStatus();
}

absl::Status SetGap(Graph& g, const Selection& s, int64_t ns) {
  REVERIE_RETURN_IF_ERROR(CheckNs(ns, "gap"));
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
    if (!g.removed(t)) sum = SatAdd(sum, g.duration_ns(t));
  }
  return sum;
}

}  // namespace reverie::transforms
