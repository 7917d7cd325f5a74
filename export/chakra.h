// File: export/chakra.h
//
// ExportChakra(): a dependency graph (baseline or transformed by scripts) and
// its simulation as a Chakra execution trace (ET), the input of ASTRA-sim.
// The schema subset and the file framing are described in
// proto/chakra_et.proto.
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
//   them, and comm tasks on channels): COMM_COLL_NODE, is_cpu_op = false,
//   comm_type from the name (all-reduce, all-gather, reduce-scatter,
//   all-to-all, broadcast: the five ASTRA-sim simulates) and comm_size =
//   Graph::bytes() (a script's comm task carries its bucket's bytes). A
//   Kineto kernel carries no payload size: when the graph's size is 0, it is
//   the bytes of the trace's Collective record paired with the kernel
//   (ChakraOptions::collectives; the pairing rule, by order per collective
//   type and only when the counts agree, is in export/collective_sizes.h;
//   counted in comm_record_sized). A size neither knows is written as 0,
//   never guessed, and counted (ChakraStats::comm_unsized; those of a type
//   whose kernel and sized-record counts disagree also in
//   comm_count_mismatch; a type with no sized record at all is only
//   unsized). A record's size is in_nelems x element size: the
//   call's input buffer (one rank's share for an all-gather).
//   [ASTRA-sim raises a zero size to its minimum chunk for all-reduce /
//   reduce-scatter / all-to-all; a zero all-gather is not safe there.] The
//   record's group size has no Chakra field (pg_name names a process group
//   the rank set would have to describe), so it is not written.
//   Communication of another kind (reduce, send/recv, RCCL's generic
//   kernels) stays a COMP_NODE replayed for its duration, counted in
//   comm_untyped. No pg_name: every collective uses the default group of all
//   ranks.
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
#include "export/collective_sizes.h"
#include "proto/chakra_et.pb.h"
#include "depgraph/model_info.h"

namespace reverie::exporter {

// The GlobalMetadata.version we write: the Chakra release whose schema
// proto/chakra_et.proto mirrors (its generator writes the same string).
inline constexpr char kChakraSchemaVersion[] = "1.0.0";

struct ChakraStats {
  int64_t nodes = 0;
  int64_t dependencies = 0;   // data_deps entries over all nodes
  int64_t cpu_nodes = 0;      // CPU API calls and CPU work
  int64_t gpu_nodes = 0;      // kernels, memcpys, memsets that are not communication
  int64_t comm_nodes = 0;     // COMM_COLL_NODE
  int64_t gap_nodes = 0;
  int64_t comm_unsized = 0;   // COMM_COLL_NODE written with comm_size 0
  int64_t comm_record_sized = 0;    // COMM_COLL_NODE sized by a paired Collective record
  int64_t comm_count_mismatch = 0;  // of comm_unsized: kernels of a type with sized records, but
                                    // not as many as kernels
  int64_t comm_untyped = 0;   // communication of no supported collective type (COMP_NODE)
  int64_t delayed_edges = 0;  // edges whose delay_ns != 0 was dropped
  int64_t dropped_delay_ns = 0;
  int64_t channel_gaps = 0;   // gaps on unordered resources, not expressible
  int64_t zero_us_nodes = 0;  // non-zero simulated duration written as 0 us
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
  // The trace's Collective records in measured order
  // (depgraph::ModelInfo::collectives of the trace the graph was built
  // from); they size the communication kernels the graph has no bytes for.
  // Must outlive the ExportChakra() call.
  std::span<const depgraph::CollectiveInfo> collectives;
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

// "<prefix>.<rank>.et", the name ASTRA-sim opens for each rank.
std::string ChakraRankPath(std::string_view prefix, int rank);

// Writes trace.bytes to ChakraRankPath(prefix, r) for r in [0, ranks).
// Returns the paths written; an error names the file that failed.
absl::StatusOr<std::vector<std::string>> WriteChakraRanks(const ChakraTrace& trace,
                                                          std::string_view prefix, int ranks);

// A parsed Chakra ET stream (the reader's side of the framing).
struct ChakraFile {
  chakra_et::GlobalMetadata metadata;
  std::vector<chakra_et::Node> nodes;
};

// Parses `bytes` as written above. kDataLoss on a truncated or malformed
// message (naming its index), kInvalidArgument when there is no metadata.
absl::StatusOr<ChakraFile> ReadChakra(std::string_view bytes);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_CHAKRA_H_
