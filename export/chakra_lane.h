// File: export/chakra_lane.h
//
// The default Chakra export (`reverie export --chakra`): per rank, reverie's
// simulated timeline projected onto ONE compute lane, with every
// communication that ASTRA-sim's network should time as a communication
// node on it. ASTRA-sim runs at most one CPU node, one GPU compute node and
// one communication node at a time per NPU (export/astra_model.h), so a
// graph of several threads and streams exported task by task (chakra.h)
// comes out serialised; a single chain of compute does not, and reverie's
// simulator has already resolved how the threads and streams overlap.
//
// The projection (one rank; times are reverie's simulated ones, within the
// exported window, SimulatedWindow()):
// 1. Busy time: the union of the rank's task intervals (and of each task's
//    gap, the untraced CPU time before its successor), network
//    communication left out. Communication that stays on the lane (kReplay,
//    or what ASTRA-sim cannot simulate: reduce, point-to-point without a
//    known peer) counts as busy: it is replayed for reverie's time.
// 2. Idle time (nothing of the rank runs) is kept on the lane as latency
//    (launch and event delays), except where the rank waits for the
//    network: when the task that ends an idle stretch was held by a network
//    communication task (its latest-ready dependency), the idle time up to
//    that task's end is dropped; the dependency below brings it back, at
//    whatever length ASTRA-sim's network gives the communication.
// 3. Cuts: the lane is cut where a network communication task becomes ready
//    on the lane (its producer: the latest ready time of its dependencies
//    that are not network communication) and where a task that depends on
//    one starts (its consumer). The pieces between cuts are COMP_NODEs,
//    is_cpu_op = false, each depending on the previous one, with
//    duration_micros = their length (rounded end - rounded start, so the
//    lane keeps its total to within 1 us per stretch between drops).
// 4. Each network communication task is a communication node (COMM_COLL_NODE
//    with comm_type and comm_size, or COMM_SEND_NODE / COMM_RECV_NODE with
//    comm_src, comm_dst, comm_tag, comm_size) that depends on the lane piece
//    ending at its producer cut and on the previous communication node (the
//    rank's issue order, which must be the same on every rank: ASTRA-sim
//    matches collectives across NPUs by issue order); the lane piece starting
//    at each consumer cut depends on it. duration_micros is reverie's
//    simulated duration: ASTRA-sim ignores it except for BROADCAST, which it
//    replays.
// What ASTRA-sim then decides: how long each communication takes on its
// network (and, across ranks, how long an early rank waits for a late one:
// a straggler's lane reaches the collective later), and how much of it
// hides behind the lane: compute after a consumer cut waits for the
// communication, compute before it does not. With the network taking
// reverie's durations, ASTRA-sim's finish time equals the rank's end in
// reverie's simulation to within the rounding to microseconds.
// Approximations: compute that reverie overlapped with a consumer is
// placed after the consumer cut, so it too waits when the network is slower
// than reverie's model; edge delays between a communication task's end and
// its consumer are dropped (the consumer follows the network node at once).
//
// Invariants of the output: ids 0..n-1 in order, every dependency on an
// earlier node, no duplicate dependencies; the COMP_NODEs form one chain (at
// most one compute node can run at a time); every communication node has
// a comm_type (collectives) and a comm_size.
#ifndef REVERIE_EXPORT_CHAKRA_LANE_H_
#define REVERIE_EXPORT_CHAKRA_LANE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "export/comm_typing.h"
#include "proto/chakra_et.pb.h"

namespace reverie::exporter {

// Where communication is timed.
enum class CommMode : uint8_t {
  kNetwork,  // by ASTRA-sim's network (the default)
  kReplay,   // by reverie: every communication task stays on the lane
};

// The part of reverie's simulated timeline an export covers and that
// ASTRA-sim's finish time is compared with: today the span of every live
// task (first simulated start to last simulated end). The one place to
// switch to depgraph's step-time definition (issue 11).
struct SimWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t span_ns() const { return end_ns - start_ns; }
};
SimWindow SimulatedWindow(const depgraph::Graph& graph, const depgraph::SimResult& sim);

// One communication task that goes to ASTRA-sim's network.
struct NetworkComm {
  depgraph::TaskId task;
  chakra_et::NodeType node_type = chakra_et::COMM_COLL_NODE;  // or COMM_SEND/RECV_NODE
  chakra_et::CollectiveCommType type = chakra_et::ALL_REDUCE;  // COMM_COLL_NODE only
  int64_t bytes = 0;
  int32_t src = -1;  // COMM_SEND/RECV_NODE only
  int32_t dst = -1;
  int64_t tag = 0;
};

// What a single-rank export sends to the network and what stays on the lane.
struct CommPlan {
  std::vector<NetworkComm> network;  // in simulated start order (ties: TaskId)
  int64_t replayed = 0;              // communication tasks kept on the lane
  int64_t unsized = 0;               // of replayed: collectives of unknown size
  int64_t replayed_p2p = 0;          // of replayed: point-to-point, no known peer
};

// Single rank: every collective ASTRA-sim simulates goes to the network
// (kNetwork) when it starts inside `window` and its size is known.
// A collective of unknown size stays on the lane: ASTRA-sim would time a
// size it does not know (it raises 0 to its minimum chunk, and a zero
// all-gather never completes there), so reverie's time is the better one.
// Point-to-point (its peer is another rank's file) and other communication
// stay on the lane too.
CommPlan PlanSingleRank(const depgraph::Graph& graph, const depgraph::SimResult& sim,
                        const CommTyping& typing, CommMode mode, const SimWindow& window);

struct LaneRequest {
  const depgraph::Graph* graph = nullptr;
  const depgraph::SimResult* sim = nullptr;  // Simulate(*graph)
  // The rank's resources are those with rank_of_resource[r] == rank; empty:
  // every resource.
  std::span<const int32_t> rank_of_resource;
  int32_t rank = 0;
  // The rank's network communication, in issue order; each a live task of
  // the rank.
  std::span<const NetworkComm> comms;
  SimWindow window;
};

struct LaneStats {
  int64_t nodes = 0;
  int64_t dependencies = 0;
  int64_t lane_nodes = 0;
  int64_t comm_nodes = 0;
  int64_t lane_ns = 0;      // kept on the lane (busy + latency)
  int64_t idle_ns = 0;      // of lane_ns: latency, nothing of the rank running
  int64_t dropped_ns = 0;   // idle time waiting for the network, left to ASTRA-sim
  int64_t rank_end_ns = 0;  // the rank's last simulated end, from window.start_ns
};

struct LaneTrace {
  std::string bytes;
  LaneStats stats;
};

// kInvalidArgument when `sim` does not fit the graph or a comm is not a live
// task of the rank; kInternal if the projection broke its own invariants.
absl::StatusOr<LaneTrace> ExportLane(const LaneRequest& request);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_CHAKRA_LANE_H_
