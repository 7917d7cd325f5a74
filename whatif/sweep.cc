#include "whatif/sweep.h"

#include <string>
#include <utility>

namespace reverie::whatif {

absl::StatusOr<report::SweepResult> Sweep(const LoadedTrace& base, const ScriptSpec& spec,
                                          const std::vector<report::SweepParam>& params,
                                          const SweepProgressFn& progress) {
  report::SweepResult result;
  result.trace_path = base.path;
  result.scripts = spec.scripts;
  result.baseline_ns = base.baseline.mean_iteration_ns();
  result.params = params;
  const std::vector<std::vector<report::Setting>> grid = report::SweepGrid(params);
  const int total = static_cast<int>(grid.size());
  int failed = 0;
  for (int i = 0; i < total; ++i) {
    if (progress) progress(i, total);
    ScriptSpec point_spec = spec;
    point_spec.settings.insert(point_spec.settings.end(), grid[i].begin(), grid[i].end());
    report::SweepPoint point;
    point.settings = grid[i];
    absl::StatusOr<Prediction> p = Predict(base, point_spec);
    if (p.ok()) {
      point.predicted_ns = p->sim.mean_iteration_ns();
    } else {
      point.error = std::string(p.status().message());
      ++failed;
    }
    result.points.push_back(std::move(point));
  }
  if (progress) progress(total, total);
  if (failed == total && total > 0) return absl::InvalidArgumentError(result.points[0].error);
  return result;
}

}  // namespace reverie::whatif
