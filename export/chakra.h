// File: export/chakra.h
//
// ExportChakra(): the kernel-level Chakra export (`--chakra-detail kernels`):
// every task of a dependency graph (baseline or transformed by scripts) as
// one Chakra ET node, the input of ASTRA-sim. The default export is the
// compute lane of chakra_lane.h, which keeps reverie's timing under
// ASTRA-sim's workload model; this one keeps the graph's structure and loses
// the timing when the graph has more than one CPU thread or GPU stream:
// ASTRA-sim runs at most one CPU node and one GPU compute node at a time per
// NPU (workload/HardwareResource.cc), so it serialises the others
// (ChakraStats::serialised says by how much). The schema subset and the file
// framing are described in proto/chakra_et.proto.
//
// Mapping (what ASTRA-sim does with each choice is in brackets; checked in
// astra-sim/workload/Workload.cc and HardwareResource.cc and the Chakra
// feeders, see docs/ARCHITECTURE.md):
// - Every live task is one Node; ids are dense 0..N-1 in a topological order
//   that follows the simulated start time, so every dependency names an
//   earlier node (Chakra's windowed feeder resolves parents as it reads).
// - CPU API calls and CPU work: COMP_NODE, is_cpu_op = true [replayed for
//   duration_micros on the rank's CPU].
// - Kernels, memcpys, memsets: COMP_NODE, is_cpu_op = false [replayed for
//   duration_micros; no num_ops / tensor_size are known, so ASTRA-sim must
//   run with its roofline model off, its default]. Host-device copies are not
//   MEM_LOAD/STORE_NODE: those model a remote-memory backend.
// - Communication (NCCL/RCCL kernels as depgraph/kernel_class.h classifies
//   them, and comm tasks on channels) typed and sized by export/comm_typing.h
//   (the name, else the Collective record around the launch; bytes from the
//   graph, else a record, else 0, never guessed): a collective ASTRA-sim
//   simulates is a COMM_COLL_NODE, is_cpu_op = false, with comm_type and
//   comm_size [ASTRA-sim re-simulates it from these and the network, except
//   a BROADCAST, which it replays for duration_micros]. A collective of
//   unknown size stays a COMP_NODE replayed for its duration [ASTRA-sim
//   would raise a zero size to its minimum chunk, and a zero all-gather
//   never completes there], counted in comm_unsized (of a type whose kernel
//   and sized-record counts disagree, also in comm_count_mismatch).
//   Other communication (reduce, point-to-point,
//   whose peer a single rank's file cannot name, RCCL's generic kernels)
//   stays a COMP_NODE replayed for its duration, counted in comm_untyped.
//   No pg_name: every collective uses the default group of all ranks.
// - Dependencies: the graph's live edges plus the order of each ordered
//   resource (prev_on_resource), deduplicated (Chakra's legacy feeder removes
//   one occurrence of a parent per completion, so a duplicate would never be
//   released), all in data_deps: both Chakra feeders honour data_deps, the
//   legacy one ignores ctrl_deps. ctrl_deps stays empty. Unordered resources
//   (communication channels) add no order [ASTRA-sim runs one collective at a
//   time per rank anyway].
// - Gaps: a task's gap_ns (simulator.h: the next task on its ordered resource
//   starts no earlier than this task's end + gap; on a CPU thread it is
//   untraced CPU time) becomes its own node, "[gap] <resource>", between the
//   task and its successor, with the task's is_cpu_op. Folding it into the
//   task's duration would also delay the task's edge children (a launched
//   kernel), which the simulator does not. Gaps with no successor affect
//   nothing and are left out; gaps on unordered channels cannot be expressed
//   and are counted (channel_gaps). [A gap node is a compute node there: it
//   holds the rank's one CPU or one GPU-compute slot, as ASTRA-sim runs one
//   node of each at a time and so serialises several threads or streams.]
// - Edge delays (launch latency, event and window-start offsets) have no
//   Chakra field: the dependency is kept, the delay dropped and counted
//   (delayed_edges, dropped_delay_ns).
// - Times: start_time_micros = the simulated start (never a measured time)
//   relative to the earliest simulated start, rounded to the nearest us;
//   duration_micros = rounded end - rounded start, so that back-to-back
//   chains keep their total to within 1 us and the exported timeline still
//   satisfies every dependency. A sub-microsecond task can become 0 us
//   (counted in zero_us_nodes) [ASTRA-sim runs a 0 us node for 1 ns].
// - Ranks: every rank gets the same bytes; a data-parallel what-if (ddp.lua
//   with workers=N) is symmetric, so rank r's file is rank 0's.
//
// Invariants of the output: node ids 0..nodes-1, each written once, in
// increasing order; every data_dep < the node's id; no duplicate deps.
#ifndef REVERIE_EXPORT_CHAKRA_H_
#define REVERIE_EXPORT_CHAKRA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "export/chakra_io.h"
#include "export/collective_sizes.h"
#include "proto/chakra_et.pb.h"

