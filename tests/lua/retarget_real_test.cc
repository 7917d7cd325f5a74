// retarget_gpu.lua (Habitat wave scaling inside the simulator) on real
// traces. No trace here pairs one workload across GPUs, so these check the
// properties the model implies rather than accuracy: the identity, the order
// of GPUs, the bound the fastest task puts on the speedup, and that a
// CPU-bound step gains less than its kernels.
#include <algorithm>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/lua/real_graph.h"
#include "whatif/memory_fit.h"

namespace reverie {
namespace {

using depgraph::TaskId;
using depgraph::TaskKind;
using ::testing::HasSubstr;
using testing::Prediction;

// vLLM inference on a B200: bf16 GEMMs named nvjet_* and cutlass::bfloat16_t.
constexpr char kB200[] = "AMD-AGI__TraceLens/tests/traces/b200/eager_trace.json.gz";

std::string Log(const Prediction& p) {
  std::string log;
  for (const lua::ScriptReport& r : p.reports) {
    for (const std::string& line : r.log) log += line + "\n";
  }
  return log;
}

int64_t SumNs(const depgraph::Graph& g, TaskKind kind) {
  int64_t sum = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (!g.removed(t) && g.kind(t) == kind) sum += g.duration_ns(t);
  }
  return sum;
}

Prediction To(const testing::RealGraph& rg, const std::string& gpu,
              std::vector<std::pair<std::string, std::string>> more = {}) {
  more.emplace_back("to", gpu);
  return testing::Predict(rg, {"retarget_gpu.lua"}, std::move(more));
}

TEST(RetargetRealTest, TheSameGpuChangesNothing) {
  for (const auto& [trace, gpu] : {std::pair{testing::kV100Trace, "V100-SXM2"},
                                   std::pair{testing::kRtxResnetTrace, "RTX2080Ti"}}) {
    REVERIE_REQUIRE_GRAPH(rg, trace);
    const Prediction p = To(*rg, gpu);
    ASSERT_TRUE(p.status.ok()) << p.status;
    for (uint32_t i = 0; i < rg->graph.task_count(); ++i) {
      ASSERT_EQ(p.graph.duration_ns(TaskId(i)), rg->graph.duration_ns(TaskId(i))) << gpu << " task " << i;
    }
    EXPECT_DOUBLE_EQ(p.pred_us, p.base_us) << gpu;
  }
}

TEST(RetargetRealTest, GpusKeepTheirOrderOnAGpuBoundStep) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kV100Trace);
  const Prediction t4 = To(*rg, "T4"), a100 = To(*rg, "A100-SXM4-80GB"), h100 = To(*rg, "H100-SXM"),
                   h200 = To(*rg, "H200");
  for (const Prediction* p : {&t4, &a100, &h100, &h200}) ASSERT_TRUE(p->status.ok()) << p->status;
  const int64_t base = SumNs(rg->graph, TaskKind::kKernel);
  EXPECT_GT(SumNs(t4.graph, TaskKind::kKernel), base);
  EXPECT_LT(SumNs(a100.graph, TaskKind::kKernel), base);
  EXPECT_LT(SumNs(h100.graph, TaskKind::kKernel), SumNs(a100.graph, TaskKind::kKernel));
  EXPECT_LE(SumNs(h200.graph, TaskKind::kKernel), SumNs(h100.graph, TaskKind::kKernel));
  EXPECT_LT(t4.speedup(), 1.0);
  EXPECT_GT(a100.speedup(), 1.0);
  EXPECT_GE(h100.speedup(), a100.speedup());
  // Same host: CPU calls keep their times.
  EXPECT_EQ(SumNs(h100.graph, TaskKind::kCpuApi), SumNs(rg->graph, TaskKind::kCpuApi));
}

TEST(RetargetRealTest, SpeedupIsBoundedByTheFastestTaskSpeedup) {
  // Start times are max-plus combinations of durations and unchanged gaps, so
  // if no task got more than f times faster, the step cannot either.
  REVERIE_REQUIRE_GRAPH(rg, testing::kV100Trace);
  const Prediction p = To(*rg, "H100-SXM");
  ASSERT_TRUE(p.status.ok()) << p.status;
  double best = 1;
  for (uint32_t i = 0; i < rg->graph.task_count(); ++i) {
    const int64_t before = rg->graph.duration_ns(TaskId(i));
    if (before > 1000) best = std::max(best, static_cast<double>(before) / p.graph.duration_ns(TaskId(i)));
  }
  EXPECT_GT(p.speedup(), 1.0);
  EXPECT_LE(p.speedup(), best);
}

