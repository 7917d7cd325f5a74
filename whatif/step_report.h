// File: whatif/step_report.h
//
// How every command shows a step time: the mean over counted steps with the
// noise band of the steps it averages (min-max and standard deviation), in
// text and in JSON, so that `replay`, `predict`, `sweep`, `validate` and
// `ranks` print the same quantity the same way (depgraph/step_time.h).
#ifndef REVERIE_WHATIF_STEP_REPORT_H_
#define REVERIE_WHATIF_STEP_REPORT_H_

#include <string>

#include "absl/strings/str_format.h"
#include "base/json_writer.h"
#include "depgraph/breakdown.h"
#include "depgraph/step_time.h"

namespace reverie::whatif {

inline constexpr char kStepDefinition[] =
    "step = ProfilerStep#N extended to the GPU work it launched (as the PyTorch profiler's "
    "overview shows it)";

// "1137.1 us (1127.2-1143.3, sd 7.1, 3 steps)".
inline std::string StepText(const depgraph::StepStats& s) {
  if (s.counted == 0) return "no step";
  if (s.counted == 1) return absl::StrFormat("%.1f us (1 step)", s.mean_ns / 1e3);
  return absl::StrFormat("%.1f us (%.1f-%.1f, sd %.1f, %d steps)", s.mean_ns / 1e3,
                         s.min_ns / 1e3, s.max_ns / 1e3, s.stddev_ns / 1e3, s.counted);
}

// {"mean_us", "min_us", "max_us", "stddev_us", "steps"}.
inline void WriteStepJson(JsonWriter& w, const depgraph::StepStats& s) {
  w.BeginObject();
  w.Field("mean_us", s.mean_ns / 1e3);
  w.Field("min_us", s.min_ns / 1e3);
  w.Field("max_us", s.max_ns / 1e3);
  w.Field("stddev_us", s.stddev_ns / 1e3);
  w.Field("steps", s.counted);
  w.EndObject();
}

// {"cpu_only_us", "gpu_only_us", "overlap_us", "idle_us"}: where a step's
// time goes (depgraph/breakdown.h), as info and predict write it.
inline void WriteTimeSplitJson(JsonWriter& w, const depgraph::TimeSplit& s) {
  w.BeginObject();
  w.Field("cpu_only_us", s.cpu_only_ns / 1e3);
  w.Field("gpu_only_us", s.gpu_only_ns / 1e3);
  w.Field("overlap_us", s.overlap_ns / 1e3);
  w.Field("idle_us", s.idle_ns / 1e3);
  w.EndObject();
}

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_STEP_REPORT_H_
