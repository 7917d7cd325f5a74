// File: whatif/job.h
//
// `reverie ranks` and the Python module's reverie.ranks(): the ranks of one
// distributed job simulated together (depgraph/ranks.h), unchanged and,
// with scripts, after each rank was transformed alone; per rank the measured
// step, the step alone and in the job, its waits for its peers and how
// often it arrived last; and the JSON both print.
//
// Invariants: a JobReport points into the LoadedTraces it was made from (its
// job graphs are its own); `predicted` is set exactly when scripts were given.
#ifndef REVERIE_WHATIF_JOB_H_
#define REVERIE_WHATIF_JOB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/ranks.h"
#include "depgraph/simulator.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

// One simulated job: the coupled graph, its simulation and each rank's share.
struct JobRun {
  depgraph::JobGraph job;
  depgraph::SimResult sim;
  std::vector<depgraph::RankTime> ranks;
};

// A rank's trace on its own.
struct RankRow {
  double measured_us = 0;
  double alone_us = 0;
  int recorded_rank = -1;  // what the trace says it was, -1 when it does not
  int world_size = 0;
};

struct JobReport {
  std::vector<std::string> traces;   // one per rank, in rank order
  std::vector<std::string> scripts;  // empty: no prediction
  std::vector<RankRow> rows;
  JobRun baseline;
  std::unique_ptr<JobRun> predicted;
  std::vector<Prediction> predictions;  // per rank, what `predicted` couples
};

// Ranks are numbered in the order given. Errors are one line naming the
// trace(s) concerned.
absl::StatusOr<JobReport> SimulateJob(const std::vector<const LoadedTrace*>& ranks,
                                      const ScriptSpec& spec);

// Waits are per job step, as the step times are.
double PerStepUs(int64_t ns, const depgraph::JobGraph& job);
// A synchronous job steps at the pace of its slowest rank.
double JobStepNs(const std::vector<depgraph::RankTime>& ranks);
// That rank's steps (each rank's read in its baseline's frame for a
// prediction): the job's steps as `ranks` reports them; empty without ranks.
const std::vector<depgraph::StepTime>& SlowestRankSteps(
    const std::vector<depgraph::RankTime>& ranks);
// The rank last to arrive most often, or -1 when the ranks arrive together.
int Straggler(const std::vector<depgraph::RankTime>& ranks);

// `reverie ranks --json`.
std::string JobJson(const JobReport& r);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_JOB_H_
