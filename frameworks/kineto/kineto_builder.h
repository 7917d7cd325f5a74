// File: frameworks/kineto/kineto_builder.h
//
// KinetoTraceBuilder turns decoded Kineto events (RawEvent) into a reverie
// Trace. AddEvent() is called once per event in file order; Finish() does
// what needs the whole trace: correlation checks, range nesting, phase and
// layer inference (kineto_ranges.cc), steps, collectives, flows,
// threads and devices.
//
// Invariants:
// - Nothing that a RawEvent's string_views point to is kept past AddEvent()
//   except through Trace::Intern; an open "B" event keeps copies of its
//   strings (its "E" may come in a later chunk of the document).
// - Every event is either turned into trace data or counted under a named
//   counter (skipped_*, unknown_category, missing_field, ...): none vanish.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_BUILDER_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_BUILDER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "frameworks/kineto/kineto_event.h"
#include "frameworks/kineto/kineto_ranges.h"
#include "proto/trace.h"

namespace reverie::kineto {

inline constexpr char kKinetoProducer[] = "reverie import (kineto json)";

class KinetoTraceBuilder {
 public:
  explicit KinetoTraceBuilder(const std::string& source_path);
  // A builder for a later part of the same document, filled on another
  // thread while `owner` takes the parts before it: its records are made on
  // `owner`'s arena, so that Absorb() moves them without copies.
  static KinetoTraceBuilder PartOf(KinetoTraceBuilder& owner);
  KinetoTraceBuilder(KinetoTraceBuilder&&) = default;

  Trace& trace() { return trace_; }
  proto::TraceHeader& header() { return trace_.header(); }

  // One trace event, in file order.
  void AddEvent(const RawEvent& e);
  // Called when the traceEvents array ends: unmatched "B" events are counted.
  void EndOfEvents();
  // Post-processing, on `threads` workers (0: every core; the Trace is the
  // same); the builder must not be used afterwards.
  Trace Finish(int threads = 1);

  // A hint from the parser: the document holds about `n` events.
  void ExpectEvents(size_t n);

  // Number of events seen (any kind), for the "no events" check.
  int64_t events_seen() const { return events_seen_; }

  // Whether Absorb() can take `part` (made by PartOf(*this)): not when it
  // saw "B" or "E" events, which pair across parts in file order (the
  // caller then parses that part again with this builder).
  bool CanAbsorb(const KinetoTraceBuilder& part) const { return !part.saw_begin_end_; }
  // Appends `part`'s events after this builder's, with the result AddEvent
  // would have given had they come here in file order: the same string ids,
  // counters, record order and thread and flow tables
  // (kineto_builder_part.cc).
  void Absorb(KinetoTraceBuilder&& part);

 private:
  void AddComplete(const RawEvent& e);  // a "ph":"X" event (or a paired B/E)
  void AddApiCall(const RawEvent& e, int64_t end_ns);
  void AddGpuActivity(const RawEvent& e, int64_t end_ns);
  void AddSync(const RawEvent& e, int64_t end_ns);
  void AddEventRecord(const RawEvent& e);
  void AddRange(const RawEvent& e, int64_t end_ns, proto::Range::Kind kind);
  // Copies a CPU op's recorded input shapes into op_inputs_ (strings interned).
  void KeepInputs(const OpInputsScratch& in, RangeRec* r);
  void AddCollectiveFromArgs(const RawEvent& e, int64_t end_ns);
  void AddMetadata(const RawEvent& e);
  void AddMemory(const RawEvent& e);  // a [memory] instant event
  void AddFlowEnd(const RawEvent& e);
  void NoteCpuThread(int64_t pid, int64_t tid);
  // `e` with its strings copied into kept_strings_.
  RawEvent KeepStrings(const RawEvent& e);

  void CheckCorrelations();
  void ResolveSyncThreads();
  void BuildCollectivesFromAnnotations();
  std::vector<FwdBwdLink> BuildFlows();
  void BuildThreadsAndProcesses();
  void BuildDevices();

  KinetoTraceBuilder(const std::string& source_path, Trace trace);

  Trace trace_;
  int64_t events_seen_ = 0;
  bool saw_begin_end_ = false;
  uint32_t file_order_ = 0;
  RangeRecs ranges_;
  OpInputStore op_inputs_;
  // "nccl:all_reduce"-style annotations: collectives when no
  // record_param_comms with args lies inside them.
  struct CommAnnotation {
    int64_t pid, tid, start_ns, end_ns;
    uint64_t external_id;
    uint32_t name_sid;
  };
  std::vector<CommAnnotation> comm_annotations_;
  struct FlowEnd {
    int64_t tid = 0;
    int64_t ts_ns = 0;
    bool seen = false;
  };
  absl::flat_hash_map<uint64_t, std::pair<FlowEnd, FlowEnd>> fwdbwd_;  // id -> (start, finish)
  // Open "B" events per (pid, tid), paired with "E" in file order.
  absl::flat_hash_map<std::pair<int64_t, int64_t>, std::vector<RawEvent>> open_begins_;
  std::deque<std::string> kept_strings_;  // stable addresses for open_begins_' views
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> cpu_threads_;  // -> name sid
  struct ProcessNames {  // unset until a metadata event names it
    std::optional<uint32_t> name, label;
  };
  absl::flat_hash_map<int64_t, ProcessNames> processes_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> thread_names_;
  // -> index in api_calls
  absl::flat_hash_map<uint64_t, int, absl::Hash<uint64_t>, std::equal_to<uint64_t>,
                      HugePageAllocator<std::pair<const uint64_t, int>>>
      api_by_correlation_;
  bool saw_hip_api_ = false;
};

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_BUILDER_H_
