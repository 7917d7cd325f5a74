// File: export/collective_sizes.h
//
// MatchCollectiveRecords(): payload sizes for a graph's recorded
// communication kernels from the trace's Collective records
// (CollectiveRecordsOf() in comm_typing.h), for the Chakra export's
// comm_size, where no record lies around the kernel's launch
// (comm_typing.h has the order of the rules). A
// Kineto kernel carries no size, but the framework's record_param_comms op
// beside it does ("In msg nelems" x element size); nothing links the two but
// their order.
//
// The rule, per collective type (CollectiveFromName() on both the kernel's
// and the record's name; the five types ASTRA-sim simulates), as
// scripts/ddp.lua pairs all-reduces:
// - records: the sized ones (bytes > 0) of that type, in measured start
//   order. Unsized records (the "nccl:all_reduce" annotation beside a sized
//   call, or a call recorded without args) and other names ("wait",
//   "barrier", send/recv) say nothing and are skipped.
// - kernels: the graph's communication kernels (depgraph/kernel_class.h) of
//   that type that came from the trace (measured_start_ns >= 0; tasks a
//   script inserted are not recorded collectives), in measured start order,
//   ties by TaskId. Removed ones still count: the pairing is between what
//   the trace recorded, so a script that drops a collective does not shift
//   the others.
// - Only when both counts agree is the i-th kernel given the i-th record's
//   bytes; otherwise no kernel of that type gets a size (never guessed). A
//   coalesced call (one kernel, several records) or a profile window that
//   cuts a call in two shows up as such a disagreement.
// Assumes the trace is one rank's: several ranks merged in one file would
// interleave their kernels and records by time. NCCL runs one communicator's
// collectives in issue order, so within a type the CPU records and the GPU
// kernels are in the same order as long as one process group issues them.
#ifndef REVERIE_EXPORT_COLLECTIVE_SIZES_H_
#define REVERIE_EXPORT_COLLECTIVE_SIZES_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "depgraph/graph.h"
#include "proto/chakra_et.pb.h"

namespace reverie::exporter {

// One Collective record of the trace (proto::Collective), resolved.
struct CollectiveRecord {
  std::string name;        // "allreduce", "nccl:all_to_all", "send", ...
  int64_t bytes = 0;       // payload (in_nelems x element size); 0 = unknown
  int32_t group_size = 0;  // 0 = not recorded
  int64_t pid = 0;         // the issuing CPU thread
  int64_t tid = 0;
  int64_t start_ns = 0;    // measured CPU span of the call
  int64_t end_ns = 0;
};

// How one collective type paired. Listed when the graph has a recorded
// kernel or the trace a sized record of the type.
struct CollectiveTypeMatch {
  chakra_et::CollectiveCommType type = chakra_et::ALL_REDUCE;
  int64_t kernels = 0;  // recorded communication kernels, removed ones included
  int64_t records = 0;  // sized Collective records
  bool matched() const { return kernels == records; }
};

struct RecordedCollectiveSizes {
  // Per TaskId value: the paired record's bytes; 0 = no record paired.
  std::vector<int64_t> bytes_of_task;
  std::vector<CollectiveTypeMatch> types;  // in CollectiveCommType order
};

RecordedCollectiveSizes MatchCollectiveRecords(const depgraph::Graph& graph,
                                               std::span<const CollectiveRecord> records);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_COLLECTIVE_SIZES_H_
