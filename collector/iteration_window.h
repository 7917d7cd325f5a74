// File: collector/iteration_window.h
//
// IterationWindow: which records belong to the iterations the user asked
// for (REVERIE_WARMUP iterations skipped, then REVERIE_ITERATIONS kept).
//
// The window is active only when one of the two settings is non-zero;
// otherwise every record is kept. When active it spans from the begin of
// iteration `warmup` to the end of iteration `warmup + iterations - 1`
// (open-ended while that end has not been seen, or when iterations == 0).
//
// Host-side records are judged by time. GPU records are judged by the
// correlation id of the API call that launched them, because their GPU time
// may fall after the last iteration ended on the CPU (the GPU tail belongs
// to the iteration): CUPTI correlation ids grow with API entry order, so a
// GPU record is kept when its id lies between the smallest and largest id of
// the API calls kept. Before any API call was kept, its time decides.
//
// Invariant: the writer thread drains host events (iteration marks) before
// decoding each CUPTI buffer, so a record produced after an iteration began
// is never judged before the window knows that begin.
//
// Not thread-safe: owned by the writer thread.
#ifndef REVERIE_COLLECTOR_ITERATION_WINDOW_H_
#define REVERIE_COLLECTOR_ITERATION_WINDOW_H_

#include <cstdint>
#include <limits>

namespace reverie::collector {

class IterationWindow {
 public:
  IterationWindow(int64_t warmup, int64_t iterations)
      : warmup_(warmup < 0 ? 0 : warmup),
        iterations_(iterations < 0 ? 0 : iterations),
        active_(warmup_ > 0 || iterations_ > 0) {}

  bool active() const { return active_; }
  bool begun() const { return !active_ || begin_ns_ != kUnset; }
  // True once the last requested iteration ended.
  bool closed() const { return active_ && end_ns_ != kUnset; }

  // Is iteration `index` one of those to record?
  bool WantIteration(int64_t index) const {
    if (!active_) return true;
    return index >= warmup_ && (iterations_ == 0 || index < warmup_ + iterations_);
  }
  void OnIterationBegin(int64_t index, int64_t t) {
    if (active_ && index == warmup_ && begin_ns_ == kUnset) begin_ns_ = t;
  }
  void OnIterationEnd(int64_t index, int64_t t) {
    if (active_ && iterations_ > 0 && index == warmup_ + iterations_ - 1 && begin_ns_ != kUnset) {
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

  // An API call; remembers the correlation id range of those kept.
  bool KeepApiCall(uint64_t correlation_id, int64_t start, int64_t end) {
    if (!KeepSpan(start, end)) return false;
    if (correlation_id != 0) {
      if (correlation_id < min_api_corr_) min_api_corr_ = correlation_id;
      if (correlation_id > max_api_corr_) max_api_corr_ = correlation_id;
    }
    return true;
  }

  // A record tied to an API call by `correlation_id` (0 = unknown); `t` is
  // its own start time, 0 when it has none.
  bool KeepCorrelated(uint64_t correlation_id, int64_t t) const {
    if (!active_) return true;
    if (begin_ns_ == kUnset) return false;
    const bool have_api = max_api_corr_ != 0 && correlation_id != 0;
    const bool lo = have_api ? correlation_id >= min_api_corr_ : (t == 0 || t >= begin_ns_);
    if (!lo) return false;
    if (end_ns_ == kUnset) return true;
    return have_api ? correlation_id <= max_api_corr_ : (t == 0 || t <= end_ns_);
  }

 private:
  static constexpr int64_t kUnset = std::numeric_limits<int64_t>::min();

  int64_t warmup_;
  int64_t iterations_;
  bool active_;
  int64_t begin_ns_ = kUnset;
  int64_t end_ns_ = kUnset;
  uint64_t min_api_corr_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_api_corr_ = 0;
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_ITERATION_WINDOW_H_
