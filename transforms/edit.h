// File: transforms/edit.h
//
// Daydream's "update" primitives (§4.4): change the duration, gap or priority
// of every live task of a selection. Removed members are skipped (a selection
// is a value; see selection.h). Durations and gaps are integer nanoseconds;
// scaled values are rounded to the nearest ns and never negative.
//
// Every duration and gap stays within [0, kMaxDurationNs] (2^50 ns, 13 days;
// base/checked_math.h): a value, delta or result beyond it is refused, so no
// sum the simulator makes of them can overflow.
//
// Errors: kInvalidArgument for a factor or value that is negative, NaN or
// infinite, or a value or result beyond the bound, before anything is
// changed.
#ifndef REVERIE_TRANSFORMS_EDIT_H_
#define REVERIE_TRANSFORMS_EDIT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "depgraph/graph.h"
#include "transforms/selection.h"

namespace reverie::transforms {

// duration *= factor.
absl::Status ScaleDuration(depgraph::Graph& g, const Selection& s, double factor);
// duration /= divisor (divisor > 0): Daydream's "shrink by 3x".
absl::Status ShrinkDuration(depgraph::Graph& g, const Selection& s, double divisor);
absl::Status SetDuration(depgraph::Graph& g, const Selection& s, int64_t ns);
// duration += delta_ns, clamped at 0 (a negative delta shrinks by an amount).
absl::Status AddDuration(depgraph::Graph& g, const Selection& s, int64_t delta_ns);

// One task's duration or gap (a script's `t.duration_ns = v`), under the
// same rule as the selections above: within [0, 2^50] ns, a live task; a
// step marker keeps a zero duration (setting it to 0 is allowed, anything
// else refused: a selection never holds a marker, a single task may be one
// reached through next/prev).
absl::Status SetTaskDuration(depgraph::Graph& g, depgraph::TaskId t, int64_t ns);
absl::Status SetTaskGap(depgraph::Graph& g, depgraph::TaskId t, int64_t ns);

absl::Status ScaleGap(depgraph::Graph& g, const Selection& s, double factor);
absl::Status SetGap(depgraph::Graph& g, const Selection& s, int64_t ns);

// Priority read by depgraph::PriorityPolicy (lower runs first).
absl::Status SetPriority(depgraph::Graph& g, const Selection& s, int32_t priority);

// Sum of the durations of the live members (saturating).
int64_t TotalDurationNs(const depgraph::Graph& g, const Selection& s);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_EDIT_H_
