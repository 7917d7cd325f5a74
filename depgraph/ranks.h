// File: depgraph/ranks.h
//
// CoupleRanks(): the graphs of several ranks of one distributed job, one per
// rank's trace, joined into one graph in which a collective cannot start on
// any rank before every rank has reached it. A slow rank then delays the
// others as it does in the real job, which no single rank's trace can show:
// there the wait is baked into the NCCL kernel's measured duration. Beyond
// Daydream, which models one worker.
//
// Model:
// - Each rank keeps its own resources (named "rank R: ..."), tasks, gaps and
//   edges. Layers are shared by path (the ranks run one model). Job
//   step k is every rank's k-th step (a synchronous job steps
//   together); tasks of steps beyond the fewest any rank has are left
//   untagged and counted.
// - Collectives are matched across ranks by communication stream, type
//   (CollectiveOfName) and order: the i-th AllReduce on every rank's first
//   NCCL stream is one collective. NCCL runs one communicator's collectives
//   in issue order on its stream, the same on every rank; streams are
//   numbered by first use, as their ids need not agree across ranks. The
//   order is the rank's own simulated start order (ties by TaskId), never
//   measured time, so that comm tasks a script inserted (on their channels)
//   match as well.
// - A zero-length barrier task per collective, on an unordered "collectives"
//   channel, depends on what each rank's copy depends on (its predecessor on
//   its stream, with that predecessor's gap, and its edges); every copy
//   depends on the barrier. So the collective starts everywhere when the last
//   rank is ready.
// - Its duration on every rank becomes the shortest of the ranks' durations.
//   A traced NCCL kernel spins until its peers arrive; the rank that arrived
//   last waited least, so the shortest duration is the nearest to the
//   transfer itself. The waiting is re-derived from the simulated arrivals,
//   so a script that speeds one rank up changes how long the others wait.
//
// What couples: every NCCL/RCCL kernel (depgraph/kernel_class.h), and a
// script's comm task whose name names a collective ("all-reduce bucket 3");
// other comm tasks (P3's parameter-server pushes and pulls) stay the rank's
// own.
//
// Assumptions: every given rank takes part in every collective (one process
// group spanning the given ranks). Given a subset of the job's ranks, waits
// for the absent ones survive only as far as the shortest duration keeps
// them. A comm task on an unordered channel also waits for its channel,
// which the barrier does not see.
//
// Invariants of JobGraph: rank_of_resource has one entry per resource of
// `graph` (-1 for the barrier channel); every CollectiveGroup has one live
// task per rank, in rank order, and its barrier; `graph` has no cycle when
// CoupleRanks returns it.
#ifndef REVERIE_DEPGRAPH_RANKS_H_
#define REVERIE_DEPGRAPH_RANKS_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/graph.h"
#include "depgraph/kernel_class.h"
#include "depgraph/simulator.h"

namespace reverie::depgraph {

struct RankInput {
  const Graph* graph = nullptr;
  std::string label;  // names the rank in errors: its trace's path
  // The rank simulated alone, for the collective order; nullptr: simulated here.
  const SimResult* alone = nullptr;
};

struct CollectiveGroup {
  Collective type = Collective::kOther;
  int32_t stream = 0;         // its communication stream, by order of first use
  int32_t ordinal = 0;        // the i-th collective of its type on that stream
  std::vector<TaskId> tasks;  // one per rank, in the job graph
  TaskId barrier;
  int64_t duration_ns = 0;    // the shortest rank's: now every rank's
};

struct CoupleStats {
  std::array<int64_t, kCollectiveCount> collectives_by_type{};
  int64_t collectives = 0;
  int32_t steps = 0;      // job steps (the fewest any rank has)
  int64_t untagged_tasks = 0;  // in steps beyond that
  // The matching checked against the traces' measured times (ranks.cc
  // CheckMeasuredEnds): collectives whose every copy was traced, and those
  // whose copies did not end together, beyond a constant clock offset.
  int64_t measured_checked = 0;
  int64_t measured_misaligned = 0;
};

struct JobGraph {
  Graph graph;
  int32_t ranks = 0;
  std::vector<int32_t> rank_of_resource;
  // Per rank, the job task of each of the rank graph's tasks, by TaskId
  // value (invalid for removed tasks): what the Chakra export needs to carry
  // per-rank facts (collective types and sizes) into the job.
  std::vector<std::vector<TaskId>> task_of_rank;
  std::vector<CollectiveGroup> collectives;
  CoupleStats stats;
};

// At least two ranks. kInvalidArgument for fewer; kFailedPrecondition when
// no rank has a collective, when the ranks' counts of a collective type on a
// stream differ (the traces do not cover the same steps of one job: the message
// names both labels), or when the matched order is a cycle (the ranks issue
// collectives of different types in different orders).
absl::StatusOr<JobGraph> CoupleRanks(std::span<const RankInput> ranks);

// What one rank did in a simulated job.
struct RankTime {
  // Job steps over this rank's tasks (as SimResult::steps).
  std::vector<StepTime> steps;
  double mean_step_ns = 0;
  // Summed over collectives: how long the collective started after this
  // rank was ready for it (its peers were not).
  int64_t wait_ns = 0;
  int32_t last_arrivals = 0;  // collectives this rank was the last to be ready for
};

// `baseline`, when given, is the same job's AnalyzeJob before the scripts:
// each rank's steps are then read in its baseline's frame (step_time.h).
std::vector<RankTime> AnalyzeJob(const JobGraph& job, const SimResult& sim,
                                 const std::vector<RankTime>* baseline = nullptr);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_RANKS_H_
