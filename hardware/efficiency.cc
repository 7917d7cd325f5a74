#include "hardware/efficiency.h"

#include <algorithm>
#include <cmath>

namespace reverie::hardware {
namespace {

// The most time a kernel can plausibly lose per unit of roofline time: a
// slope above it (5% of peak at any size) says the work estimate, not the
// kernel, is off, and the fit is not trusted.
constexpr double kMaxSlope = 20;
// The slope counts as determined when some kernel spends at least this
// share of its fitted time in the size-proportional part.
constexpr double kProportionalShare = 0.5;

bool Usable(const EfficiencySample& s) {
  return s.roofline_ns > 0 && s.measured_ns > 0 && std::isfinite(s.roofline_ns) &&
         std::isfinite(s.measured_ns);
}

}  // namespace

EfficiencyCurve FitEfficiency(absl::Span<const EfficiencySample> samples, double prior_ceiling,
                              double fallback_fixed_ns) {
  EfficiencyCurve c;
  c.slope = 1.0 / std::clamp(prior_ceiling, 1.0 / kMaxSlope, 1.0);
  c.fixed_ns = std::max(0.0, fallback_fixed_ns);
  // Weighted sums, weight 1 / T: minimizes sum (a + b R - T)^2 / T.
  double sw = 0, sr = 0, st = 0, srr = 0, srt = 0, r_min = INFINITY, r_max = 0;
  for (const EfficiencySample& s : samples) {
    if (!Usable(s)) continue;
    const double w = 1.0 / s.measured_ns;
    sw += w;
    sr += w * s.roofline_ns;
    st += w * s.measured_ns;
    srr += w * s.roofline_ns * s.roofline_ns;
    srt += w * s.roofline_ns * s.measured_ns;
    r_min = std::min(r_min, s.roofline_ns);
    r_max = std::max(r_max, s.roofline_ns);
    ++c.samples;
  }
  if (c.samples == 0) return c;
  auto fixed_for = [&](double slope) { return std::max(0.0, (st - slope * sr) / sw); };
  const double det = sw * srr - sr * sr;
  auto accept = [&](double a, double b) {
    const bool in_range = std::isfinite(b) && b >= 1.0 && b <= kMaxSlope;
    if (!in_range || b * r_max < kProportionalShare * (a + b * r_max)) return false;
    c.slope = b;
    c.fixed_ns = a;
    c.slope_from_prior = false;
    return true;
  };
  if (r_max <= 2 * r_min || c.samples < 3 || !(det > 0)) {
    // One size (or nearly): the fixed part cannot be told from the slope;
    // with `fallback_fixed_ns` as the fixed part, the slope is what is left.
    const double a = std::max(0.0, fallback_fixed_ns);
    const double srr_ = srr, b = (srt - a * sr) / srr_;
    if (accept(a, b)) return c;
    c.fixed_ns = fixed_for(c.slope);
    return c;
  }
  {
    double b = (sw * srt - sr * st) / det;
    double a = (st - b * sr) / sw;
    if (a < 0) {  // through the origin
      a = 0;
      b = srt / srr;
    }
    if (accept(a, b)) return c;
  }
  c.fixed_ns = fixed_for(c.slope);
  return c;
}

}  // namespace reverie::hardware
