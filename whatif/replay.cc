#include "whatif/replay.h"

#include "base/json_writer.h"
#include "whatif/deprecated_names.h"
#include "whatif/step_report.h"

namespace reverie::whatif {
namespace {


void WriteBreakdownJson(JsonWriter& w, const depgraph::GraphBreakdown& b) {
  w.BeginArray();
  for (const depgraph::StepBreakdown& it : b.steps) {
    w.BeginObject();
    w.Field("name", it.name);
    w.Key("measured");
    WriteTimeSplitJson(w, it.measured);
    w.Key("simulated");
    WriteTimeSplitJson(w, it.simulated);
    w.EndObject();
  }
  w.EndArray();
}

void WriteGroupsJson(JsonWriter& w, const std::vector<depgraph::GroupTime>& groups) {
  w.BeginArray();
  for (const depgraph::GroupTime& gt : groups) {
    w.BeginObject();
    w.Field("name", gt.name);
    w.Field("cpu_us", gt.cpu_ns / 1e3);
    w.Field("gpu_us", gt.gpu_ns / 1e3);
    w.EndObject();
  }
  w.EndArray();
}

void WriteCriticalPathJson(JsonWriter& w, const std::vector<depgraph::CriticalPath>& paths) {
  auto shares = [&](const std::vector<depgraph::PathShare>& v) {
    w.BeginArray();
    for (const depgraph::PathShare& s : v) {
      w.BeginObject();
      w.Field("name", s.name);
      w.Field("us", s.ns / 1e3);
      w.Field("pct", s.pct);
      w.EndObject();
    }
    w.EndArray();
  };
  w.BeginArray();
  for (const depgraph::CriticalPath& p : paths) {
    w.BeginObject();
    w.Field("name", p.name);
    w.Field("length_us", p.length_ns / 1e3);
    w.Field("tasks", static_cast<int64_t>(p.tasks.size()));
    w.Field("verdict", depgraph::BoundName(p.verdict));
    w.Key("by_resource_kind");
    shares(p.by_resource_kind);
    w.Key("by_phase");
    shares(p.by_phase);
    w.Key("by_layer");
    shares(p.by_layer);
    w.Key("by_kernel_class");
    shares(p.by_kernel_class);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

double UnexplainedPct(const depgraph::CriticalPath& p) {
  return p.length_ns > 0 ? 100.0 * static_cast<double>(p.unexplained_ns) / p.length_ns : 0;
}

ReplayResult Replay(const LoadedTrace& t) {
  ReplayResult r;
  r.report = depgraph::CompareWithMeasured(t.graph, t.baseline);
  r.breakdown = depgraph::ComputeBreakdown(t.graph, t.baseline);
  r.paths = depgraph::CriticalPaths(t.graph, t.baseline);
  return r;
}

std::string ReplayJson(const LoadedTrace& t, const ReplayResult& r, bool critical_path) {
  const depgraph::ReplayReport& rep = r.report;
  const depgraph::GraphBreakdown& b = r.breakdown;
  const std::vector<depgraph::CriticalPath>& paths = r.paths;
  const depgraph::BuildStats& stats = t.stats;
  JsonWriter w;
  w.BeginObject();
  w.Field("trace", t.path);
  w.Field("step_definition", kStepDefinition);
  const auto steps = [&] {
    w.BeginArray();
    for (size_t i = 0; i < rep.steps.size(); ++i) {
      const depgraph::StepError& e = rep.steps[i];
      w.BeginObject();
      w.Field("name", e.name);
      w.Field("counted", e.counted);
      w.Field("measured_us", e.measured_us);
      w.Field("simulated_us", e.simulated_us);
      w.Field("error_pct", e.error_pct);
      if (i < paths.size()) {
        w.Field("unexplained_waiting_us", paths[i].unexplained_ns / 1e3);
        w.Field("unexplained_waiting_pct", UnexplainedPct(paths[i]));
      }
      w.EndObject();
    }
    w.EndArray();
  };
  WriteStepsAndAlias(w, steps);
  w.Key("step").BeginObject();
  w.Field("measured_us", rep.measured_steps.mean_ns / 1e3);
  w.Field("simulated_us", rep.simulated_steps.mean_ns / 1e3);
  w.Key("measured_noise");
  WriteStepJson(w, rep.measured_steps);
  w.Key("simulated_noise");
  WriteStepJson(w, rep.simulated_steps);
  w.EndObject();
  w.Key("replay_error").BeginObject();
  w.Field("steps_compared", rep.compared);
  if (rep.compared > 0) {
    w.Field("mean_abs_pct", rep.mean_abs_error_pct);
    w.Field("max_abs_pct", rep.max_abs_error_pct);
  } else {
    w.Key("mean_abs_pct").Null();
    w.Key("max_abs_pct").Null();
  }
  w.EndObject();
  w.Key("breakdown").BeginObject();
  w.Key("steps");
  WriteBreakdownJson(w, b);
  w.Key("by_phase");
  WriteGroupsJson(w, b.by_phase);
  w.Key("by_layer");
  WriteGroupsJson(w, b.by_layer);
  w.EndObject();
  if (critical_path) {
    w.Key("critical_path");
    WriteCriticalPathJson(w, paths);
  }
  w.Key("build_counters").BeginObject();
  stats.ForEachNonZero([&](const CounterSpec& c, int64_t v) { w.Field(c.name, v); });
  w.EndObject();
  w.EndObject();
  return w.str();
}

}  // namespace reverie::whatif
