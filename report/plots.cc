#include "report/plots.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "base/text.h"

namespace reverie::report {
namespace {

constexpr double kWidth = 760;
constexpr double kHeight = 380;
constexpr double kLeft = 80;
constexpr double kTop = 44;
constexpr double kBottom = 80;
constexpr double kLegendWidth = 170;

// Draws the y axis with ticks and grid lines; returns the value -> pixel map
// parameters (y = y0 - (v - lo) * scale).
struct YAxis {
  double lo = 0, hi = 1, y0 = 0, scale = 1;
  double Map(double v) const { return y0 - (v - lo) * scale; }
};

YAxis DrawYAxis(Svg& svg, double lo, double hi, double plot_right, const std::string& label) {
  std::vector<double> ticks = NiceTicks(lo, hi, 5);
  YAxis ax;
  ax.lo = std::min(ticks.front(), lo);
  ax.hi = std::max(ticks.back(), hi);
  ax.y0 = kHeight - kBottom;
  ax.scale = (ax.y0 - kTop) / (ax.hi - ax.lo);
  for (double t : ticks) {
    const double y = ax.Map(t);
    svg.Line(kLeft, y, plot_right, y, "#dddddd");
    svg.Text(kLeft - 6, y + 4, FormatNumber(t), Anchor::kEnd, 11);
  }
  svg.Line(kLeft, kTop, kLeft, ax.y0, "#333333");
  svg.Text(18, (kTop + ax.y0) / 2, label, Anchor::kMiddle, 12, -90);
  return ax;
}

void DrawTitle(Svg& svg, const std::string& title) {
  svg.Text(kWidth / 2, 22, title, Anchor::kMiddle, 15, 0, true);
}

// `reference[i]` marks a grey dashed reference line (line charts only).
void DrawLegend(Svg& svg, const std::vector<std::string>& names, bool line,
                const std::vector<bool>& reference = {}) {
  if (names.size() < 2 && !line) return;
  const double x = kWidth - kLegendWidth + 14;
  double y = kTop + 6;
  for (size_t i = 0; i < names.size(); ++i, y += 20) {
    if (line) {
      const bool ref = i < reference.size() && reference[i];
      svg.Line(x, y + 5, x + 18, y + 5, ref ? "#888888" : PaletteColor(static_cast<int>(i)), 3,
               ref);
    } else {
      svg.Rect(x, y, 14, 12, PaletteColor(static_cast<int>(i)));
    }
    svg.Text(x + 24, y + 10, Ellipsize(names[i], 22), Anchor::kStart, 11);
  }
}

}  // namespace

Svg RenderBarChart(const BarChart& chart) {
  Svg svg(kWidth, kHeight);
  DrawTitle(svg, chart.title);
  const size_t ncat = chart.categories.size();
  const size_t nser = chart.values.size();
  auto value = [&](size_t s, size_t c) {
    if (s >= nser || c >= chart.values[s].size()) return 0.0;
    const double v = chart.values[s][c];
    return std::isfinite(v) ? v : 0.0;
  };
  double lo = 0, hi = 0;
  for (size_t c = 0; c < ncat; ++c) {
    double pos = 0, neg = 0;
    for (size_t s = 0; s < nser; ++s) {
      const double v = value(s, c);
      if (chart.stacked) {
        (v >= 0 ? pos : neg) += v;
      } else {
        pos = std::max(pos, v);
        neg = std::min(neg, v);
      }
    }
    hi = std::max(hi, pos);
    lo = std::min(lo, neg);
  }
  if (hi == lo) hi = lo + 1;
  const double plot_right = kWidth - kLegendWidth;
  YAxis ax = DrawYAxis(svg, lo, hi, plot_right, chart.y_label);
  svg.Line(kLeft, ax.Map(0), plot_right, ax.Map(0), "#333333");

  const double slot = ncat == 0 ? 0 : (plot_right - kLeft) / static_cast<double>(ncat);
  const double group_w = slot * 0.7;
  const bool rotate_labels = ncat > 6;
  for (size_t c = 0; c < ncat; ++c) {
    const double gx = kLeft + slot * c + (slot - group_w) / 2;
    double pos = 0, neg = 0;
    for (size_t s = 0; s < nser; ++s) {
      const double v = value(s, c);
      double base, w = group_w, x = gx;
      if (chart.stacked) {
        base = v >= 0 ? pos : neg;
        (v >= 0 ? pos : neg) += v;
      } else {
        base = 0;
        w = group_w / static_cast<double>(nser);
        x = gx + w * s;
      }
      const double y1 = ax.Map(base), y2 = ax.Map(base + v);
      const std::string series = s < chart.series.size() ? chart.series[s] : "";
      svg.Rect(x, std::min(y1, y2), std::max(w - (chart.stacked ? 0 : 1), 1.0), std::fabs(y2 - y1),
               PaletteColor(static_cast<int>(s)),
               chart.categories[c] + " / " + series + ": " + FormatNumber(v));
    }
    const double lx = kLeft + slot * (c + 0.5);
    const double ly = kHeight - kBottom + 16;
    if (rotate_labels) {
      svg.Text(lx, ly, Ellipsize(chart.categories[c], 16), Anchor::kEnd, 10, -35);
    } else {
      svg.Text(lx, ly, Ellipsize(chart.categories[c], 20), Anchor::kMiddle, 11);
    }
  }
  svg.Text((kLeft + plot_right) / 2, rotate_labels ? kHeight - 8 : kHeight - kBottom + 40,
           chart.x_label, Anchor::kMiddle, 12);
  DrawLegend(svg, chart.series, false);
  return svg;
}

Svg RenderHBarChart(const HBarChart& chart) {
  std::vector<size_t> order(std::min(chart.labels.size(), chart.values.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::fabs(chart.values[a]) > std::fabs(chart.values[b]);
  });
  if (chart.top_n > 0 && order.size() > static_cast<size_t>(chart.top_n)) {
    order.resize(chart.top_n);
  }
  constexpr double kRow = 22, kLabelW = 260, kRight = 40;
  const double height = kTop + kRow * std::max<size_t>(order.size(), 1) + 60;
  Svg svg(kWidth, height);
  DrawTitle(svg, chart.title);
  double lo = 0, hi = 0;
  for (size_t i : order) {
    lo = std::min(lo, chart.values[i]);
    hi = std::max(hi, chart.values[i]);
  }
  if (lo == hi) hi = lo + 1;
  std::vector<double> ticks = NiceTicks(lo, hi, 5);
  lo = std::min(lo, ticks.front());
  hi = std::max(hi, ticks.back());
  const double x0 = kLabelW, x1 = kWidth - kRight;
  auto map = [&](double v) { return x0 + (v - lo) / (hi - lo) * (x1 - x0); };
  const double bottom = kTop + kRow * std::max<size_t>(order.size(), 1);
  for (double t : ticks) {
    svg.Line(map(t), kTop, map(t), bottom, "#dddddd");
    svg.Text(map(t), bottom + 16, FormatNumber(t), Anchor::kMiddle, 11);
  }
  svg.Line(map(0), kTop, map(0), bottom, "#333333");
  for (size_t r = 0; r < order.size(); ++r) {
    const size_t i = order[r];
    const double v = chart.values[i];
    const double y = kTop + kRow * r + 3;
    const double a = map(std::min(0.0, v)), b = map(std::max(0.0, v));
    svg.Rect(a, y, std::max(b - a, 1.0), kRow - 6, v < 0 ? "#009E73" : "#D55E00",
             chart.labels[i] + ": " + FormatNumber(v));
    svg.Text(x0 - 6, y + kRow / 2 + 1, Ellipsize(chart.labels[i], 40), Anchor::kEnd, 11);
  }
  if (order.empty()) svg.Text((x0 + x1) / 2, kTop + 14, "(no data)", Anchor::kMiddle, 12);
  svg.Text((x0 + x1) / 2, bottom + 38, chart.x_label, Anchor::kMiddle, 12);
  return svg;
}

Svg RenderLineChart(const LineChart& chart) {
  Svg svg(kWidth, kHeight);
  DrawTitle(svg, chart.title);
  double ylo = INFINITY, yhi = -INFINITY;
  for (const LineSeries& s : chart.series) {
    for (double v : s.y) {
      if (!std::isfinite(v)) continue;
      ylo = std::min(ylo, v);
      yhi = std::max(yhi, v);
    }
  }
  if (!std::isfinite(ylo)) ylo = 0, yhi = 1;
  ylo = std::min(ylo, 0.0);  // time axes start at zero so ratios read true
  const double plot_right = kWidth - kLegendWidth;
  YAxis ax = DrawYAxis(svg, ylo, yhi, plot_right, chart.y_label);
  double xlo = INFINITY, xhi = -INFINITY;
  for (double v : chart.x) {
    xlo = std::min(xlo, v);
    xhi = std::max(xhi, v);
  }
  if (!std::isfinite(xlo)) xlo = 0, xhi = 1;
  std::vector<double> xticks = NiceTicks(xlo, xhi, 6);
  // Few points: label exactly those (an empty chart keeps the nice ticks, so
  // front()/back() below always have an element).
  if (!chart.x.empty() && chart.x.size() <= 8) xticks = chart.x;
  double xmin = std::min(xlo, xticks.front()), xmax = std::max(xhi, xticks.back());
  if (xmax == xmin) xmin -= 1, xmax += 1;
  const double px0 = kLeft + 20, px1 = plot_right - 20;
  auto mapx = [&](double v) { return px0 + (v - xmin) / (xmax - xmin) * (px1 - px0); };
  const double y0 = kHeight - kBottom;
  svg.Line(kLeft, y0, plot_right, y0, "#333333");
  for (double t : xticks) {
    svg.Line(mapx(t), y0, mapx(t), y0 + 5, "#333333");
    svg.Text(mapx(t), y0 + 18, FormatNumber(t), Anchor::kMiddle, 11);
  }
  std::vector<std::string> names;
  std::vector<bool> reference;
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const LineSeries& ser = chart.series[s];
    names.push_back(ser.name);
    reference.push_back(ser.reference);
    std::vector<std::pair<double, double>> pts;
    for (size_t i = 0; i < ser.y.size() && i < chart.x.size(); ++i) {
      if (!std::isfinite(ser.y[i])) continue;
      pts.emplace_back(mapx(chart.x[i]), ax.Map(ser.y[i]));
    }
    const std::string_view color =
        ser.reference ? std::string_view("#888888") : PaletteColor(static_cast<int>(s));
    svg.Polyline(pts, color, 2.0, ser.reference);
    size_t k = 0;
    for (size_t i = 0; i < ser.y.size() && i < chart.x.size(); ++i) {
      if (!std::isfinite(ser.y[i])) continue;
      svg.Circle(pts[k].first, pts[k].second, 3.5, color,
                 ser.name + " @ " + FormatNumber(chart.x[i]) + ": " + FormatNumber(ser.y[i]));
      ++k;
    }
  }
  svg.Text((kLeft + plot_right) / 2, kHeight - 30, chart.x_label, Anchor::kMiddle, 12);
  DrawLegend(svg, names, true, reference);
  return svg;
}

}  // namespace reverie::report
