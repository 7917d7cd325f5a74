// File: hardware/efficiency.h
//
// How close kernels come to their roofline, as a function of size, fitted
// on a trace's own kernels. A kernel's roofline time R is its work at the
// GPU's peak (max(FLOPs / peak FLOP/s, bytes / peak bandwidth)); measured,
// it takes T. Across a class of kernels (GEMMs, element-wise, ...)
//
//     T = fixed + slope * R,   so the efficiency R / T = R / (fixed + slope * R)
//
// rises with size and saturates at 1 / slope: `fixed` is what a kernel costs
// however little it does (launch, ramp-up, tail), 1 / slope the share of
// peak the libraries reach on large problems. It is the saturating
// efficiency curve of a size change ("a bigger GEMM runs closer to peak")
// in a form a least-squares fit can find.
//
// The fit weighs each kernel's squared error by 1 / T (relative errors,
// weighted by time). When the trace's kernels are all small (none spends
// most of its time in the size-proportional part) the slope cannot be told
// from the data: it is then 1 / `prior_ceiling`, a documented global value
// (transforms/cost_model.h), and only `fixed` is fitted.
#ifndef REVERIE_HARDWARE_EFFICIENCY_H_
#define REVERIE_HARDWARE_EFFICIENCY_H_

#include <cstdint>

#include "absl/types/span.h"

namespace reverie::hardware {

struct EfficiencySample {
  double roofline_ns = 0;  // the kernel's work at peak
  double measured_ns = 0;  // what it took
};

struct EfficiencyCurve {
  double fixed_ns = 0;
  double slope = 1;               // >= 1: no kernel beats the peak
  int64_t samples = 0;
  bool slope_from_prior = true;   // the data did not determine the slope
  double ceiling() const { return 1.0 / slope; }
  double TimeNs(double roofline_ns) const { return fixed_ns + slope * roofline_ns; }
  double Efficiency(double roofline_ns) const {
    const double t = TimeNs(roofline_ns);
    return t > 0 ? roofline_ns / t : 0;
  }
};

// Fits the curve to `samples` (non-positive entries are skipped). With no
// usable sample, fixed = `fallback_fixed_ns` and the prior slope; with
// samples of one size (within 2x), fixed = `fallback_fixed_ns` and the slope
// from what is left of their time, when that is most of it.
EfficiencyCurve FitEfficiency(absl::Span<const EfficiencySample> samples, double prior_ceiling,
                              double fallback_fixed_ns);

}  // namespace reverie::hardware

#endif  // REVERIE_HARDWARE_EFFICIENCY_H_
