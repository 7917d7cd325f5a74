// File: export/chakra_job.h
//
// PlanJob(): which communication of a multi-rank job (depgraph/ranks.h, one
// trace per rank) goes to ASTRA-sim's network, so that `reverie export
// --chakra PREFIX RANK0 RANK1 ...` writes one compute lane per rank
// (chakra_lane.h) from the job's simulation and an asymmetric job keeps its
// stragglers: a slow rank's lane reaches each collective later, and
// ASTRA-sim makes the others wait for it.
//
// Rules, per collective the job matched across ranks (CollectiveGroup),
// each rank's copy typed by its own trace (comm_typing.h):
// - the copies that are typed (a kernel whose launch lies outside its
//   trace's window has no record to type it) all the same ASTRA-sim
//   collective: a COMM_COLL_NODE on every rank, of that type; comm_size is
//   the largest size a rank knows (ranks must agree for ASTRA-sim to pair
//   their messages; a disagreement is counted); when no rank knows it, the
//   collective is replayed on the lanes (as for one rank, chakra_lane.h);
// - two ranks, one copy a send and the other a receive: COMM_SEND_NODE /
//   COMM_RECV_NODE between the two, tagged with the collective's index;
// - no copy typed (reduce, a SendRecv kernel with no record): replayed on
//   every rank's lane for reverie's time;
// - typed copies that disagree (all-reduce on one rank, all-to-all on
//   another; a send with no receive): the traces do not describe one job,
//   kFailedPrecondition naming the collective and the two ranks' traces.
// Every rank issues the network nodes in one order (ASTRA-sim pairs
// collectives across NPUs by issue order): the collectives' simulated start
// order, the same on every rank since a matched collective starts when the
// last rank reaches it; kFailedPrecondition when a rank's own order differs.
// Communication a rank does outside any matched collective stays on its
// lane.
#ifndef REVERIE_EXPORT_CHAKRA_JOB_H_
#define REVERIE_EXPORT_CHAKRA_JOB_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/ranks.h"
#include "depgraph/simulator.h"
#include "export/chakra_lane.h"
#include "export/comm_typing.h"

namespace reverie::exporter {

struct JobPlan {
  std::vector<std::vector<NetworkComm>> network;  // per rank, in issue order
  int64_t collectives = 0;   // matched collectives sent to the network
  int64_t p2p = 0;           // of them: send/receive pairs
  int64_t unsized = 0;       // rank copies of collectives of no known size (replayed)
  int64_t size_disagreements = 0;
  int64_t replayed = 0;      // rank communication tasks kept on lanes, over all ranks
};

// `typing[r]` types rank r's own graph (the job's task_of_rank[r] maps it);
// `labels[r]` names the rank's trace in errors.
absl::StatusOr<JobPlan> PlanJob(const depgraph::JobGraph& job, const depgraph::SimResult& sim,
                                std::span<const CommTyping> typing,
                                std::span<const std::string> labels, CommMode mode,
                                const SimWindow& window);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_CHAKRA_JOB_H_
