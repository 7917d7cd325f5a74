#include "whatif/prediction_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/json_writer.h"
#include "depgraph/critical_path.h"
#include "depgraph/host_speed.h"
#include "whatif/deprecated_names.h"
#include "whatif/step_report.h"

namespace reverie::whatif {
namespace {


// Busy time per group and per step, baseline vs predicted, keeping the
// groups' order of first appearance.
std::vector<GroupDelta> Deltas(const std::vector<depgraph::GroupTime>& base,
                               const std::vector<depgraph::GroupTime>& pred, double steps) {
  std::vector<GroupDelta> out;
  std::map<std::string, size_t> index;
  auto slot = [&](const std::string& name) -> GroupDelta& {
    auto [it, fresh] = index.emplace(name, out.size());
    if (fresh) out.push_back({name});
    return out[it->second];
  };
  for (const depgraph::GroupTime& g : base) {
    GroupDelta& d = slot(g.name);
    d.base_cpu_us = g.cpu_ns / 1e3 / steps;
    d.base_gpu_us = g.gpu_ns / 1e3 / steps;
  }
  for (const depgraph::GroupTime& g : pred) {
    GroupDelta& d = slot(g.name);
    d.pred_cpu_us = g.cpu_ns / 1e3 / steps;
    d.pred_gpu_us = g.gpu_ns / 1e3 / steps;
  }
  return out;
}

std::vector<GroupDelta> TopByDelta(std::vector<GroupDelta> v, int n) {
  std::stable_sort(v.begin(), v.end(), [](const GroupDelta& a, const GroupDelta& b) {
    return std::fabs(a.delta_us()) > std::fabs(b.delta_us());
  });
  if (static_cast<int>(v.size()) > n) v.resize(n);
  return v;
}

// Mean simulated time split over the counted steps.
depgraph::TimeSplit MeanSplit(const depgraph::GraphBreakdown& b) {
  depgraph::TimeSplit m;
  int64_t n = 0;
  for (const depgraph::StepBreakdown& it : b.steps) {
    if (!it.counted) continue;
    ++n;
    m.cpu_only_ns += it.simulated.cpu_only_ns;
    m.gpu_only_ns += it.simulated.gpu_only_ns;
    m.overlap_ns += it.simulated.overlap_ns;
    m.idle_ns += it.simulated.idle_ns;
  }
  if (n == 0) return m;
  m.cpu_only_ns /= n;
  m.gpu_only_ns /= n;
  m.overlap_ns /= n;
  m.idle_ns /= n;
  return m;
}

std::vector<double> StepTimesUs(const depgraph::SimResult& r) {
  std::vector<double> out;
  for (const depgraph::StepTime& it : r.steps) out.push_back(it.duration_ns() / 1e3);
  return out;
}

void WriteChanges(JsonWriter& w, const transforms::ChangeSummary& c) {
  w.BeginObject();
  w.Field("added", c.added);
  w.Field("removed", c.removed);
  w.Field("modified", c.modified);
  w.Field("edges_added", c.edges_added);
  w.Field("edges_removed", c.edges_removed);
  w.Field("resources_added", c.resources_added);
  w.EndObject();
}

void WriteGroups(JsonWriter& w, const std::vector<GroupDelta>& v) {
  w.BeginArray();
  for (const GroupDelta& d : v) {
    w.BeginObject();
    w.Field("name", d.name);
    w.Field("baseline_cpu_us", d.base_cpu_us);
    w.Field("baseline_gpu_us", d.base_gpu_us);
    w.Field("predicted_cpu_us", d.pred_cpu_us);
    w.Field("predicted_gpu_us", d.pred_gpu_us);
    w.Field("delta_us", d.delta_us());
    w.EndObject();
  }
  w.EndArray();
}

// Each script's name, outcome, parameters as typed, changes and log.
void WriteScripts(JsonWriter& w, const std::vector<lua::ScriptReport>& reports) {
  w.BeginArray();
  for (const lua::ScriptReport& s : reports) {
    w.BeginObject();
    w.Field("name", s.script.display_name);
    w.Field("path", s.script.path);
    w.Field("outcome", lua::ScriptOutcomeName(s.outcome));
    if (!s.outcome_reason.empty()) w.Field("reason", s.outcome_reason);
    w.Key("params").BeginObject();
    for (const lua::ParamValue& p : s.params) {
      w.Key(p.name);
      if (p.type == "number") {
        double v = 0;
        if (absl::SimpleAtod(p.value_text, &v)) {
          w.Double(v);
        } else {
          w.String(p.value_text);
        }
      } else if (p.type == "boolean") {
        w.Bool(p.value_text == "true" || p.value_text == "1" || p.value_text == "yes" ||
               p.value_text == "on");
      } else {
        w.String(p.value_text);
      }
    }
    w.EndObject();
    w.Key("changes");
    WriteChanges(w, s.changes);
    w.Key("log").BeginArray();
    for (const std::string& line : s.log) w.String(line);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string PredictionJson(const PredictionReport& r) {
  const depgraph::StepStats bs = depgraph::SummarizeSteps(r.base->steps);
  const depgraph::StepStats ps = depgraph::SummarizeSteps(r.pred->steps);
  const double base_us = bs.mean_ns / 1e3;
  const double pred_us = ps.mean_ns / 1e3;
  JsonWriter w;
  w.BeginObject();
  w.Field("trace", r.trace_path);
  w.Key("scripts");
  WriteScripts(w, r.prediction->reports);
  w.Field("schedule_policy", r.prediction->schedule_description);
  w.Field("step_definition", kStepDefinition);
  w.Field("baseline_us", base_us);
  w.Field("predicted_us", pred_us);
  w.Field("speedup", pred_us > 0 ? base_us / pred_us : 0.0);
  // Where a script changed the work per step (a batch size), the step time
  // is not the speed: throughput is work per second.
  w.Field("work_per_step", r.prediction->work_factor);
  w.Field("throughput_speedup",
          pred_us > 0 ? r.prediction->work_factor * base_us / pred_us : 0.0);
  if (r.prediction->samples_per_step > 0 && base_us > 0 && pred_us > 0) {
    const double n = static_cast<double>(r.prediction->samples_per_step);
    w.Field("baseline_samples_per_s", n / base_us * 1e6);
    w.Field("predicted_samples_per_s", n * r.prediction->work_factor / pred_us * 1e6);
  }
  // The whole simulated run, first task to last: the steps' context (a
  // step can only be read against the run it sits in).
  w.Field("baseline_run_us", r.base->span_ns() / 1e3);
  w.Field("predicted_run_us", r.pred->span_ns() / 1e3);
  w.Field("baseline_unexplained_pct", r.base_unexplained * 100);
  // How much of the change the first counted step holds (null: fewer than
  // three counted steps, or no change): near 1, a one-time shift.
  w.Key("first_step_share");
  if (r.first_step_share.has_value()) {
    w.Double(*r.first_step_share);
  } else {
    w.Null();
  }
  if (r.base_host_sensitivity_pct >= 0 && r.pred_host_sensitivity_pct >= 0) {
    // What a 10% slower host would do to each step: how far the answer
    // rests on the speed of a host the trace shows in one process only.
    w.Key("host_sensitivity").BeginObject();
    w.Field("cpu_slower_pct", depgraph::kHostProbe * 100);
    w.Field("baseline_step_pct", r.base_host_sensitivity_pct);
    w.Field("predicted_step_pct", r.pred_host_sensitivity_pct);
    w.Field("predicted_host_bound", r.pred_host_sensitivity_pct >= depgraph::kHostBoundPct);
    w.EndObject();
  }
  w.Key("memory");
  WriteMemoryFitJson(w, r.memory);
  w.Key("baseline_noise");
  WriteStepJson(w, bs);
  w.Key("predicted_noise");
  WriteStepJson(w, ps);
  w.Key("changes");
  WriteChanges(w, r.prediction->changes);
  const auto steps = [&] {
    w.BeginArray();
    const size_t n = std::min(r.base->steps.size(), r.pred->steps.size());
    for (size_t i = 0; i < n; ++i) {
      w.BeginObject();
      w.Field("name", StepName(*r.base_graph, r.base->steps[i], i));
      w.Field("counted", r.base->steps[i].counted);
      w.Field("baseline_us", r.base_iter_us[i]);
      w.Field("predicted_us", r.pred_iter_us[i]);
      w.EndObject();
    }
    w.EndArray();
  };
  WriteStepsAndAlias(w, steps);
  w.Key("time_split").BeginObject();
  w.Key("baseline");
  WriteTimeSplitJson(w, r.base_split);
  w.Key("predicted");
  WriteTimeSplitJson(w, r.pred_split);
  w.EndObject();
  w.Key("phases");
  WriteGroups(w, r.phases);
  w.Key("layers");
  WriteGroups(w, r.layers);
  w.EndObject();
  return w.str();
}

PredictionReport SummarizePrediction(const LoadedTrace& base, const Prediction& prediction,
                                     int top) {
  PredictionReport r;
  r.trace_path = base.path;
  r.base_graph = &base.graph;
  r.pred_graph = &prediction.graph;
  r.base = &base.baseline;
  r.pred = &prediction.sim;
  r.prediction = &prediction;
  const depgraph::GraphBreakdown bb = depgraph::ComputeBreakdown(base.graph, base.baseline);
  const depgraph::GraphBreakdown pb = depgraph::ComputeBreakdown(prediction.graph, prediction.sim);
  const double iters = static_cast<double>(std::max<size_t>(1, base.baseline.steps.size()));
  r.base_split = MeanSplit(bb);
  r.pred_split = MeanSplit(pb);
  r.base_iter_us = StepTimesUs(base.baseline);
  r.base_unexplained = depgraph::UnexplainedShare(base.graph, base.baseline);
  r.base_host_sensitivity_pct = base.host_sensitivity_pct;
  r.pred_host_sensitivity_pct = prediction.host_sensitivity_pct;
  r.pred_iter_us = StepTimesUs(prediction.sim);
  r.first_step_share = depgraph::FirstStepShare(base.baseline.steps, prediction.sim.steps);
  r.phases = Deltas(bb.by_phase, pb.by_phase, iters);
  r.layers = TopByDelta(Deltas(bb.by_layer, pb.by_layer, iters), top);
  r.memory = FitMemory(base.graph, base.baseline, prediction.graph, prediction.sim, base.model.devices,
                       prediction.runs_on);
  return r;
}

std::string UnexplainedWarning(double share) {
  if (share <= kUnexplainedWarning) return "";
  return absl::StrFormat(
      "warning: %.0f%% of the baseline's critical path is waiting the trace does not explain "
      "(kept as measured; no script can move it), so the prediction changes at most the rest",
      share * 100);
}

std::string FirstStepNote(const PredictionReport& r) {
  if (!r.first_step_share.has_value() || *r.first_step_share < depgraph::kFirstStepNote) {
    return "";
  }
  const size_t n = std::min(r.base->steps.size(), r.pred->steps.size());
  size_t first = n;
  double rest = 0;
  int later = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!r.base->steps[i].counted) continue;
    const double d =
        static_cast<double>(r.pred->steps[i].duration_ns() - r.base->steps[i].duration_ns());
    if (first == n) {
      first = i;
    } else {
      rest += d;
      ++later;
    }
  }
  if (first == n || later == 0) return "";
  const double d_first =
      static_cast<double>(r.pred->steps[first].duration_ns() - r.base->steps[first].duration_ns());
  return absl::StrFormat(
      "note: %.0f%% of what the steps moved is in the first step (%s, %+.1f us); the %d later "
      "steps moved %+.1f us on average: read it as a one-time %s at the start of the profiled "
      "window (a longer run spreads it thinner), not a %s per step",
      std::min(1.0, *r.first_step_share) * 100,
      StepName(*r.base_graph, r.base->steps[first], first), d_first / 1e3, later,
      rest / later / 1e3, d_first > 0 ? "cost" : "gain", d_first > 0 ? "cost" : "gain");
}

std::string HostSensitivityText(const PredictionReport& r) {
  if (r.base_host_sensitivity_pct < 0 || r.pred_host_sensitivity_pct < 0) return "";
  std::string out = absl::StrFormat(
      "host speed            with the CPU %.0f%% slower: baseline step %+.1f%%, predicted %+.1f%%",
      depgraph::kHostProbe * 100, r.base_host_sensitivity_pct, r.pred_host_sensitivity_pct);
  if (const std::string bound = depgraph::HostBoundPhrase(r.pred_host_sensitivity_pct);
      !bound.empty()) {
    absl::StrAppend(&out, "\nnote: ", bound,
                    ": it moves with the host's speed, which one trace shows for its own process "
                    "only and which differs between processes and machines (docs/ACCURACY.md, "
                    "\"The hosts' speed\")");
  }
  return out;
}

std::string StepName(const depgraph::Graph& g, const depgraph::StepTime& it, size_t i) {
  if (it.step >= 0 && static_cast<size_t>(it.step) < g.step_count()) {
    return g.step_info(it.step).name;
  }
  return "step " + std::to_string(i);
}

}  // namespace reverie::whatif
