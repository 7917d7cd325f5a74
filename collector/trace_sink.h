// File: collector/trace_sink.h
//
// TraceSink: where decoded records go. It applies the step window,
// registers every thread and process the first time one of their records is
// kept (a Thread/Process message with its name), keeps the header facts
// (devices, metadata) and rewrites the header when they change, then hands
// the records to the ChunkWriter.
//
// GPU and CUDA event records the window cannot place yet (their API call
// has not been decoded: step_window.h) are held, in arrival order, and
// judged again by ResolveHeld(): after every CUPTI buffer, and with
// final=true once everything is decoded. At most kMaxHeld wait; past that
// the oldest is judged with the ids known then (`window_hold_overflow`).
//
// Invariants:
// - A kept record's thread has a Thread message in the same or an earlier
//   chunk position.
// - Every dropped record is counted (`records_outside_window`).
// - After ResolveHeld(true) nothing is held.
//
// Not thread-safe: owned by the writer thread.
#ifndef REVERIE_COLLECTOR_TRACE_SINK_H_
#define REVERIE_COLLECTOR_TRACE_SINK_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_set>

#include "collector/chunk_writer.h"
#include "collector/step_window.h"
#include "collector/records.h"
#include "collector/trace_encoder.h"

namespace reverie::collector {

// Name of thread `tid` of process `pid` ("" when unknown). The default reads
// /proc; tests substitute their own.
using ThreadNameFn = std::string (*)(int64_t pid, int64_t tid);
std::string ProcThreadName(int64_t pid, int64_t tid);

class TraceSink {
 public:
  static constexpr size_t kMaxHeld = size_t{1} << 16;

  TraceSink(ChunkWriter* writer, StepWindow* window, HeaderInfo header,
            ThreadNameFn thread_name = &ProcThreadName);

  ChunkWriter& writer() { return *writer_; }
  StepWindow& window() { return *window_; }
  const HeaderInfo& header() const { return header_; }

  void ApiCall(const ApiCallRecord& r);
  // A call REVERIE_API_FILTER leaves out: not written, counted
  // (api_calls_filtered) when inside the window, and its id still bounds
  // the window's correlation range.
  void FilteredApiCall(uint64_t correlation_id, int64_t start_ns, int64_t end_ns);
  void GpuActivity(const GpuActivityRecord& r);
  void Sync(const SyncRecord& r);
  void EventRecord(const EventRecordRecord& r);
  // Ranges are filtered by RangeTracker (it must keep parents with their
  // children); returns the range's id for its children.
  uint32_t Range(const RangeRecord& r);
  void Step(const StepRecord& r);
  void Parameter(const ParameterRecord& r) { writer_->AddParameter(r); }
  void GradientBucket(const GradientBucketRecord& r) { writer_->AddGradientBucket(r); }

  // Judges the held records again; `final`: every API call has been
  // decoded, so each one is kept or dropped now.
  void ResolveHeld(bool final);
  size_t held() const { return held_.size(); }

  void Device(const DeviceRecord& d);
  void SetMetadata(const std::string& key, const std::string& value);
  void Count(TraceCounter c, int64_t delta) { writer_->AddCounter(c, delta); }
  void Dropped() { writer_->AddCounter(TraceCounter::records_outside_window, 1); }

  // Registers the thread (and its process) when first seen.
  void NoteThread(int64_t pid, int64_t tid);

 private:
  // A GPU activity or a CUDA event record waiting for the window's verdict.
  struct Held {
    bool is_event = false;
    GpuActivityRecord gpu;
    EventRecordRecord event;
  };
  uint64_t CorrelationOf(const Held& h) const {
    return h.is_event ? h.event.correlation_id : h.gpu.correlation_id;
  }
  int64_t TimeOf(const Held& h) const { return h.is_event ? 0 : h.gpu.start_ns; }
  void Hold(Held h);
  void Write(const Held& h);

  ChunkWriter* writer_;
  StepWindow* window_;
  HeaderInfo header_;
  ThreadNameFn thread_name_;
  std::unordered_set<int64_t> pids_;
  std::unordered_set<uint64_t> threads_;
  std::deque<Held> held_;
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_TRACE_SINK_H_
