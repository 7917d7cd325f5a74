// File: report/plots.h
//
// The report's charts, drawn with report/svg.h: vertical bar charts (stacked
// runtime breakdown per step as in Daydream Fig. 6, grouped baseline vs
// predicted per script as in Fig. 5/7), horizontal signed bars (per-layer
// deltas) and line charts (parameter sweeps, Fig. 8/10).
//
// Every chart has a title, axis labels with units, readable tick values and,
// when it has several series, a legend. Each data bar / point carries a
// <title> tooltip with its exact value, which the tests also count.
#ifndef REVERIE_REPORT_PLOTS_H_
#define REVERIE_REPORT_PLOTS_H_

#include <string>
#include <vector>

#include "report/svg.h"

namespace reverie::report {

struct BarChart {
  std::string title;
  std::string x_label;
  std::string y_label;                      // include the unit: "time (ms)"
  std::vector<std::string> categories;      // one group / stack per category
  std::vector<std::string> series;          // legend entries
  std::vector<std::vector<double>> values;  // values[series][category]
  bool stacked = false;                     // false: bars side by side
};

// Signed horizontal bars, largest |value| first, at most `top_n`.
struct HBarChart {
  std::string title;
  std::string x_label;  // "change (ms)"
  std::vector<std::string> labels;
  std::vector<double> values;
  int top_n = 15;
};

struct LineSeries {
  std::string name;        // "bandwidth=10"
  std::vector<double> y;   // one per x; NaN = missing point
  bool reference = false;  // drawn grey and dashed (a baseline)
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<double> x;
  std::vector<LineSeries> series;
};

Svg RenderBarChart(const BarChart& chart);
Svg RenderHBarChart(const HBarChart& chart);
Svg RenderLineChart(const LineChart& chart);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_PLOTS_H_
