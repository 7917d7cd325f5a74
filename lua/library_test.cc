// The script library on the hand-built training graph, where every expected
// duration can be worked out by hand (transforms/test_graphs.h describes it).
#include <cmath>

#include "depgraph/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lua/script_runner.h"
#include "transforms/select.h"
#include "transforms/test_graphs.h"

namespace reverie::lua {
namespace {

using depgraph::Graph;
using depgraph::TaskId;
using depgraph::TaskKind;

class LibraryTest : public ::testing::Test {
 protected:
  Graph g_ = transforms::testing::MakeTrainingGraph(2);

  absl::Status Apply(const std::vector<std::string>& scripts,
                     std::vector<std::pair<std::string, std::string>> sets = {}) {
    RunnerOptions o;
    o.script_dirs = {REVERIE_SOURCE_DIR "/scripts"};
    o.settings = std::move(sets);
    runner_ = std::make_unique<ScriptRunner>(std::move(o));
    return runner_->Run(scripts, {}, &g_);
  }
  std::vector<int64_t> Durations(const char* name, TaskKind kind = TaskKind::kKernel) {
    transforms::TaskQuery q;
    q.kinds = transforms::KindBit(kind);
    q.names = {name};
    std::vector<int64_t> out;
    absl::StatusOr<transforms::Selection> s = transforms::Select(g_, q);
    if (!s.ok()) return out;
    const transforms::Selection sel = *std::move(s);
    for (TaskId t : sel) out.push_back(g_.duration_ns(t));
    return out;
  }
  double MeanNs() {
    depgraph::SimOptions o;
    if (runner_) o.policy = runner_->schedule().policy();
    return depgraph::Simulate(g_, o)->mean_iteration_ns();
  }
  std::unique_ptr<ScriptRunner> runner_;
};

using ::testing::Each;
using ::testing::ElementsAre;

TEST_F(LibraryTest, AmpDividesComputeByThreeAndTheRestByTwo) {
  ASSERT_TRUE(Apply({"amp.lua"}).ok());
  EXPECT_THAT(Durations("scudnn"), Each(33'333));            // 100us conv / 3
  EXPECT_THAT(Durations("sgemm_64x64_nn"), Each(16'667));    // 50us / 3
  EXPECT_THAT(Durations("elementwise"), Each(10'000));       // 20us relu / 2
  EXPECT_THAT(Durations("bn_bw"), Each(15'000));             // 30us / 2
  EXPECT_THAT(Durations("multi_tensor"), Each(10'000));      // update stays FP32
}

TEST_F(LibraryTest, FusedAdamFusesEachStepsUpdate) {
  const double before = MeanNs();
  ASSERT_TRUE(Apply({"fused_adam.lua"}).ok());
  EXPECT_THAT(Durations("multi_tensor"), ElementsAre(30'000, 30'000));  // 3 x 10us per step
  EXPECT_EQ(runner_->total_changes().removed, 12);  // 6 kernels + 6 launches
  EXPECT_EQ(runner_->total_changes().added, 4);     // 2 kernels + 2 launches
  // Two launch calls fewer per step, but this graph is GPU-bound: no faster.
  EXPECT_LE(MeanNs(), before);
  EXPECT_TRUE(g_.Validate().ok());
}

TEST_F(LibraryTest, MetaflowFusesTheReluIntoTheConvolution) {
  ASSERT_TRUE(Apply({"metaflow.lua"}).ok());
  EXPECT_TRUE(Durations("elementwise").empty());
  EXPECT_THAT(Durations("scudnn"), Each(102'000));  // + 10% of the 20us ReLU
  EXPECT_EQ(runner_->total_changes().removed, 4);
}

TEST_F(LibraryTest, ReconstructBatchnormDropsActivationsHalvesBatchnorm) {
  ASSERT_TRUE(Apply({"reconstruct_batchnorm.lua"}).ok());
  EXPECT_TRUE(Durations("elementwise").empty());
  EXPECT_THAT(Durations("bn_bw"), Each(15'000));
  EXPECT_THAT(Durations("scudnn"), Each(100'000));  // a conv with a ReLU epilogue is no ReLU
}

TEST_F(LibraryTest, DdpAddsAllReducesTheUpdateWaitsFor) {
  const double before = MeanNs();
  ASSERT_TRUE(Apply({"ddp.lua"}, {{"workers", "1"}, {"gradient_mb", "40"}}).ok());
  EXPECT_EQ(runner_->total_changes().added, 4);  // 2 steps x 2 buckets of 25 + 15 MiB
  EXPECT_DOUBLE_EQ(MeanNs(), before);
  g_ = transforms::testing::MakeTrainingGraph(2);
  ASSERT_TRUE(Apply({"ddp.lua"}, {{"workers", "2"}, {"gradient_mb", "40"}, {"bandwidth_gbps", "100"},
                                  {"latency_us", "0"}}).ok());
  // The first bucket (25 of 40 MiB) is ready when the backward passes 62.5%
  // of its GPU time: inside the last backward kernel (wgrad, 90-210 us), so
  // both buckets start after the backward and the update waits for all 40 MiB
  // at 2(N-1)/N = 1 x 100 Gbit/s: 3355 us more per step.
  EXPECT_NEAR(MeanNs() - before, 3'355'443, 1'000);
}

TEST_F(LibraryTest, DdpNeedsAGradientSizeWhenNothingTellsIt) {
  // The hand-built update kernels imply 30us x 524 GB/s / 11 = 1.4 MB, fine;
  // without an update phase and without gradient_mb the script must say so.
  transforms::TaskQuery q;
  q.phases = transforms::PhaseBit(depgraph::Phase::kUpdate);
  const transforms::Selection update = transforms::Select(g_, q).value();
  for (TaskId t : update) g_.set_phase(t, depgraph::Phase::kOther);
  const absl::Status s = Apply({"ddp.lua"}, {{"workers", "2"}});
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("--set gradient_mb=N"));
}

TEST_F(LibraryTest, CudaGraphsZeroTheLaunchesAndAddOneGraphLaunchPerStep) {
  ASSERT_TRUE(Apply({"cuda_graphs.lua"}).ok());
  EXPECT_THAT(Durations("cudaLaunchKernel", TaskKind::kCpuApi), Each(0));
  EXPECT_THAT(Durations("cudaGraphLaunch", TaskKind::kCpuApi), ElementsAre(5'000, 5'000));
  EXPECT_THAT(Durations("cudaStreamSynchronize", TaskKind::kCpuApi), Each(2'000));  // kept
}

TEST_F(LibraryTest, GistAndCheckpointingOnlyAddWork) {
  const double before = MeanNs();
  ASSERT_TRUE(Apply({"gist.lua", "activation_checkpointing.lua"}, {{"segments", "2"}}).ok());
  EXPECT_THAT(Durations("gist_encode"), Each(20'000));
  EXPECT_THAT(Durations("gist_decode"), Each(20'000));
  EXPECT_FALSE(Durations("(recompute)").empty());
  EXPECT_GT(MeanNs(), before);
  EXPECT_TRUE(g_.Validate().ok());
}

TEST_F(LibraryTest, EveryLibraryScriptRunsWithItsDefaults) {
  for (const char* s : {"amp.lua", "fused_adam.lua", "ddp.lua", "p3.lua", "blueconnect.lua",
                        "dgc.lua", "vdnn.lua", "gist.lua", "metaflow.lua",
                        "reconstruct_batchnorm.lua", "cuda_graphs.lua",
                        "activation_checkpointing.lua", "faster_network.lua"}) {
    g_ = transforms::testing::MakeTrainingGraph(2);
    const absl::Status st = Apply({s});
    EXPECT_TRUE(st.ok()) << s << ": " << st;
    EXPECT_TRUE(g_.Validate().ok()) << s;
    ASSERT_EQ(runner_->reports().size(), 1u);
    EXPECT_FALSE(runner_->reports()[0].log.empty()) << s << " says what it did";
  }
}

TEST_F(LibraryTest, RetargetGpuWaveScalesByKernelClass) {
  // This graph names no GPU and records no launch geometry.
  EXPECT_THAT(std::string(Apply({"retarget_gpu.lua"}, {{"to", "A100-SXM4-80GB"}}).message()),
              ::testing::HasSubstr("does not name its GPU; set it with --set from=KEY"));
  ASSERT_TRUE(Apply({"retarget_gpu.lua"}, {{"from", "V100-SXM2"}, {"to", "A100-SXM4-80GB"}}).ok());
  // Without geometry a kernel scales by whole-GPU ratios (bandwidth 900 ->
  // 2039 GB/s); gamma from Habitat's Eq. 3 at 100 FLOP/B for GEMM/conv.
  const double bw = 900.0 / 2039.0;
  const auto eq3 = [](double peak_tflops) {
    const double ridge = peak_tflops * 1000 / 2039;
    return 100 < ridge ? 1 - 0.5 * 100 / ridge : 0.5 * ridge / 100;
  };
  const auto ns = [](double v) { return static_cast<int64_t>(std::nearbyint(v)); };
  EXPECT_THAT(Durations("elementwise"), Each(ns(20'000 * bw)));     // memory-bound
  EXPECT_THAT(Durations("multi_tensor"), Each(ns(10'000 * bw)));
  const double g32 = eq3(19.5);  // FP32 GEMMs stay FP32 (tf32_matmul off)
  EXPECT_THAT(Durations("sgemm_64x64_nn"),
              Each(ns(50'000 * std::pow(bw, g32) * std::pow(15.7 / 19.5, 1 - g32))));
  const double gtf = eq3(156);  // FP32 convolutions run as TF32 on the A100
  EXPECT_THAT(Durations("scudnn"), Each(ns(100'000 * std::pow(bw, gtf) * std::pow(15.7 / 156, 1 - gtf))));
  EXPECT_THAT(Durations("cudaLaunchKernel", TaskKind::kCpuApi), Each(5'000));
  ASSERT_TRUE(Apply({"retarget_gpu.lua"}, {{"from", "A100-SXM4-80GB"}, {"to", "A100-SXM4-80GB"}}).ok());
  EXPECT_THAT(Durations("scudnn"), Each(ns(100'000 * std::pow(bw, gtf) * std::pow(15.7 / 156, 1 - gtf))));
}

}  // namespace
}  // namespace reverie::lua
