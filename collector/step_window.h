// File: collector/step_window.h
//
// StepWindow: which records belong to the steps the user asked
// for (REVERIE_WARMUP steps skipped, then REVERIE_STEPS kept).
//
// The window is active only when one of the two settings is non-zero;
// otherwise every record is kept. When active it spans from the begin of
// step `warmup` to the end of step `warmup + steps - 1`
// (open-ended while that end has not been seen, or when steps == 0).
//
// Host-side records (API calls, syncs, ranges) are judged by time. GPU
// records and CUDA event records are judged by the correlation id of the
// API call that launched them, because their GPU time may fall after the
// last step ended on the CPU (the GPU tail belongs to the step).
// CUPTI correlation ids grow with API entry order, so a correlated record
// belongs to the window exactly when its id lies within the ids of the API
// calls kept.
//
// CUPTI delivers records in no global order: CUDA 13 fills one buffer per
// thread, and inside a thread's buffer a kernel's record comes *before* the
// record of the cudaLaunchKernel that launched it. A GPU record may
// therefore be decoded before its API call, even after the window closed.
// Judge() says kUndecided when the ids seen so far cannot place it; the
// caller holds such records and asks again as more API calls are decoded
// (the range of kept ids only grows, and the ids of dropped calls narrow
// what can still be kept), and at the end uses KeepAtEnd(), once every API
// call has been decoded.
//
// Invariant: the writer thread drains host events (step marks) before
// decoding each batch of CUPTI buffers, so a record produced after an
// step began or ended is never judged before the window knows it.
// Hence an API call decoded while the window has not begun was made before
// it began, and a GPU record decoded while the window is still open was
// launched before it closed.
//
// Not thread-safe: owned by the writer thread.
#ifndef REVERIE_COLLECTOR_STEP_WINDOW_H_
#define REVERIE_COLLECTOR_STEP_WINDOW_H_

#include <cstdint>
#include <limits>

namespace reverie::collector {

class StepWindow {
 public:
  enum class Decision { kKeep, kDrop, kUndecided };

  StepWindow(int64_t warmup, int64_t steps)
      : warmup_(warmup < 0 ? 0 : warmup),
        steps_(steps < 0 ? 0 : steps),
        active_(warmup_ > 0 || steps_ > 0) {}

  bool active() const { return active_; }
  bool begun() const { return !active_ || begin_ns_ != kUnset; }
  // True once the last requested step ended.
  bool closed() const { return active_ && end_ns_ != kUnset; }

  // Is step `index` one of those to record?
  bool WantStep(int64_t index) const {
    if (!active_) return true;
    return index >= warmup_ && (steps_ == 0 || index < warmup_ + steps_);
  }
  void OnStepBegin(int64_t index, int64_t t) {
    if (active_ && index == warmup_ && begin_ns_ == kUnset) begin_ns_ = t;
  }
  void OnStepEnd(int64_t index, int64_t t) {
    if (active_ && steps_ > 0 && index == warmup_ + steps_ - 1 && begin_ns_ != kUnset) {
      end_ns_ = t;
    }
  }

  // A host record at time t (or spanning [start, end]).
  bool KeepTime(int64_t t) const { return KeepSpan(t, t); }
  bool KeepSpan(int64_t start, int64_t end) const {
    if (!active_) return true;
    if (begin_ns_ == kUnset) return false;
    return end >= begin_ns_ && (end_ns_ == kUnset || start <= end_ns_);
  }

  // An API call. Remembers the correlation ids of those kept, and the
  // nearest ids of those dropped on either side of the window.
  bool KeepApiCall(uint64_t correlation_id, int64_t start, int64_t end) {
    if (!active_) return true;
    if (KeepSpan(start, end)) {
      if (correlation_id != 0) {
        if (correlation_id < min_kept_) min_kept_ = correlation_id;
        if (correlation_id > max_kept_) max_kept_ = correlation_id;
      }
      return true;
    }
    if (correlation_id != 0) {
      if (begin_ns_ == kUnset || end < begin_ns_) {
        if (correlation_id > max_before_) max_before_ = correlation_id;
      } else if (correlation_id < min_after_) {
        min_after_ = correlation_id;
      }
    }
    return false;
  }

  // A record tied to an API call by `correlation_id` (0 = unknown); `t` is
  // its own start time, 0 when it has none. Records without a correlation
  // id are judged by their time (never undecided).
  Decision Judge(uint64_t correlation_id, int64_t t) const {
    if (!active_) return Decision::kKeep;
    if (begin_ns_ == kUnset) return Decision::kDrop;
    if (correlation_id == 0) return KeepByTime(t) ? Decision::kKeep : Decision::kDrop;
    const bool have_kept = max_kept_ != 0;
    if (have_kept && correlation_id >= min_kept_ && correlation_id <= max_kept_) return Decision::kKeep;
    if (correlation_id <= max_before_ || correlation_id >= min_after_) return Decision::kDrop;
    // Launched after a kept call and before the window closed.
    if (end_ns_ == kUnset && have_kept && correlation_id > max_kept_) return Decision::kKeep;
    return Decision::kUndecided;
  }

  // The final judgement of a record Judge() left undecided, once every API
  // call has been decoded: in the window exactly when its id lies within
  // those of the API calls kept (by time when none was kept).
  bool KeepAtEnd(uint64_t correlation_id, int64_t t) const {
    switch (Judge(correlation_id, t)) {
      case Decision::kKeep: return true;
      case Decision::kDrop: return false;
      case Decision::kUndecided: break;
    }
    if (max_kept_ == 0) return KeepByTime(t);
    return correlation_id >= min_kept_ && correlation_id <= max_kept_;
  }

 private:
  static constexpr int64_t kUnset = std::numeric_limits<int64_t>::min();

  bool KeepByTime(int64_t t) const {
    return t == 0 || (t >= begin_ns_ && (end_ns_ == kUnset || t <= end_ns_));
  }

  int64_t warmup_;
  int64_t steps_;
  bool active_;
  int64_t begin_ns_ = kUnset;
  int64_t end_ns_ = kUnset;
  uint64_t min_kept_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_kept_ = 0;
  uint64_t max_before_ = 0;                                      // 0 = none
  uint64_t min_after_ = std::numeric_limits<uint64_t>::max();  // max = none
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_STEP_WINDOW_H_
