// Timeline -> LoadTraceFile: what WriteTimeline writes must re-import as a
// Kineto trace with every task, launch link, layer and step intact.
#include <filesystem>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "base/testing/cli_runner.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "export/timeline.h"
#include "frameworks/trace_loader.h"
#include "gtest/gtest.h"

namespace reverie::exporter {
namespace {

using depgraph::Graph;
using depgraph::ResourceKind;
using depgraph::TaskKind;

// Two threads' worth of work is not needed: one thread launching on two
// streams, with a two-level layer hierarchy.
Graph TestGraph() {
  Graph g;
  const auto cpu = g.AddResource({ResourceKind::kCpuThread, 42, 42, -1, "main", true});
  const auto s7 = g.AddResource({ResourceKind::kGpuStream, 42, 7, 0, "stream 7", true});
  const auto s9 = g.AddResource({ResourceKind::kGpuStream, 42, 9, 0, "stream 9", true});
  const auto net = g.AddLayer("Net_0", depgraph::LayerId());
  const auto fc = g.AddLayer("Net_0.Linear_1", net);
  g.AddStep({"ProfilerStep#5", 0, 200'000});
  int64_t t = 1'000;
  for (int i = 0; i < 10; ++i) {
    depgraph::TaskSpec api{
        .kind = TaskKind::kCpuApi, .name = i % 3 == 2 ? "cudaMemsetAsync" : "cudaLaunchKernel",
        .resource = cpu, .duration_ns = 4'000, .layer = i < 5 ? fc : net,
        .phase = depgraph::Phase::kForward, .step = 0, .measured_start_ns = t};
    const depgraph::TaskId a = g.AppendTask(api);
    depgraph::TaskSpec gpu = api;
    gpu.kind = i % 3 == 2 ? TaskKind::kMemset : TaskKind::kKernel;
    gpu.name = i % 3 == 2 ? "Memset (Device)" : "volta_sgemm_128x64_nn";
    gpu.resource = i % 2 == 0 ? s7 : s9;
    gpu.duration_ns = 15'000;
    gpu.measured_start_ns = t + 6'000;
    g.AddEdge(a, g.AppendTask(gpu), depgraph::EdgeKind::kLaunch);
    t += 16'000;
  }
  return g;
}

TEST(TimelineRoundTripTest, ReimportsAsKinetoTrace) {
  const Graph g = TestGraph();
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const std::string dir = testing::TempDir("timeline_rt");
  const std::string path = dir + "/timeline.json";
  TimelineStats st;
  ASSERT_TRUE(WriteTimeline(path, {{"measured", &g, nullptr}, {"simulated", &g, &*sim}}, &st).ok());
  EXPECT_EQ(st.tasks, 40);
  EXPECT_EQ(st.flows, 20);

  absl::StatusOr<Trace> trace = LoadTraceFile(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const proto::TraceChunk& ev = trace->events();
  EXPECT_EQ(ev.api_calls_size(), 20);
  EXPECT_EQ(ev.gpu_activities_size(), 20);
  int kernels = 0, memsets = 0;
  absl::flat_hash_set<uint64_t> api_corr;
  for (const proto::ApiCall& a : ev.api_calls()) api_corr.insert(a.correlation_id());
  EXPECT_EQ(api_corr.size(), 20u);  // unique across both runs
  for (const proto::GpuActivity& a : ev.gpu_activities()) {
    kernels += a.kind() == proto::GpuActivity::KERNEL;
    memsets += a.kind() == proto::GpuActivity::MEMSET;
    EXPECT_TRUE(api_corr.contains(a.correlation_id())) << a.correlation_id();
    EXPECT_TRUE(a.stream() == 7 || a.stream() == 9) << a.stream();
  }
  EXPECT_EQ(kernels, 14);
  EXPECT_EQ(memsets, 6);
  EXPECT_EQ(trace->GetCounter(TraceCounter::unmatched_correlation), 0);
  // Every launch and memset call written finds its GPU work again.
  EXPECT_EQ(trace->GetCounter(TraceCounter::launch_without_kernel), 0);
  EXPECT_EQ(trace->GetCounter(TraceCounter::memory_call_without_gpu_activity), 0);
  // Layers come back with their dotted paths.
  absl::flat_hash_set<std::string> paths;
  for (const proto::Range& r : ev.ranges()) {
    if (r.kind() == proto::Range::LAYER)
      paths.insert(std::string(trace->String(r.module_path_sid())));
  }
  EXPECT_TRUE(paths.contains("Net_0")) << paths.size();
  EXPECT_TRUE(paths.contains("Net_0.Linear_1"));
  EXPECT_GE(ev.steps_size(), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reverie::exporter
