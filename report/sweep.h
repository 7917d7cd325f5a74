// File: report/sweep.h
//
// Parameter sweeps for `reverie sweep`: the grid is the cartesian product of
// every `--set key=v1,v2,...`, in the order given (the last key varies
// fastest). Each point's predicted step time comes from the caller
// (which runs the scripts); this file only builds the grid and renders the
// table, JSON and line chart (x = first parameter, one line per combination
// of the others).
#ifndef REVERIE_REPORT_SWEEP_H_
#define REVERIE_REPORT_SWEEP_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "report/svg.h"

namespace reverie::report {

struct SweepParam {
  std::string key;
  std::vector<std::string> values;
};

using Setting = std::pair<std::string, std::string>;

// Parses "key=v1,v2,..." (spaces around items trimmed). kInvalidArgument
// without '=', with an empty key or with an empty value.
absl::StatusOr<SweepParam> ParseSweepParam(std::string_view text);

// Cartesian product; empty params give one empty point. Duplicate keys are
// rejected by the caller (ParseSweepParams).
std::vector<std::vector<Setting>> SweepGrid(const std::vector<SweepParam>& params);

struct SweepPoint {
  std::vector<Setting> settings;
  double predicted_ns = 0;
  std::string error;  // non-empty: this point failed (message), time unset
  // Samples per step against the baseline (whatif::Prediction::work_factor):
  // a batch twice as large is a slower step and a faster run.
  double work_factor = 1;
};

struct SweepResult {
  std::string trace_path;
  std::vector<std::string> scripts;
  double baseline_ns = 0;  // simulated, unmodified graph
  std::vector<SweepParam> params;
  std::vector<SweepPoint> points;
};

std::string SweepTable(const SweepResult& r);
std::string SweepJson(const SweepResult& r);
// Line chart of predicted step time (ms). Values of the first parameter
// are the x axis when all numeric, else their index.
Svg SweepChart(const SweepResult& r);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_SWEEP_H_
