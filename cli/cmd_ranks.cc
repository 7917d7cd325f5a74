// `reverie ranks TRACE TRACE [TRACE ...] [--script FILE ...] [--json]`: the
// ranks of one distributed job simulated together (depgraph/ranks.h). Each
// rank's trace alone replays its collectives with the waits it recorded; the
// coupled job re-derives the waits from when each rank gets to each
// collective. It shows per rank the measured step, the step alone and in the
// job, how long the rank waited for its peers and how often it was the last
// to arrive; with scripts, each rank is transformed alone and the predicted
// ranks are coupled again, so a what-if on a job accounts for its straggler.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/load.h"
#include "cli/paths.h"
#include "cli/script_args.h"
#include "depgraph/ranks.h"
#include "export/timeline.h"
#include "whatif/job.h"

namespace reverie::cli {
namespace {

using depgraph::JobGraph;
using depgraph::RankTime;
using whatif::JobStepNs;
using whatif::PerStepUs;
using whatif::Straggler;

struct Options {
  std::vector<std::string> traces;
  ScriptArgs script;
  bool json = false;
  std::string timeline;
};

std::string CollectiveCounts(const JobGraph& job) {
  std::vector<std::string> parts;
  for (int c = 0; c < depgraph::kCollectiveCount; ++c) {
    const int64_t n = job.stats.collectives_by_type[c];
    if (n > 0) absl::StrAppend(&parts.emplace_back(), Sv(CollectiveName(depgraph::Collective(c))), " ", n);
  }
  return absl::StrJoin(parts, ", ");
}

// Ranks are numbered by argument order; the trace's own rank, where it
// records one, is shown beside its path.
std::string TraceColumn(const std::string& path, const whatif::RankRow& row) {
  if (row.recorded_rank < 0) return path;
  return absl::StrCat(path, " (rank ", row.recorded_rank, " of ", row.world_size, ")");
}

void PrintText(const Options& opt, const std::vector<whatif::RankRow>& rows,
               const whatif::JobRun& base, const whatif::JobRun* predicted) {
  const JobGraph& job = base.job;
  absl::PrintF("job: %d ranks; %lld collectives matched across them (%s); %d steps\n\n",
               job.ranks, job.stats.collectives, CollectiveCounts(job).c_str(),
               job.stats.steps);
  std::printf("%-4s %13s %13s %13s %8s %11s %9s  %s\n", "rank", "measured_us", "alone_us",
              "job_us", "error", "waited_us", "last_in", "trace");
  for (int r = 0; r < job.ranks; ++r) {
    const RankTime& t = base.ranks[r];
    const double job_us = t.mean_step_ns / 1e3;
    const double err = rows[r].measured_us > 0 ? (job_us / rows[r].measured_us - 1) * 100 : 0;
    absl::PrintF("%-4d %13.1f %13.1f %13.1f %+7.2f%% %11.1f %4d/%-4lld  %s\n", r, rows[r].measured_us,
                 rows[r].alone_us, job_us, err, PerStepUs(t.wait_ns, job), t.last_arrivals,
                 job.stats.collectives,
                 TraceColumn(opt.traces[r], rows[r]).c_str());
  }
  std::printf("\njob step (simulated; the slowest rank's): %.1f us\n", JobStepNs(base.ranks) / 1e3);
  const int s = Straggler(base.ranks);
  if (s < 0) {
    std::printf("straggler: none (the ranks reach every collective together)\n");
  } else {
    absl::PrintF("straggler: rank %d, last to arrive at %d of %lld collectives\n", s,
                 base.ranks[s].last_arrivals, job.stats.collectives);
  }
  if (job.stats.measured_misaligned > 0) {
    absl::PrintF("warning: %lld of %lld matched collectives did not end together in the measured "
                 "traces (beyond a constant clock offset): the traces may have dropped or cut "
                 "collectives, and the matching may be off\n",
                 job.stats.measured_misaligned,
                 job.stats.measured_checked);
  }
  if (job.stats.untagged_tasks > 0) {
    absl::PrintF("note: %lld tasks of steps beyond the %d all ranks have are not counted in "
                 "steps\n", job.stats.untagged_tasks, job.stats.steps);
  }
  if (predicted == nullptr) return;
  std::printf("\npredicted with %s\n", absl::StrJoin(opt.script.scripts, " + ").c_str());
  std::printf("%-4s %13s %13s %9s %11s\n", "rank", "job_us", "predicted_us", "speedup", "waited_us");
  for (int r = 0; r < job.ranks; ++r) {
    const double b = base.ranks[r].mean_step_ns, p = predicted->ranks[r].mean_step_ns;
    std::printf("%-4d %13.1f %13.1f %8.3fx %11.1f\n", r, b / 1e3, p / 1e3, p > 0 ? b / p : 0,
                PerStepUs(predicted->ranks[r].wait_ns, predicted->job));
  }
  const double b = JobStepNs(base.ranks), p = JobStepNs(predicted->ranks);
  std::printf("\njob step: baseline %.1f us, predicted %.1f us, speedup %.3fx\n", b / 1e3, p / 1e3,
              p > 0 ? b / p : 0);
}

absl::Status RunRanks(const Options& opt) {
  if (opt.traces.size() < 2) {
    return UsageError("give the traces of at least two ranks of one job");
  }
  std::vector<std::string> inputs = opt.traces;
  inputs.insert(inputs.end(), opt.script.scripts.begin(), opt.script.scripts.end());
  REVERIE_RETURN_IF_ERROR(CheckOutputs({opt.timeline}, inputs));

  REVERIE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<whatif::LoadedTrace>> loaded,
                           LoadAllForCli(opt.traces));
  const std::vector<const whatif::LoadedTrace*> ranks = Pointers(loaded);
  REVERIE_ASSIGN_OR_RETURN(whatif::JobReport job, whatif::SimulateJob(ranks, opt.script));
  const whatif::JobRun* base = &job.baseline;
  const whatif::JobRun* predicted = job.predicted.get();

  if (!opt.timeline.empty()) {
    // The job's steps as printed: its slowest rank's (the whole job's span
    // per step would be none of the figures above).
    std::vector<exporter::TimelineRun> runs = {{"job (simulated)", &base->job.graph, &base->sim,
                                                &whatif::SlowestRankSteps(base->ranks)}};
    if (predicted) {
      runs.push_back({"job (predicted)", &predicted->job.graph, &predicted->sim,
                      &whatif::SlowestRankSteps(predicted->ranks)});
    }
    exporter::TimelineStats stats;
    REVERIE_RETURN_IF_ERROR(exporter::WriteTimeline(opt.timeline, runs, &stats));
    absl::FPrintF(stderr, "timeline: %s (%lld events)\n", opt.timeline.c_str(),
                  stats.events);
  }
  if (opt.json) {
    std::printf("%s\n", whatif::JobJson(job).c_str());
  } else {
    PrintText(opt, job.rows, *base, predicted);
  }
  return absl::OkStatus();
}

RunFn SetupRanks(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArgs(app, "TRACE", &o->traces, "the traces of the ranks of one job (two or more)");
  AddScriptFlags(app, &o->script);
  app.add_flag("--json", o->json, "machine-readable output");
  AddTimelineFlag(app, &o->timeline);
  return [o] { return RunRanks(*o); };
}

}  // namespace

REVERIE_COMMAND(ranks, "ranks",
                "simulate the ranks of one distributed job together: who waits for whom at each "
                "collective, and what scripts change for the whole job",
                SetupRanks);

}  // namespace reverie::cli