namespace reverie::exporter {

struct ChakraStats {
  int64_t nodes = 0;
  int64_t dependencies = 0;   // data_deps entries over all nodes
  int64_t cpu_nodes = 0;      // CPU API calls and CPU work
  int64_t gpu_nodes = 0;      // kernels, memcpys, memsets that are not communication
  int64_t comm_nodes = 0;     // COMM_COLL_NODE (sized collectives)
  int64_t gap_nodes = 0;
  int64_t comm_unsized = 0;   // collectives of unknown size, written as COMP_NODE
  int64_t comm_record_sized = 0;    // COMM_COLL_NODE sized by a paired Collective record
  int64_t comm_count_mismatch = 0;  // of comm_unsized: kernels of a type with sized records, but
                                    // not as many as kernels
  int64_t comm_untyped = 0;   // communication of no supported collective type (COMP_NODE)
  int64_t delayed_edges = 0;  // edges whose delay_ns != 0 was dropped
  int64_t dropped_delay_ns = 0;
  int64_t channel_gaps = 0;   // gaps on unordered resources, not expressible
  int64_t zero_us_nodes = 0;  // non-zero simulated duration written as 0 us
  int64_t typed_by_record = 0;  // kernels typed by the record around their launch
  // What ASTRA-sim's one-node-per-kind model will serialise: the graph's CPU
  // threads and GPU streams with work, the summed durations of the CPU and
  // of the GPU compute nodes, and reverie's simulated span.
  int64_t cpu_threads = 0;
  int64_t gpu_streams = 0;
  int64_t cpu_node_ns = 0;
  int64_t gpu_node_ns = 0;
  int64_t span_ns = 0;
};

struct ChakraTrace {
  std::string bytes;  // GlobalMetadata then Nodes, each varint-length-prefixed
  ChakraStats stats;
  // Per TaskId value: the task's node id, and the id of the gap node written
  // after it; -1 for removed tasks / no gap node.
  std::vector<int64_t> node_of_task;
  std::vector<int64_t> gap_node_of_task;
  // How each collective type's kernels paired with the Collective records
  // (empty without records and recorded communication kernels).
  std::vector<CollectiveTypeMatch> collective_types;
};

struct ChakraOptions {
  // The trace's Collective records (CollectiveRecordsOf() in comm_typing.h
  // of the trace the graph was built from); they type and size the
  // communication kernels the graph has no type or bytes for. Must outlive
  // the ExportChakra() call.
  std::span<const CollectiveRecord> collectives;
};

// The collective a communication task's name denotes, among the five
// ASTRA-sim simulates; nullopt for any other name. Case, '_' and '-' are
// ignored ("ncclKernel_AllReduce_RING_LL_Sum_float" -> ALL_REDUCE).
std::optional<chakra_et::CollectiveCommType> CollectiveFromName(std::string_view name);

// `sim` must be Simulate(graph) (same task count). kInvalidArgument when it
// is not; kFailedPrecondition when edges plus resource order have a cycle.
absl::StatusOr<ChakraTrace> ExportChakra(const depgraph::Graph& graph,
                                         const depgraph::SimResult& sim,
                                         const ChakraOptions& options = {});

// Writes trace.bytes to ChakraRankPath(prefix, r) for r in [0, ranks).
// Returns the paths written; an error names the file that failed.
absl::StatusOr<std::vector<std::string>> WriteChakraRanks(const ChakraTrace& trace,
                                                          std::string_view prefix, int ranks);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_CHAKRA_H_
