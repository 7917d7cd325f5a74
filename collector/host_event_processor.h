// File: collector/host_event_processor.h
//
// HostEventProcessor: host events (host_events.h) -> Range, Step,
// Parameter and GradientBucket records in a TraceSink.
//
// Nested ranges (layer push/pop, NVTX push/pop) keep a stack per thread.
// trace.proto wants `parent` to be the parent's *global index* in file
// order, so a parent must be written before its children, yet a parent ends
// (and is complete) after them. The processor therefore holds a thread's
// ranges until its stack is empty again and then writes them in push order,
// parents first. Invariants:
// - For every thread, `pending` holds ranges in push order; `open` holds
//   the positions in `pending` of the ranges not yet popped (a stack).
// - A range written with parent != 0 has its parent written earlier.
// - A thread whose stack never empties (a range open for the whole run)
//   would hold everything: past kMaxPendingPerThread the completed ranges
//   are written anyway and those whose parent is still open lose the link
//   (parent 0, counted `range_parent_unknown`).
// - Pops with an empty stack are counted (`range_unbalanced_pop`); ranges
//   still open at Finish() end then (`range_unclosed`).
// NVTX start/end ranges are not nested; they are written as top-level
// ranges when they end.
//
// Not thread-safe: owned by the writer thread.
#ifndef REVERIE_COLLECTOR_HOST_EVENT_PROCESSOR_H_
#define REVERIE_COLLECTOR_HOST_EVENT_PROCESSOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/host_events.h"
#include "collector/records.h"
#include "collector/trace_sink.h"

namespace reverie::collector {

class HostEventProcessor {
 public:
  static constexpr size_t kMaxPendingPerThread = 1 << 16;

  explicit HostEventProcessor(TraceSink* sink) : sink_(sink) {}

  void Process(const HostEvent& e);
  // Ends every open range at `now_ns`, writes everything still held.
  void Finish(int64_t now_ns);

  size_t pending_ranges() const;

 private:
  struct PendingRange {
    RangeRecord record;
    int64_t parent_pos = -1;  // position in `pending`, -1 = top level
    bool complete = false;
  };
  struct ThreadRanges {
    std::vector<PendingRange> pending;
    std::vector<size_t> open;
  };

  void Push(const HostEvent& e);
  void Pop(const HostEvent& e);
  void Start(const HostEvent& e);
  void End(const HostEvent& e);
  void StepBegin(const HostEvent& e);
  void StepEnd(const HostEvent& e);
  void Parameter(const HostEvent& e);
  void Bucket(const HostEvent& e);
  // Writes the completed ranges of `t`; keeps the open ones (and their
  // ancestors, which are open too).
  void Emit(ThreadRanges* t);
  RangeRecord MakeRange(const HostEvent& e, uint32_t depth);

  TraceSink* sink_;
  std::unordered_map<uint64_t, ThreadRanges> threads_;  // key: pid << 32 ^ tid
  std::unordered_map<uint64_t, RangeRecord> started_;   // NVTX start/end by id
  std::unordered_map<std::string, uint32_t> parameter_layer_;
  bool step_open_ = false;
  StepRecord step_;
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_HOST_EVENT_PROCESSOR_H_
