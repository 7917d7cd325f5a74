// File: collector/host_events.h
//
// Host events: what the application tells the collector (C API markers,
// NVTX ranges seen through CUPTI callbacks), queued by the calling thread
// and turned into trace records by the writer thread (HostEventProcessor).
//
// HostEventQueue is a mutex-protected vector that the writer swaps out
// whole. The callers are framework hooks (Python module hooks, a few per
// layer per step) and NVTX ranges, not per-kernel paths, and an
// uncontended lock + push_back is far below their own cost; a bounded size
// keeps a stalled writer from growing memory without limit (overflow is
// counted, never blocking).
#ifndef REVERIE_COLLECTOR_HOST_EVENTS_H_
#define REVERIE_COLLECTOR_HOST_EVENTS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "collector/records.h"

namespace reverie::collector {

enum class HostEventType : uint8_t {
  kPush,            // nested range opens on `tid`
  kPop,             // innermost range of `tid` closes
  kStart,           // NVTX start/end range `id` opens (not nested)
  kEnd,             // ... and closes
  kStepBegin,  // step `id`
  kStepEnd,
  kParameter,       // name, layer, dtype, bytes
  kBucket,          // index, bytes, names
  kMetadata,        // name = key, layer = value
};

struct HostEvent {
  HostEventType type = HostEventType::kPush;
  RangeKind kind = RangeKind::kUnspecified;
  PhaseValue phase = PhaseValue::kUnknown;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t time_ns = 0;
  uint64_t id = 0;  // external id (push), NVTX range id (start/end), step index
  int64_t bytes = 0;
  int32_t index = 0;
  std::string name;
  std::string layer;
  std::string dtype;
  std::vector<std::string> names;
};

class HostEventQueue {
 public:
  explicit HostEventQueue(size_t max_events = 1 << 20) : max_events_(max_events) {}

  // Returns false (and counts) when the queue is full.
  bool Push(HostEvent&& e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (events_.size() >= max_events_) {
      overflow_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    events_.push_back(std::move(e));
    return true;
  }
  // Moves every queued event into `out` (which is cleared first).
  void Drain(std::vector<HostEvent>* out) {
    out->clear();
    std::lock_guard<std::mutex> lock(mu_);
    events_.swap(*out);
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_.size();
  }
  // Events dropped because the queue was full, since the last call.
  int64_t TakeOverflow() { return overflow_.exchange(0, std::memory_order_relaxed); }

 private:
  const size_t max_events_;
  std::mutex mu_;
  std::vector<HostEvent> events_;
  std::atomic<int64_t> overflow_{0};
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_HOST_EVENTS_H_
