#include "whatif/info.h"

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "base/json_writer.h"
#include "base/parallel.h"
#include "depgraph/model_info.h"
#include "whatif/deprecated_names.h"
#include "whatif/facts_view.h"
#include "whatif/memory_view.h"
#include "whatif/step_report.h"

namespace reverie::whatif {
namespace {


double Us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

void WriteCpuSplit(JsonWriter& w, const depgraph::CpuSplit& c) {
  w.Field("api_us", Us(c.api_ns)).Field("op_us", Us(c.op_ns));
  w.Field("framework_us", Us(c.framework_ns)).Field("untraced_gap_us", Us(c.untraced_ns));
}

void WriteGraphJson(JsonWriter& w, const GraphView& v) {
  w.Key("graph").BeginObject();
  w.Field("built", v.built);
  if (!v.built) {
    w.Field("reason", v.why_not);
    w.EndObject();
    return;
  }
  w.Field("tasks", static_cast<int64_t>(v.tasks)).Field("edges", static_cast<int64_t>(v.edges));
  w.Key("counters").BeginObject();
  v.stats.ForEachNonZero([&](const CounterSpec& c, int64_t n) { w.Field(c.name, n); });
  w.EndObject();
  w.Field("step_definition", kStepDefinition);
  w.Key("step");
  WriteStepJson(w, v.step_stats);
  w.Key("steps").BeginArray();
  for (size_t i = 0; i < v.steps.size(); ++i) {
    w.BeginObject().Field("name", v.step_names[i]).Field("counted", v.steps[i].counted);
    w.Field("step_us", Us(v.steps[i].duration_ns()));
    if (i < v.cpu.by_step.size()) {
      w.Key("cpu").BeginObject();
      WriteCpuSplit(w, v.cpu.by_step[i]);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Field("cpu_threads_without_op_spans", v.cpu.threads_without_ops);
  w.Key("breakdown").BeginArray();
  for (const depgraph::StepBreakdown& it : v.breakdown.steps) {
    w.BeginObject().Field("name", it.name);
    w.Key("measured");
    WriteTimeSplitJson(w, it.measured);
    w.EndObject();
  }
  w.EndArray();
  w.Key("phases").BeginArray();
  for (const depgraph::GroupTime& g : v.breakdown.by_phase) {
    w.BeginObject().Field("phase", g.name).Field("cpu_us", Us(g.cpu_ns));
    w.Field("gpu_us", Us(g.gpu_ns)).EndObject();
  }
  w.EndArray();
  if (!v.memory.empty()) {
    w.Key("memory");
    WriteMemoryJson(w, v.memory, v.step_names, v.steps);
  }
  w.EndObject();
}

}  // namespace

GraphView AnalyzeGraph(const Trace& trace) {
  GraphView v;
  absl::StatusOr<depgraph::Graph> graph = depgraph::BuildGraph(trace, {}, &v.stats);
  if (!graph.ok()) {
    v.why_not = std::string(graph.status().message());
    return v;
  }
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(*graph);
  if (!sim.ok()) {
    v.why_not = std::string(sim.status().message());
    return v;
  }
  return ViewOf(trace, *graph, *sim, v.stats);
}

GraphView ViewOf(const Trace& trace, const depgraph::Graph& graph, const depgraph::SimResult& sim,
                 const depgraph::BuildStats& stats) {
  GraphView v;
  v.stats = stats;
  v.built = true;
  v.tasks = graph.live_task_count();
  v.edges = graph.live_edge_count();
  // The analyses only read the graph, in two groups on two cores (half of
  // `info`'s time after the graph is built; docs/PERFORMANCE.md). The
  // graph's lazy caches (the per-name kernel classes and math, the
  // adjacency) are filled by the first group alone: the second reads
  // columns only, so the two never write the same cache.
  ParallelForRethrowing(2, 0, [&](size_t group) {
    if (group == 0) {
      v.facts = depgraph::DetectFacts(trace, graph);
      v.hardware = AnalyzeHardware(graph, depgraph::ModelInfoFromTrace(trace).devices);
      return;
    }
    v.breakdown = depgraph::ComputeBreakdown(graph, sim);
    v.steps = depgraph::MeasuredSteps(graph);
    v.step_stats = depgraph::SummarizeSteps(v.steps);
    for (size_t i = 0; i < v.steps.size(); ++i) {
      v.step_names.push_back(i < graph.step_count() ? graph.step_info(static_cast<int32_t>(i)).name
                                                    : "whole trace");
    }
    const depgraph::TaskTimes m = depgraph::MeasuredTimes(graph);
    v.cpu = depgraph::ComputeCpuTime(graph, m.start, m.end);
    v.memory = depgraph::ComputeMemory(graph, v.steps);
  });
  return v;
}

std::string InfoJson(const Trace& trace, const TraceSummary& s, const GraphView& g) {
  JsonWriter w;
  w.BeginObject();
  w.Field("producer", trace.header().producer());
  w.Key("tasks").BeginObject();
  w.Field("cpu_api", s.runtime_calls + s.driver_calls);
  w.Field("runtime", s.runtime_calls);
  w.Field("driver", s.driver_calls);
  w.Field("kernel", s.kernels);
  w.Field("kernel_with_geometry", s.kernels_with_geometry);
  w.Field("memcpy", s.memcpys);
  w.Field("memset", s.memsets);
  w.Field("sync", s.syncs);
  w.Field("event_record", s.event_records);
  w.Field("range", s.ranges);
  w.Field("collective", s.collectives);
  w.Field("flow", s.flows);
  w.EndObject();
  w.Key("ranges").BeginObject();
  w.Field("cpu_op", s.cpu_op_ranges);
  w.Field("user_annotation", s.annotation_ranges);
  w.Field("layer", s.layer_ranges);
  w.Field("gpu_annotation", s.gpu_annotation_ranges);
  w.EndObject();
  w.Field("threads", s.threads);
  w.Field("streams", s.streams);
  w.Field("devices", s.devices);
  w.Field("layers", s.layers);
  const auto steps = [&] {
    w.BeginArray();
    for (const StepStat& it : s.steps) {
      w.BeginObject().Field("name", it.name).Field("index", it.index);
      w.Field("cpu_span_us", Us(it.measured_ns)).EndObject();
    }
    w.EndArray();
  };
  WriteStepsAndAlias(w, steps);
  w.Field("has_gpu_events", s.has_gpu_events);
  w.Field("gpu_busy_fraction", s.gpu_busy_fraction);
  w.Field("gpu_busy_us", Us(s.gpu_busy_ns));
  w.Field("span_us", Us(s.span_ns));
  w.Field("kernel_total_us", Us(s.kernel_total_ns));
  w.Key("top_kernels").BeginArray();
  for (const KernelStat& k : s.top_kernels) {
    w.BeginObject().Field("name", k.name).Field("count", k.count);
    w.Field("total_us", Us(k.total_ns));
    w.Field("percent", s.kernel_total_ns > 0 ? 100.0 * static_cast<double>(k.total_ns) /
                                                   static_cast<double>(s.kernel_total_ns)
                                             : 0.0);
    w.EndObject();
  }
  w.EndArray();
  w.Key("device_properties").BeginArray();
  for (const proto::Device& d : trace.header().devices()) {
    w.BeginObject().Field("id", d.id()).Field("name", d.name()).Field("vendor", d.vendor());
    w.Field("sm_count", d.sm_count());
    if (g.hardware.ok && d.id() == g.hardware.model.gpu.device) {
      w.Key("model");
      WriteGpuModelJson(w, g.hardware);
    }
    w.EndObject();
  }
  w.EndArray();
  if (trace.header().has_distributed()) {
    const proto::DistributedInfo& di = trace.header().distributed();
    w.Key("distributed").BeginObject().Field("backend", di.backend());
    w.Field("rank", di.rank()).Field("world_size", di.world_size()).EndObject();
  }
  w.Key("anomalies").BeginObject();
  for (const auto& [name, value] : s.anomalies) w.Field(name, value);
  w.EndObject();
  w.Key("skipped").BeginObject();
  for (const auto& [name, value] : s.skipped) w.Field(name, value);
  w.EndObject();
  if (g.built) {
    w.Key("cost_model");
    WriteCostModelJson(w, g.hardware);
  }
  WriteGraphJson(w, g);
  if (g.built) {
    w.Key("facts");
    WriteFactsJson(w, g.facts);
  }
  w.EndObject();
  return w.str();
}

}  // namespace reverie::whatif
