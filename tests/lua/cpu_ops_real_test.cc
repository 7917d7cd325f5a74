// CPU time that belongs to an op (issue 22), on real traces: removing
// kernels removes their ops' cost and nothing more; the data loader's time
// is its own; the CPU-time split adds up to the thread's time.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "depgraph/cpu_time.h"
#include "depgraph/step_time.h"
#include "gtest/gtest.h"
#include "tests/lua/real_graph.h"
#include "transforms/select.h"

namespace reverie {
namespace {

using depgraph::TaskId;
using testing::Predict;
using testing::Prediction;

std::string WriteScript(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Issue 22's example: fuse the pointwise kernels of a small transformer away.
// The saving may not exceed what the removed tasks cost: their CPU time
// (launches and the own time of the ops that issued them) plus the removed
// kernels' time (where the GPU was the bottleneck). The gaps model removed
// the framework time between the launches too: 2.56x on 090cd71.
TEST(CpuOpsRealTest, FusingPointwiseKernelsSavesNoMoreThanTheirOpsCost) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kTransformerTutorialTrace);
  const std::string script = WriteScript("fuse_away.lua", R"(
local ew = graph:select{kind = "kernel", name = {"elementwise", "vectorized", "layer_nor"}}
local launches = ew:launches()
ew:remove(); launches:remove()
)");
  const Prediction p = Predict(*rg, {script});
  ASSERT_TRUE(p.status.ok()) << p.status;
  int64_t removed_cpu = 0, removed_gpu = 0, op_time = 0;
  for (uint32_t i = 0; i < p.graph.task_count(); ++i) {
    const TaskId t(i);
    if (!p.graph.removed(t) || rg->graph.removed(t)) continue;
    const int64_t d = rg->graph.duration_ns(t) + rg->graph.gap_ns(t);
    if (depgraph::IsGpuKind(rg->graph.kind(t))) {
      removed_gpu += d;
    } else {
      removed_cpu += d;
      if (rg->graph.kind(t) == depgraph::TaskKind::kCpuWork) op_time += d;
    }
  }
  const double steps = depgraph::SummarizeSteps(rg->baseline.steps).counted;
  const double saving_us = p.base_us - p.pred_us;
  EXPECT_GT(op_time, 0);  // ops' own time went
  EXPECT_GT(saving_us, 0);
  EXPECT_LE(saving_us, (removed_cpu + removed_gpu) / 1e3 / steps);
  EXPECT_LT(p.speedup(), 1.5);
}

// The ResNet-50 sample spends ~70 ms per step in the DataLoader on the main
// thread: that time is its own (phase data_loading), and no shipped script
// that does not model data loading removes it.
TEST(CpuOpsRealTest, TheDataLoadersTimeIsItsOwnAndStays) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kResnetSampleTrace);
  transforms::TaskQuery q;
  q.phases = transforms::PhaseBit(depgraph::Phase::kDataLoading);
  q.kinds = transforms::KindBit(depgraph::TaskKind::kCpuWork);
  absl::StatusOr<transforms::Selection> loader = transforms::Select(rg->graph, q);
  ASSERT_TRUE(loader.ok());
  ASSERT_EQ(loader->size(), 6u);  // one per step
  int64_t before = 0;
  for (TaskId t : *loader) before += rg->graph.duration_ns(t);
  EXPECT_GT(before / 6, 60'000'000);
  for (const char* s : {"fused_adam.lua", "p3.lua", "cuda_graphs.lua", "amp.lua", "ddp.lua",
                        "metaflow.lua", "pointwise_fusion.lua", "blueconnect.lua", "dgc.lua"}) {
    const Prediction p = Predict(*rg, {s});
    ASSERT_TRUE(p.status.ok()) << s << ": " << p.status;
    int64_t after = 0;
    for (TaskId t : *loader) {
      ASSERT_FALSE(p.graph.removed(t)) << s;
      after += p.graph.duration_ns(t);
    }
    EXPECT_EQ(after, before) << s;
    EXPECT_LT(p.speedup(), 1.6) << s;
  }
}

