// File: export/comm_typing.h
//
// TypeCommunication(): what each communication task of a graph is to
// ASTRA-sim (which collective, how many bytes, or a point-to-point transfer),
// the step both Chakra exports (chakra.h, chakra_lane.h) share.
//
// Rules, per live communication task (depgraph/kernel_class.h
// IsCommunicationTask), first that applies:
// - Type. The task's name when it names one of the five collectives ASTRA-sim
//   simulates (CollectiveFromName). Else, for a recorded kernel, the
//   Collective record around the CPU call that launched it (same pid and
//   thread, record start <= launch start <= record end; a sized record wins
//   over an unsized one around it): NCCL runs all-to-all, and on some builds
//   every collective (HTA's DLRM trace: all-reduce, all-gather,
//   reduce-scatter and all-to-all), as "SendRecv" kernels whose name says
//   nothing; the framework's record around the launch does. A record named
//   send / recv (isend, irecv, "nccl:send") makes the task point-to-point, as
//   do NCCL's Send / Recv kernel names. Anything else (reduce, RCCL's generic
//   kernels, a SendRecv kernel with no record) is kOther.
// - Bytes. Graph::bytes() when > 0 (a script's comm task carries its
//   bucket's bytes); else the record around the launch when sized and of the
//   same type; else the record paired by order per type
//   (collective_sizes.h: only when the type's kernel and sized-record counts
//   agree); else 0, never guessed.
// A record's bytes are in_nelems x element size (the call's input buffer,
// one rank's share for an all-gather). The records' group size has no
// Chakra field and is not used.
#ifndef REVERIE_EXPORT_COMM_TYPING_H_
#define REVERIE_EXPORT_COMM_TYPING_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "depgraph/graph.h"
#include "export/collective_sizes.h"
#include "proto/chakra_et.pb.h"
#include "proto/trace.h"

namespace reverie::exporter {

// The trace's Collective records with where and when they were issued, in
// measured start order. Records with a bad name id or negative size are
// skipped.
std::vector<CollectiveRecord> CollectiveRecordsOf(const Trace& trace);

enum class CommRole : uint8_t {
  kNone = 0,     // not communication (or removed)
  kCollective,   // one of the five collectives ASTRA-sim simulates
  kSend,         // point-to-point
  kRecv,
  kOther,        // communication ASTRA-sim cannot simulate from what is known
};

enum class P2p : uint8_t { kNone, kSend, kRecv };
// "send", "isend", "nccl:send", "ncclDevKernel_Send_..." -> kSend (likewise
// recv); "SendRecv" and anything else -> kNone.
P2p P2pOfName(std::string_view name);

struct CommTyping {
  // Per TaskId value.
  std::vector<CommRole> role;
  std::vector<chakra_et::CollectiveCommType> type;  // meaningful for kCollective
  std::vector<int64_t> bytes;                       // 0 = unknown
  // How each collective type's kernels paired by order (collective_sizes.h).
  std::vector<CollectiveTypeMatch> order_pairing;
  int64_t typed_by_record = 0;    // kernels whose name says no type, typed by their record
  int64_t sized_by_record = 0;    // collectives sized by a record (around or by order)
  int64_t unsized = 0;            // collectives and point-to-point left at 0 bytes
  int64_t count_mismatch = 0;     // of unsized: a type whose counts disagree
  int64_t other = 0;              // kOther tasks
};

CommTyping TypeCommunication(const depgraph::Graph& graph,
                             std::span<const CollectiveRecord> records);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_COMM_TYPING_H_
