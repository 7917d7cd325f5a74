// File: base/checked_math.h
//
// Checked and saturating int64 arithmetic for numbers that come from a trace
// or a script, and the bounds reverie accepts for them.
//
// Every timestamp, duration, size and launch geometry a trace or a script
// gives is untrusted: `ts + dur` with both near 2^63 is undefined behaviour,
// and a wrapped sum turns "much longer" into "faster". The rule
// (docs/RELIABILITY.md):
// - at an input boundary (the .pb reader, the Kineto importer, a script's
//   edit) a value beyond the bounds below is rejected (a script gets a Lua
//   error) or clamped and counted as a named anomaly (a trace);
// - sums that can still grow past the bounds (a simulated clock adding
//   durations along a path) saturate at kSaturatedNs instead of wrapping.
//
// The bounds are far beyond any real measurement and small enough that the
// sum of two or three of them cannot overflow.
#ifndef REVERIE_BASE_CHECKED_MATH_H_
#define REVERIE_BASE_CHECKED_MATH_H_

#include <cmath>
#include <cstdint>
#include <limits>

namespace reverie {

// |timestamp| of a trace event, in ns on the trace's clock: 2^62 ns is 146
// years, so an epoch-based clock fits until 2116 and any difference of two
// timestamps fits in int64.
inline constexpr int64_t kMaxAbsTimestampNs = int64_t{1} << 62;
// One task's duration or gap, in ns: 2^50 ns is 13 days. Also the widest a
// trace may be (last end - first start): events farther than this from the
// bulk of the trace are clamped into it and counted.
inline constexpr int64_t kMaxDurationNs = int64_t{1} << 50;
// Bytes one copy, collective or parameter may carry: 2^50 (1 PiB).
inline constexpr int64_t kMaxBytes = int64_t{1} << 50;
// Kernel launch geometry: blocks per grid (x*y*z) and threads per block
// (x*y*z). CUDA allows 2^31-1 x 65535 x 65535 blocks, but no kernel that
// runs in a traced step launches 2^40; a block holds at most 1024 threads on
// every GPU reverie knows (2^16 leaves room).
inline constexpr int64_t kMaxGridBlocks = int64_t{1} << 40;
inline constexpr int64_t kMaxBlockThreads = int64_t{1} << 16;
// Where a saturating time sum stops: far below INT64_MAX so that a few more
// additions of bounded values cannot overflow either.
inline constexpr int64_t kSaturatedNs = int64_t{1} << 62;

// a + b, or false (and *out untouched) when it overflows int64.
inline bool CheckedAdd(int64_t a, int64_t b, int64_t* out) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
inline bool CheckedSub(int64_t a, int64_t b, int64_t* out) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
inline bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}

// Clamps `v` into [lo, hi].
inline int64_t ClampTo(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

// a + b clamped into [-kSaturatedNs, kSaturatedNs] (never overflows: the
// exact sum is computed wide first).
inline int64_t SatAddNs(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kSaturatedNs : -kSaturatedNs;
  return ClampTo(r, -kSaturatedNs, kSaturatedNs);
}
inline int64_t SatSubNs(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return a >= 0 ? kSaturatedNs : -kSaturatedNs;
  return ClampTo(r, -kSaturatedNs, kSaturatedNs);
}

// a + b on counters (anomaly counts, byte totals): saturates at INT64_MAX /
// INT64_MIN instead of wrapping.
inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

// a * b on counters: saturates at INT64_MAX / INT64_MIN instead of wrapping.
inline int64_t SatMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    return (a < 0) == (b < 0) ? std::numeric_limits<int64_t>::max()
                              : std::numeric_limits<int64_t>::min();
  }
  return r;
}

// How many integers [lo, hi] holds (0 when hi < lo), saturating at
// INT64_MAX: hi - lo + 1 does not fit int64 for lo < 0 < hi far apart.
inline int64_t RangeCount(int64_t lo, int64_t hi) {
  if (hi < lo) return 0;
  const uint64_t gap = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // exact
  return gap >= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(gap + 1);
}

// The double `v` as int64 when it is finite and |v| <= limit (rounded to
// nearest); false otherwise. A double cast out of range is undefined.
inline bool DoubleToInt64(double v, int64_t limit, int64_t* out) {
  if (!std::isfinite(v) || std::fabs(v) > static_cast<double>(limit)) return false;
  *out = static_cast<int64_t>(std::llround(v));
  return true;
}

}  // namespace reverie

#endif  // REVERIE_BASE_CHECKED_MATH_H_
