#include "whatif/job.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_writer.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "base/text.h"
#include "whatif/deprecated_names.h"

namespace reverie::whatif {
namespace {

using depgraph::JobGraph;
using depgraph::RankTime;
using depgraph::SimResult;

absl::StatusOr<JobRun> RunJob(const std::vector<depgraph::RankInput>& inputs,
                              const depgraph::SimOptions& options = {},
                              const JobRun* baseline = nullptr) {
  REVERIE_ASSIGN_OR_RETURN(JobGraph job, depgraph::CoupleRanks(inputs));
  JobRun run{std::move(job), {}, {}};
  REVERIE_ASSIGN_OR_RETURN(SimResult sim, depgraph::Simulate(run.job.graph, options));
  run.sim = std::move(sim);
  run.ranks = depgraph::AnalyzeJob(run.job, run.sim, baseline ? &baseline->ranks : nullptr);
  return run;
}

// Errors from coupling name the traces already; a simulation error names the job.
absl::Status JobError(const std::vector<std::string>& traces, const absl::Status& s) {
  std::string msg = FirstLine(StdSv(s.message()));
  for (const std::string& t : traces) {
    if (msg.find(t) != std::string::npos) return absl::Status(s.code(), msg);
  }
  return absl::Status(s.code(), absl::StrCat(absl::StrJoin(traces, ", "), ": ", msg));
}

// Each rank transformed alone, then the job coupled again.
absl::Status Predicted(const std::vector<const LoadedTrace*>& ranks, const ScriptSpec& spec,
                       JobReport* r) {
  std::vector<depgraph::RankInput> after;
  for (size_t i = 0; i < ranks.size(); ++i) {
    absl::StatusOr<Prediction> p = Predict(*ranks[i], spec);
    if (!p.ok()) {
      return absl::Status(p.status().code(), absl::StrCat(r->traces[i], ": ", p.status().message()));
    }
    r->predictions.push_back(std::move(*p));
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    after.push_back({&r->predictions[i].graph, r->traces[i], &r->predictions[i].sim});
  }
  // The scripts' schedule for channels (P3's priorities) holds for the job
  // too; a Lua key function lived in the rank's Lua state, gone by now.
  using Kind = transforms::ScheduleChoice::Kind;
  const Kind kind = r->predictions[0].schedule_kind;
  if (kind == Kind::kCustom) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ranks: ", spec.scripts.back(),
        ": a schedule key function in Lua cannot order the job's channels; use "
        "graph:set_policy(\"priority\") with task priorities instead"));
  }
  static const depgraph::PriorityPolicy kPriority;
  depgraph::SimOptions options;
  if (kind == Kind::kPriority) options.policy = &kPriority;
  absl::StatusOr<JobRun> p = RunJob(after, options, &r->baseline);
  if (!p.ok()) {
    return JobError(r->traces, absl::Status(p.status().code(),
                                            absl::StrCat("after the scripts: ", p.status().message())));
  }
  r->predicted = std::make_unique<JobRun>(std::move(*p));
  return absl::OkStatus();
}