// CUDA graphs capture the forward, backward and update phases: the CPU time
// of every other phase (the main-thread DataLoader's ops and framework time,
// the loop around the step) stays whole, since a replay waits for it. Before
// the fix the walk from a step's last captured call to the next step's first
// zeroed ~7.8 ms per step of framework time outside the captured phases.
TEST(CpuOpsRealTest, CudaGraphsKeepTheCpuTimeOutsideTheCapturedPhases) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kResnetSampleTrace);
  const depgraph::Graph& g = rg->graph;
  const Prediction p = Predict(*rg, {"cuda_graphs.lua"});
  ASSERT_TRUE(p.status.ok()) << p.status;
  auto captured = [](depgraph::Phase ph) {
    return ph == depgraph::Phase::kForward || ph == depgraph::Phase::kBackward ||
           ph == depgraph::Phase::kUpdate;
  };
  int64_t before = 0, after = 0, inside_before = 0, inside_after = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (depgraph::IsGpuKind(g.kind(t))) continue;
    const bool in = captured(g.phase(t));
    (in ? inside_before : before) += g.duration_ns(t) + g.gap_ns(t);
    if (p.graph.removed(t)) continue;
    (in ? inside_after : after) += p.graph.duration_ns(t) + p.graph.gap_ns(t);
  }
  EXPECT_GT(before, 0);
  EXPECT_EQ(after, before);
  EXPECT_LT(inside_after, inside_before / 2);  // most of the captured CPU time went
}

// Every thread's CPU time splits into API calls, ops' own time, framework
// time and waiting; replay must reproduce each thread's measured span within
// 1% (time lost or counted twice by the split would move it), and nothing is
// counted twice (waiting >= 0). On every shared trace with op spans.
TEST(CpuOpsRealTest, TheCpuSplitAddsUpToEachThreadsTime) {
  const std::string root = testing::TracesDir();
  if (root.empty() || !std::filesystem::is_directory(root)) GTEST_SKIP() << "no shared traces";
  int traces_with_ops = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string path = entry.path().string();
    const bool json = path.ends_with(".json") || path.ends_with(".json.gz");
    if (!entry.is_regular_file() || !json || path.find("_et.") != std::string::npos) continue;
    std::string error;
    const testing::RealGraph* rg = testing::LoadRealGraph(path, &error);
    if (rg == nullptr) continue;  // nothing to simulate (CPU-only, execution traces)
    const depgraph::Graph& g = rg->graph;
    if (g.op_count() == 0) continue;
    ++traces_with_ops;
    const depgraph::TaskTimes m = depgraph::MeasuredTimes(g);
    const depgraph::CpuTimeReport measured = depgraph::ComputeCpuTime(g, m.start, m.end);
    const depgraph::CpuTimeReport simulated =
        depgraph::ComputeCpuTime(g, rg->baseline.start_ns, rg->baseline.end_ns);
    ASSERT_EQ(measured.by_thread.size(), simulated.by_thread.size()) << path;
    for (size_t i = 0; i < measured.by_thread.size(); ++i) {
      const depgraph::ThreadCpuTime& m = measured.by_thread[i];
      const depgraph::ThreadCpuTime& s = simulated.by_thread[i];
      EXPECT_NEAR(static_cast<double>(s.span_ns), static_cast<double>(m.span_ns),
                  0.01 * static_cast<double>(m.span_ns) + 1000)
          << path << " " << g.resource(m.thread).name;
      EXPECT_GE(s.waiting_ns(), 0) << path << " " << g.resource(m.thread).name;
    }
  }
  EXPECT_GT(traces_with_ops, 10);
  std::printf("%d traces with op spans checked\n", traces_with_ops);
}

}  // namespace
}  // namespace reverie
