// File: export/astra_model.h
//
// ReplayLikeAstraSim(): what ASTRA-sim's workload layer does with one rank's
// Chakra ET when its network takes each communication node's
// duration_micros, so that an export can be checked against reverie's
// simulation without ASTRA-sim (tests, and the kernel-level export's
// warning). Re-derived from the behaviour of ASTRA-sim 518bd513
// (workload/Workload.cc, workload/HardwareResource.cc; nothing copied):
// - Per NPU at most one CPU node (is_cpu_op), one GPU compute node
//   (COMP_NODE) and one communication node (COMM_COLL_NODE, COMM_SEND_NODE)
//   run at a time; COMM_RECV_NODE takes no slot.
// - Whenever a node finishes (and at time 0), the dependency-free nodes are
//   issued in increasing id order, each one whose slot is free.
// - A compute node runs duration_micros x 1000 ns, at least 1 ns. Here a
//   communication node does the same (ASTRA-sim's network would decide),
//   once its peers have issued theirs: the k-th COMM_COLL_NODE of every
//   rank, or the send / receive of the same comm_tag (ASTRA-sim pairs them
//   so; its collectives cannot finish before the last rank joins). They then
//   run together for the longest of their durations.
// - A rank's finish time is when its last node ends.
// Only data_deps are followed (ctrl_deps would be too, by FeederV3; we write
// none).
#ifndef REVERIE_EXPORT_ASTRA_MODEL_H_
#define REVERIE_EXPORT_ASTRA_MODEL_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "export/chakra_io.h"

namespace reverie::exporter {

struct AstraModelResult {
  int64_t finish_ns = 0;
  // Busy time of each slot.
  int64_t cpu_ns = 0;
  int64_t gpu_ns = 0;
  int64_t comm_ns = 0;
};

// One file per rank (rank r = files[r]); a result per rank.
// kInvalidArgument when ids are not 0..n-1 in order or a dependency names a
// missing node; kFailedPrecondition when some node can never run (a cycle,
// or communication its peers never join).
absl::StatusOr<std::vector<AstraModelResult>> ReplayLikeAstraSim(std::span<const ChakraFile> files);

// One rank alone (its collectives start as soon as it issues them).
absl::StatusOr<AstraModelResult> ReplayLikeAstraSim(const ChakraFile& file);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_ASTRA_MODEL_H_
