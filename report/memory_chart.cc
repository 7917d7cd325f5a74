// File: report/memory_chart.cc
#include "report/memory_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"
#include "depgraph/memory_replay.h"
#include "report/plots.h"

namespace reverie::report {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// The level at time x of a step function given by `pts` (level after each
// point), `before` ahead of the first.
double LevelAt(const std::vector<depgraph::MemoryPoint>& pts, int64_t x, int64_t before) {
  auto it = std::upper_bound(pts.begin(), pts.end(), x,
                             [](int64_t v, const depgraph::MemoryPoint& p) { return v < p.ns; });
  return static_cast<double>(it == pts.begin() ? before : (it - 1)->allocated);
}

}  // namespace

MemorySection RenderMemorySection(const std::vector<MemoryRun>& runs, int points) {
  MemorySection out;
  if (runs.empty() || runs[0].graph == nullptr || runs[0].sim == nullptr ||
      runs[0].graph->memory_events().empty()) {
    return out;
  }
  // Each run's peaks, replayed once; the GPU charted is the one with the
  // largest baseline peak.
  std::vector<std::vector<depgraph::DevicePeak>> peaks;
  for (const MemoryRun& r : runs) {
    peaks.push_back(r.graph == nullptr || r.sim == nullptr
                        ? std::vector<depgraph::DevicePeak>{}
                        : depgraph::ReplayMemory(*r.graph, r.sim->start_ns, r.sim->end_ns));
  }
  int32_t device = -1;
  int64_t best = -1;
  for (const depgraph::DevicePeak& p : peaks[0]) {
    if (p.device >= 0 && p.peak > best) {
      best = p.peak;
      device = p.device;
      out.absolute = p.absolute;
    }
  }
  if (device < 0) return out;
  LineChart chart;
  chart.title = absl::StrFormat("GPU %d memory allocated over the run%s", device,
                                out.absolute ? "" : " (above the trace's first event)");
  chart.x_label = "time (ms, simulated)";
  chart.y_label = "allocated (MiB)";
  struct Series {
    std::string name;
    std::vector<depgraph::MemoryPoint> pts;
    int64_t start_level = 0;
  };
  std::vector<Series> series;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (size_t k = 0; k < runs.size(); ++k) {
    const MemoryRun& r = runs[k];
    if (r.graph == nullptr || r.sim == nullptr) continue;
    Series s;
    s.name = r.name;
    s.pts = depgraph::ReplayTimeline(*r.graph, r.sim->start_ns, r.sim->end_ns, device);
    int64_t peak = 0;
    for (const depgraph::DevicePeak& p : peaks[k]) {
      if (p.device == device) {
        s.start_level = p.start_level;
        peak = p.peak;
      }
    }
    out.peaks.push_back(absl::StrFormat("%s: peak %.2f MiB on GPU %d", r.name, peak / kMiB, device));
    if (!s.pts.empty()) {
      lo = std::min(lo, s.pts.front().ns);
      hi = std::max(hi, s.pts.back().ns);
    }
    series.push_back(std::move(s));
  }
  if (lo > hi) return out;
  const int n = std::max(2, points);
  const double step = static_cast<double>(hi - lo) / (n - 1);
  for (int i = 0; i < n; ++i) chart.x.push_back(step * i / 1e6);
  for (size_t k = 0; k < series.size(); ++k) {
    LineSeries ls;
    ls.name = series[k].name;
    ls.reference = k == 0;
    for (int i = 0; i < n; ++i) {
      const int64_t x = lo + static_cast<int64_t>(std::llround(step * i));
      ls.y.push_back(LevelAt(series[k].pts, x, series[k].start_level) / kMiB);
    }
    chart.series.push_back(std::move(ls));
  }
  out.svg = RenderLineChart(chart).StrInline();
  return out;
}

}  // namespace reverie::report