void WriteRanksJson(JsonWriter& w, const JobRun& run) {
  w.BeginArray();
  for (int r = 0; r < run.job.ranks; ++r) {
    const RankTime& t = run.ranks[r];
    w.BeginObject();
    w.Field("rank", r);
    w.Field("job_us", t.mean_step_ns / 1e3);
    w.Field("waited_us_per_step", PerStepUs(t.wait_ns, run.job));
    w.Field("waited_us_per_iteration", PerStepUs(t.wait_ns, run.job));  // deprecated alias
    w.Field("last_arrivals", t.last_arrivals);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

namespace {

// One trace per rank (issue 29, D29): the same trace given twice, or two
// traces that record the same rank of the job, would be coupled with
// themselves and reported as a job of more ranks than ran, with no sign of
// it. Refused rather than warned: every figure of such a job is wrong.
absl::Status CheckDistinctRanks(const std::vector<const LoadedTrace*>& ranks) {
  for (size_t j = 1; j < ranks.size(); ++j) {
    for (size_t i = 0; i < j; ++i) {
      const LoadedTrace& a = *ranks[i];
      const LoadedTrace& b = *ranks[j];
      std::error_code ec;
      if (ranks[i] == ranks[j] || a.path == b.path || std::filesystem::equivalent(a.path, b.path, ec)) {
        return absl::InvalidArgumentError(absl::StrCat(
            b.path, ": given for ranks ", i, " and ", j, "; a job needs a different trace for each rank"));
      }
      const auto& da = a.trace.header().distributed();
      const auto& db = b.trace.header().distributed();
      if (a.trace.header().has_distributed() && b.trace.header().has_distributed() &&
          da.world_size() > 1 && da.world_size() == db.world_size() && da.rank() == db.rank()) {
        return absl::InvalidArgumentError(absl::StrCat(
            a.path, " and ", b.path, " both record rank ", da.rank(), " of ", da.world_size(),
            "; a job needs one trace per rank"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<JobReport> SimulateJob(const std::vector<const LoadedTrace*>& ranks,
                                      const ScriptSpec& spec) {
  REVERIE_RETURN_IF_ERROR(CheckDistinctRanks(ranks));
  JobReport r;
  r.scripts = spec.scripts;
  std::vector<depgraph::RankInput> inputs;
  for (const LoadedTrace* l : ranks) {
    r.traces.push_back(l->path);
    RankRow row{depgraph::MeanStepNs(depgraph::MeasuredSteps(l->graph)) / 1e3,
                depgraph::MeanStepNs(l->baseline.steps) / 1e3};
    if (l->trace.header().has_distributed()) {
      row.recorded_rank = l->trace.header().distributed().rank();
      row.world_size = l->trace.header().distributed().world_size();
    }
    r.rows.push_back(row);
    inputs.push_back({&l->graph, l->path, &l->baseline});
  }
  absl::StatusOr<JobRun> base = RunJob(inputs);
  if (!base.ok()) return JobError(r.traces, base.status());
  r.baseline = std::move(*base);
  if (!spec.scripts.empty()) {
    REVERIE_RETURN_IF_ERROR(Predicted(ranks, spec, &r));
  }
  return r;
}

double PerStepUs(int64_t ns, const JobGraph& job) {
  return static_cast<double>(ns) / 1e3 / std::max(1, job.stats.steps);
}

// (The span over all ranks' tasks would add the ranks' skew at the step's
// start and end.)
double JobStepNs(const std::vector<RankTime>& ranks) {
  double slowest = 0;
  for (const RankTime& r : ranks) slowest = std::max(slowest, r.mean_step_ns);
  return slowest;
}

const std::vector<depgraph::StepTime>& SlowestRankSteps(const std::vector<RankTime>& ranks) {
  static const std::vector<depgraph::StepTime> kNone;
  const RankTime* slowest = nullptr;
  for (const RankTime& r : ranks) {
    if (slowest == nullptr || r.mean_step_ns > slowest->mean_step_ns) slowest = &r;
  }
  return slowest != nullptr ? slowest->steps : kNone;
}

int Straggler(const std::vector<RankTime>& ranks) {
  int best = -1;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].last_arrivals > 0 && (best < 0 || ranks[r].last_arrivals > ranks[best].last_arrivals)) {
      best = static_cast<int>(r);
    }
  }
  return best;
}

std::string JobJson(const JobReport& r) {
  const JobRun& base = r.baseline;
  const JobRun* predicted = r.predicted.get();
  JsonWriter w;
  w.BeginObject();
  w.Field("ranks", base.job.ranks);
  w.Field("steps", base.job.stats.steps);
  w.Field(kDeprecatedStepsKey, base.job.stats.steps);  // deprecated alias
  w.Key("collectives").BeginObject();
  for (int c = 0; c < depgraph::kCollectiveCount; ++c) {
    const int64_t n = base.job.stats.collectives_by_type[c];
    if (n > 0) w.Field(CollectiveName(depgraph::Collective(c)), n);
  }
  w.EndObject();
  w.Field("untagged_tasks", base.job.stats.untagged_tasks);
  w.Field("measured_checked", base.job.stats.measured_checked);
  w.Field("measured_misaligned", base.job.stats.measured_misaligned);
  w.Key("traces").BeginArray();
  for (int i = 0; i < base.job.ranks; ++i) {
    w.BeginObject();
    w.Field("path", r.traces[i]);
    w.Field("measured_us", r.rows[i].measured_us);
    w.Field("alone_us", r.rows[i].alone_us);
    w.Field("recorded_rank", r.rows[i].recorded_rank);
    w.EndObject();
  }
  w.EndArray();
  w.Key("baseline").BeginObject();
  w.Field("job_step_us", JobStepNs(base.ranks) / 1e3);
  w.Field("straggler", Straggler(base.ranks));
  w.Key("per_rank");
  WriteRanksJson(w, base);
  w.EndObject();
  if (predicted != nullptr) {
    w.Key("predicted").BeginObject();
    w.Key("scripts").BeginArray();
    for (const std::string& s : r.scripts) w.String(s);
    w.EndArray();
    w.Field("job_step_us", JobStepNs(predicted->ranks) / 1e3);
    w.Field("straggler", Straggler(predicted->ranks));
    w.Key("per_rank");
    WriteRanksJson(w, *predicted);
    w.EndObject();
  }
  w.EndObject();
  return w.str();
}

}  // namespace reverie::whatif
