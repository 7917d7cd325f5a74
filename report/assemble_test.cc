#include "report/assemble.h"

#include "depgraph/simulator.h"
#include "gtest/gtest.h"

namespace reverie::report {
namespace {

using depgraph::Graph;
using depgraph::TaskId;
using depgraph::TaskKind;

// A thread launching three kernels in layer "fc"; the "optimized" copy
// halves the kernels.
Graph Base() {
  Graph g;
  const auto cpu = g.AddResource({depgraph::ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const auto gpu = g.AddResource({depgraph::ResourceKind::kGpuStream, 1, 7, 0, "s", true});
  const auto fc = g.AddLayer("fc", depgraph::LayerId());
  g.AddStep({"ProfilerStep#1", 0, 400'000});
  for (int i = 0; i < 3; ++i) {
    depgraph::TaskSpec api{
        .kind = TaskKind::kCpuApi, .name = "cudaLaunchKernel", .resource = cpu,
        .duration_ns = 5'000, .layer = fc, .step = 0, .measured_start_ns = i * 10'000};
    const TaskId a = g.AppendTask(api);
    depgraph::TaskSpec k = api;
    k.kind = TaskKind::kKernel;
    k.name = "volta_sgemm";
    k.resource = gpu;
    k.duration_ns = 100'000;
    k.measured_start_ns = 6'000 + i * 100'000;
    g.AddEdge(a, g.AppendTask(k), depgraph::EdgeKind::kLaunch);
  }
  return g;
}

TEST(AssembleTest, FillsSummaryDeltasAndCounters) {
  const Graph base = Base();
  Graph fast = base;
  for (uint32_t i = 0; i < fast.task_count(); ++i) {
    if (fast.kind(TaskId(i)) == TaskKind::kKernel) fast.set_duration_ns(TaskId(i), 50'000);
  }
  absl::StatusOr<depgraph::SimResult> s0 = depgraph::Simulate(base);
  absl::StatusOr<depgraph::SimResult> s1 = depgraph::Simulate(fast);
  ASSERT_TRUE(s0.ok() && s1.ok());
  Trace trace;
  trace.AddCounter(TraceCounter::unmatched_flow, 2);
  trace.AddCounter(TraceCounter::skipped_overhead, 7);  // info: not an anomaly
  depgraph::BuildStats build;
  build.Add(depgraph::BuildCounter::nested_api_call, 4);
  build.Add(depgraph::BuildCounter::cpu_tasks, 9);  // info: not an anomaly
  AssembleInput in;
  in.trace_path = "t.json";
  in.trace = &trace;
  in.build_counters = &build;
  in.baseline = &base;
  in.baseline_sim = &*s0;
  in.runs = {{"half.lua", &fast, &*s1, "", {"factor=2*"}, {"halved 3 kernels"}},
             {"bad.lua", nullptr, nullptr, "bad.lua:1: boom", {}, {}}};
  const ReportData d = AssembleReport(in);
  // The step time, not the marker's 400'000: without step-mark tasks the
  // step runs from its first task (0) to its last kernel's end (206'000 +
  // 100'000), depgraph/step_time.h.
  EXPECT_DOUBLE_EQ(d.measured_step_ns, 306'000);
  EXPECT_DOUBLE_EQ(d.baseline_ns, s0->mean_step_ns());
  ASSERT_EQ(d.scripts.size(), 2u);
  EXPECT_LT(d.scripts[0].predicted_ns, d.baseline_ns);
  ASSERT_FALSE(d.scripts[0].layers.empty());
  EXPECT_EQ(d.scripts[0].layers[0].name, "fc");
  EXPECT_DOUBLE_EQ(d.scripts[0].layers[0].a_ns - d.scripts[0].layers[0].b_ns, 150'000);
  ASSERT_FALSE(d.scripts[0].kernels.empty());
  EXPECT_EQ(d.scripts[0].kernels[0].name, "volta_sgemm");
  EXPECT_EQ(d.scripts[1].error, "bad.lua:1: boom");
  // What the script was given and said reaches the page, with its spread.
  EXPECT_EQ(d.scripts[0].params, std::vector<std::string>{"factor=2*"});
  EXPECT_EQ(d.scripts[0].log, std::vector<std::string>{"halved 3 kernels"});
  EXPECT_EQ(d.scripts[0].noise.counted, 1);
  const std::string html = RenderHtmlReport(d);
  EXPECT_NE(html.find("factor=2*"), std::string::npos);
  EXPECT_NE(html.find("halved 3 kernels"), std::string::npos);
  ASSERT_EQ(d.baseline_breakdown.size(), 1u);
  const BreakdownRow& b = d.baseline_breakdown[0];
  EXPECT_NEAR(b.cpu_only_ns + b.gpu_only_ns + b.both_ns + b.idle_ns, d.baseline_ns, 1.0);
  EXPECT_FALSE(d.critical_path.empty());
  ASSERT_EQ(d.anomalies.size(), 2u);  // zero and info counters are not anomalies
  EXPECT_EQ(d.anomalies[0].first, "trace: unmatched_flow");
  EXPECT_EQ(d.anomalies[1].first, "graph: nested_api_call");
}

}  // namespace
}  // namespace reverie::report