TEST(RetargetRealTest, ACpuBoundStepGainsLessThanItsKernels) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kRtxResnetTrace);
  const Prediction p = To(*rg, "H100-SXM");
  ASSERT_TRUE(p.status.ok()) << p.status;
  const double kernels = static_cast<double>(SumNs(rg->graph, TaskKind::kKernel)) /
                         static_cast<double>(SumNs(p.graph, TaskKind::kKernel));
  EXPECT_GT(kernels, 2.0);
  EXPECT_GE(p.speedup(), 1.0);
  EXPECT_LT(p.speedup(), kernels);
  // The log says what was scaled and how.
  const std::string log = Log(p);
  EXPECT_THAT(log, HasSubstr("NVIDIA GeForce RTX 2080 Ti (RTX2080Ti) -> H100-SXM"));
  EXPECT_THAT(log, HasSubstr("GEMM/conv/attention fp32->tf32"));
}

TEST(RetargetRealTest, KernelMathComesFromNamesUnlessOverridden) {
  REVERIE_REQUIRE_GRAPH(rg, kB200);
  Prediction p = To(*rg, "H100-SXM");
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_THAT(Log(p), HasSubstr("NVIDIA B200 (B200) -> H100-SXM"));
  EXPECT_THAT(Log(p), ::testing::Not(HasSubstr("fp32->tf32")));  // bf16 GEMMs stay bf16
  EXPECT_GT(SumNs(p.graph, TaskKind::kKernel), SumNs(rg->graph, TaskKind::kKernel));  // a slower GPU
  const Prediction bf16 = p;
  p = To(*rg, "H100-SXM", {{"compute_math", "fp8"}});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_THAT(Log(p), HasSubstr("GEMM/conv/attention -> fp8"));
  // fp8 has twice bf16's peak on an H100: GEMMs can only get faster.
  EXPECT_LE(SumNs(p.graph, TaskKind::kKernel), SumNs(bf16.graph, TaskKind::kKernel));
  p = To(*rg, "H100-SXM", {{"compute_math", "fp64"}});
  EXPECT_THAT(std::string(p.status.message()), HasSubstr("compute_math must be auto, fp32"));
}

TEST(RetargetRealTest, MemoryIsCheckedAgainstTheTargetGpu) {
  REVERIE_REQUIRE_GRAPH(rg, "AMD-AGI__TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  const Prediction p = To(*rg, "T4");
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(p.runs_on, "T4");
  const std::vector<whatif::MemoryFit> fits =
      whatif::FitMemory(rg->graph, rg->baseline, p.graph, p.sim, rg->model.devices, p.runs_on);
  ASSERT_FALSE(fits.empty());
  EXPECT_THAT(fits[0].capacity_from, HasSubstr("T4"));
  EXPECT_LT(fits[0].capacity, 17e9) << "a 16 GB T4, not the trace's 80 GB H100";
  EXPECT_EQ(fits[0].pred_peak, fits[0].base_peak) << "the same allocations";
  const std::vector<whatif::MemoryFit> own =
      whatif::FitMemory(rg->graph, rg->baseline, p.graph, p.sim, rg->model.devices);
  EXPECT_EQ(own[0].capacity_from, "deviceProperties");
}

TEST(RetargetRealTest, NamesTheProblemWithTheGpus) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kV100Trace);
  Prediction p = To(*rg, "X100");
  EXPECT_THAT(std::string(p.status.message()), HasSubstr("unknown GPU 'X100' (known: P100-SXM2"));
  p = testing::Predict(*rg, {"retarget_gpu.lua"});
  EXPECT_THAT(std::string(p.status.message()), HasSubstr("set the destination GPU with --set to=KEY"));
  REVERIE_REQUIRE_GRAPH(amd, testing::kMi300DdpTrace);
  p = To(*amd, "H100-SXM");
  EXPECT_EQ(p.status.code(), absl::StatusCode::kFailedPrecondition) << p.status;
  EXPECT_THAT(std::string(p.status.message()),
              HasSubstr("refused: MI300X (amd) and H100-SXM (nvidia) run different kernels"));
  EXPECT_THAT(std::string(p.status.message()), HasSubstr("--set cross_vendor=true"));
  // Onto the GPU the trace ran on: nothing to change, the baseline exactly.
  p = To(*amd, "MI300X");
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(p.reports.front().outcome, lua::ScriptOutcome::kUnchanged);
  EXPECT_THAT(p.reports.front().outcome_reason, HasSubstr("already ran on MI300X"));
  EXPECT_DOUBLE_EQ(p.speedup(), 1.0);
  p = To(*amd, "MI325X");  // same kernels, more bandwidth
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_LE(SumNs(p.graph, TaskKind::kKernel), SumNs(amd->graph, TaskKind::kKernel));
  EXPECT_GE(p.speedup(), 1.0);
}

}  // namespace
}  // namespace reverie
