// File: whatif/sweep.h
//
// A parameter sweep: the scripts predicted at every point of the grid of
// report/sweep.h (the cartesian product of each parameter's values), for
// `reverie sweep` and the Python module's Trace.sweep(). Each point is a
// whatif::Predict on the same loaded trace; a point that fails keeps its
// one-line error and the others go on.
#ifndef REVERIE_WHATIF_SWEEP_H_
#define REVERIE_WHATIF_SWEEP_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "report/sweep.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

// Called with (points done, points in all): once at the start, then as each point ends.
using SweepProgressFn = std::function<void(int done, int total)>;

// spec.settings apply at every point, before the point's own. Fails (with
// the first point's error) only when every point failed: a bad script or
// bad parameters, not a result. The points run on `threads` workers (0:
// every core; base/parallel.h), the result in grid order whatever the
// count; `progress` is called from the workers, one call at a time.
absl::StatusOr<report::SweepResult> Sweep(const LoadedTrace& base, const ScriptSpec& spec,
                                          const std::vector<report::SweepParam>& params,
                                          const SweepProgressFn& progress = {}, int threads = 0);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_SWEEP_H_
