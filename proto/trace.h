// File: proto/trace.h
//
// Trace: one raw trace in memory (header + every event, merged from all the
// chunks of a .pb file or produced by an importer), plus the string table.
//
// Invariants:
// - events().strings(0) == "" so that string id 0 means "no string".
// - Intern() returns the same id for equal strings added through it; strings
//   appended to events().strings by other means are found by String() but are
//   not deduplicated (a reader of a .pb file gets the producer's table as is).
// - Counters are unique by name: AddCounter() merges.
// - Global indexes (Range.parent) index the merged repeated fields directly.
// - header() and events() live in one protobuf Arena owned by the Trace
//   (blocks from base/huge_pages.h): one bump allocation per message instead
//   of one heap object each, few page faults, and all freed at once. A
//   sibling (SiblingOf) lives on its owner's arena and owns none.
#ifndef REVERIE_PROTO_TRACE_H_
#define REVERIE_PROTO_TRACE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "google/protobuf/arena.h"
#include "proto/trace.pb.h"
#include "proto/trace_counters.h"

namespace reverie {

inline constexpr char kTraceMagic[] = "reverie.trace";
// 2: files end with a TraceEnd chunk (trace.proto); 1 had no end marker.
inline constexpr uint32_t kTraceSchemaVersion = 2;

class Trace {
 public:
  Trace();
  // A Trace whose messages live on `owner`'s arena (which must outlive it,
  // and which it does not own): a parallel importer builds parts of one
  // trace in siblings and moves their records to the owner without copies
  // (protobuf arenas allocate safely from several threads).
  static Trace SiblingOf(Trace& owner);
  Trace(Trace&&) noexcept;
  Trace& operator=(Trace&&) noexcept;
  ~Trace();

  proto::TraceHeader& header() { return *header_; }
  const proto::TraceHeader& header() const { return *header_; }
  proto::TraceChunk& events() { return *events_; }
  const proto::TraceChunk& events() const { return *events_; }

  // Returns the id of `s` in the string table, adding it when new.
  uint32_t Intern(std::string_view s);
  // The string with id `sid`, or "" when out of range (counted by callers
  // that care; a bad id is a data anomaly, not a crash).
  std::string_view String(uint32_t sid) const;
  size_t string_count() const { return events_->strings_size(); }

  // Adds `delta` to the counter (creating it at 0); counters are declared
  // in proto/trace_counters.h.
  void AddCounter(TraceCounter c, int64_t delta = 1);
  int64_t GetCounter(TraceCounter c) const;
  // Adds every counter of `other`, in its order (new names are appended in
  // that order, as if `other`'s AddCounter calls had been made here).
  void AddCountersOf(const Trace& other);

  // Rebuilds the intern and counter indexes after events() was filled by
  // other means (a reader merging chunks).
  void Reindex();

 private:
  // On `own` when given (the Trace owns it), else on `shared`.
  Trace(std::unique_ptr<google::protobuf::Arena> own, google::protobuf::Arena* shared);

  std::unique_ptr<google::protobuf::Arena> arena_;  // null in a sibling
  proto::TraceHeader* header_ = nullptr;            // on arena_ (a sibling's: its owner's)
  proto::TraceChunk* events_ = nullptr;   // on arena_
  absl::flat_hash_map<std::string_view, uint32_t> intern_;
  absl::flat_hash_map<std::string, int> counter_index_;
};

// `header` then `events` serialized deterministically (maps in key order):
// equal contents give equal bytes, for comparing two Traces.
std::string DeterministicBytes(const proto::TraceHeader& header, const proto::TraceChunk& events);

}  // namespace reverie

#endif  // REVERIE_PROTO_TRACE_H_
