#include "whatif/sweep.h"

#include <exception>
#include <mutex>
#include <string>
#include <utility>

#include "base/parallel.h"
#include "base/text.h"

namespace reverie::whatif {

absl::StatusOr<report::SweepResult> Sweep(const LoadedTrace& base, const ScriptSpec& spec,
                                          const std::vector<report::SweepParam>& params,
                                          const SweepProgressFn& progress, int threads) {
  report::SweepResult result;
  result.trace_path = base.path;
  result.scripts = spec.scripts;
  result.baseline_ns = base.baseline.mean_step_ns();
  result.params = params;
  const std::vector<std::vector<report::Setting>> grid = report::SweepGrid(params);
  const int total = static_cast<int>(grid.size());
  result.points.resize(grid.size());
  // The points share the loaded trace read-only (pipeline.h) and each
  // writes its own slot: the result is the one a loop gives.
  std::mutex progress_mu;
  int done = 0;
  if (progress) progress(0, total);
  ParallelFor(grid.size(), threads, [&](size_t i) {
    ScriptSpec point_spec = spec;
    point_spec.settings.insert(point_spec.settings.end(), grid[i].begin(), grid[i].end());
    report::SweepPoint& point = result.points[i];
    point.settings = grid[i];
    try {
      absl::StatusOr<Prediction> p = Predict(base, point_spec);
      if (p.ok()) {
        point.predicted_ns = p->sim.mean_step_ns();
        point.work_factor = p->work_factor;
      } else {
        point.error = std::string(p.status().message());
      }
    } catch (const std::exception& e) {  // must not leave the worker thread
      point.error = FirstLine(std::string("internal error: ") + e.what());
    }
    if (progress) {
      std::lock_guard<std::mutex> lock(progress_mu);
      progress(++done, total);
    }
  });
  int failed = 0;
  for (const report::SweepPoint& p : result.points) failed += p.error.empty() ? 0 : 1;
  if (failed == total && total > 0) return absl::InvalidArgumentError(result.points[0].error);
  return result;
}

}  // namespace reverie::whatif
