#include "whatif/trials.h"

#include <cstddef>
#include <exception>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/parallel.h"
#include "base/sv.h"
#include "base/text.h"

namespace reverie::whatif {

std::string_view TrialOutcomeName(TrialOutcome o) {
  switch (o) {
    case TrialOutcome::kApplied: return "applied";
    case TrialOutcome::kUnchanged: return "unchanged";
    case TrialOutcome::kRefused: return "refused";
    case TrialOutcome::kFailed: return "failed";
  }
  return "failed";
}

std::string RefusalReason(const absl::Status& s) {
  // reverie.refuse raises "file.lua:LINE: refused: REASON" with this code
  // (lua/lua_engine.cc); an invalid transformed graph shares the code but
  // not the word.
  if (s.code() != absl::StatusCode::kFailedPrecondition) return "";
  const std::string_view msg = StdSv(s.message());
  constexpr std::string_view kWord = "refused: ";
  const size_t at = msg.find(kWord);
  if (at == std::string_view::npos) return "";
  return FirstLine(msg.substr(at + kWord.size()));
}

namespace {

ScriptSpec SpecOf(const Trial& trial, const ScriptSpec& common) {
  ScriptSpec spec = common;
  spec.scripts = trial.scripts;
  spec.settings = trial.settings;
  spec.settings.insert(spec.settings.end(), common.settings.begin(), common.settings.end());
  spec.settings_for_several_runs = true;
  return spec;
}

absl::StatusOr<Prediction> PredictTrial(const LoadedTrace& base, const Trial& trial,
                                        const ScriptSpec& common) {
  ScriptSpec spec = SpecOf(trial, common);
  const size_t done = trial.after != nullptr ? trial.after->reports.size() : 0;
  if (done == 0 || done >= spec.scripts.size()) return Predict(base, spec);
  spec.scripts.erase(spec.scripts.begin(), spec.scripts.begin() + static_cast<ptrdiff_t>(done));
  return PredictAfter(base, *trial.after, spec);
}

TrialResult RunOne(const LoadedTrace& base, const Trial& trial, const ScriptSpec& common) {
  TrialResult r;
  r.baseline = depgraph::SummarizeSteps(base.baseline.steps);
  absl::StatusOr<Prediction> p = PredictTrial(base, trial, common);
  if (!p.ok()) {
    r.reason = RefusalReason(p.status());
    r.outcome = r.reason.empty() ? TrialOutcome::kFailed : TrialOutcome::kRefused;
    if (r.reason.empty()) r.reason = FirstLine(StdSv(p.status().message()));
    return r;
  }
  r.predicted = depgraph::SummarizeSteps(p->sim.steps);
  // A counted step that had work and is predicted empty is no answer to
  // rank (its mean would be a step that does nothing): a fault of the
  // scripts' model together, reported instead of ranked.
  for (size_t i = 0; i < p->sim.steps.size() && i < base.baseline.steps.size(); ++i) {
    const depgraph::StepTime& before = base.baseline.steps[i];
    const depgraph::StepTime& after = p->sim.steps[i];
    if (before.counted && before.duration_ns() > 0 && after.duration_ns() <= 0) {
      r.outcome = TrialOutcome::kFailed;
      r.reason = absl::StrCat("the prediction empties step ", i, " (",
                              before.duration_ns() / 1000, " us before, none after): not ranked; "
                              "`reverie predict` with the same scripts shows it");
      return r;
    }
  }
  r.speedup = r.predicted.mean_ns > 0 ? r.baseline.mean_ns / r.predicted.mean_ns : 0;
  r.work_factor = p->work_factor;
  r.throughput_speedup = r.work_factor * r.speedup;
  r.samples_per_step = p->samples_per_step;
  r.host_sensitivity_pct = p->host_sensitivity_pct;
  r.first_step_share = depgraph::FirstStepShare(base.baseline.steps, p->sim.steps);
  r.used_settings = p->used_settings;
  r.reports = std::move(p->reports);
  // Unchanged when no script changed anything because each said so.
  const bool all_unchanged =
      !r.reports.empty() &&
      std::all_of(r.reports.begin(), r.reports.end(), [](const lua::ScriptReport& s) {
        return s.outcome == lua::ScriptOutcome::kUnchanged;
      });
  r.outcome = all_unchanged ? TrialOutcome::kUnchanged : TrialOutcome::kApplied;
  if (all_unchanged) {
    for (const lua::ScriptReport& s : r.reports) {
      if (!r.reason.empty()) r.reason += "; ";
      r.reason += s.outcome_reason;
    }
  }
  return r;
}

}  // namespace

int TrialThreads(int threads, size_t trials) { return WorkerCount(threads, trials); }

std::vector<std::shared_ptr<const Prediction>> PredictTrials(const LoadedTrace& base,
                                                             const std::vector<Trial>& trials,
                                                             const ScriptSpec& common,
                                                             int threads) {
  std::vector<std::shared_ptr<const Prediction>> out(trials.size());
  ParallelFor(trials.size(), threads, [&](size_t i) {
    try {
      absl::StatusOr<Prediction> p = Predict(base, SpecOf(trials[i], common));
      if (!p.ok() || p->schedule_kind != transforms::ScheduleChoice::Kind::kEarliestReady) return;
      PrepareToShare(p->graph);  // continued by several trials at once
      out[i] = std::make_shared<const Prediction>(*std::move(p));
    } catch (const std::exception&) {
      out[i] = nullptr;  // its continuations run all their scripts
    }
  });
  return out;
}

std::vector<TrialResult> RunTrials(const LoadedTrace& base, const std::vector<Trial>& trials,
                                   const ScriptSpec& common, int threads) {
  std::vector<TrialResult> out(trials.size());
  ParallelFor(trials.size(), threads, [&](size_t i) {
    // An exception must not leave a worker thread (std::terminate): what a
    // library throws (std::bad_alloc) fails that trial alone.
    try {
      out[i] = RunOne(base, trials[i], common);
    } catch (const std::exception& e) {
      out[i] = TrialResult();
      out[i].reason = FirstLine(std::string("internal error: ") + e.what());
    }
  });
  return out;
}

}  // namespace reverie::whatif
