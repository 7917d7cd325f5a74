// The script library on the hand-built training graph, where every expected
// duration can be worked out by hand (transforms/test_graphs.h describes it).
#include <cmath>

#include "depgraph/memory_replay.h"
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

// The hand-built graph's GPU: its kernels are Volta's (volta_sgemm,
// volta_scudnn), as a trace's deviceProperties would say.
depgraph::ModelInfo V100() {
  depgraph::ModelInfo m;
  depgraph::DeviceInfo d;
  d.id = 0;
  d.name = "Tesla V100-SXM2-32GB";
  d.vendor = "nvidia";
  d.sm_count = 80;
  d.compute_major = 7;
  d.total_memory_bytes = 34089730048;
  m.devices.push_back(d);
  return m;
}

class LibraryTest : public ::testing::Test {
 protected:
  Graph g_ = transforms::testing::MakeTrainingGraph(2);
  depgraph::ModelInfo model_ = V100();

  absl::Status Apply(const std::vector<std::string>& scripts,
                     std::vector<std::pair<std::string, std::string>> sets = {}) {
    RunnerOptions o;
    o.script_dirs = {REVERIE_SOURCE_DIR "/scripts"};
    o.settings = std::move(sets);
    runner_ = std::make_unique<ScriptRunner>(std::move(o));
    return runner_->Run(scripts, model_, &g_);
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
    return depgraph::Simulate(g_, o)->mean_step_ns();
  }
  // The replayed peak on GPU 0 in MiB (the graph needs memory events).
  double PeakMiB() {
    depgraph::SimOptions o;
    if (runner_) o.policy = runner_->schedule().policy();
    absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g_, o);
    EXPECT_TRUE(sim.ok()) << sim.status();
    const std::vector<depgraph::DevicePeak> p = depgraph::ReplayMemory(g_, sim->start_ns, sim->end_ns);
    EXPECT_EQ(p.size(), 1u);
    return p.empty() ? -1 : static_cast<double>(p[0].peak) / (1 << 20);
  }
  // What is left allocated once every event is replayed (nothing leaks).
  int64_t NetBytes() {
    int64_t sum = 0;
    for (const depgraph::MemoryEvent& m : g_.memory_events()) sum += m.bytes;
    return sum;
  }
  std::unique_ptr<ScriptRunner> runner_;
};

using ::testing::Each;
using ::testing::ElementsAre;

TEST_F(LibraryTest, AmpWithFixedFactorsDividesComputeByThreeAndTheRestByTwo) {
  ASSERT_TRUE(Apply({"amp.lua"}, {{"compute_speedup", "3"}, {"memory_speedup", "2"}}).ok());
  EXPECT_THAT(Durations("scudnn"), Each(33'333));            // 100us conv / 3
  EXPECT_THAT(Durations("sgemm_64x64_nn"), Each(16'667));    // 50us / 3
  EXPECT_THAT(Durations("elementwise"), Each(10'000));       // 20us relu / 2
  EXPECT_THAT(Durations("bn_bw"), Each(15'000));             // 30us / 2
  EXPECT_THAT(Durations("multi_tensor"), Each(10'000));      // update stays FP32
  // Fixed factors need no GPU model.
  model_ = depgraph::ModelInfo();
  g_ = transforms::testing::MakeTrainingGraph(2);
  ASSERT_TRUE(Apply({"amp.lua"}, {{"compute_speedup", "3"}, {"memory_speedup", "2"}}).ok());
  EXPECT_THAT(Durations("scudnn"), Each(33'333));
  g_ = transforms::testing::MakeTrainingGraph(2);
  EXPECT_THAT(std::string(Apply({"amp.lua"}).message()),
              ::testing::HasSubstr("records no GPU"));
}

// The cost model on a graph without shapes: each kernel sits on its
// class's curve by its own time; no class has samples, so every curve has
// the prior slope (1 / 0.75 for GEMM and convolution, 1 / 0.85 for the
// rest) and the fixed cost of the trace's short kernels (the 10th
// percentile of its 18 kernels, 10 us), at most a launch call's time (5 us).
TEST_F(LibraryTest, AmpByTheCostModel) {
  ASSERT_TRUE(Apply({"amp.lua"}, {{"cast_kernels", "false"}, {"grad_scaler", "false"}}).ok());
  const auto on_curve = [](double t_us, double ceiling, double ratio) {
    const double fixed = 5'000, r0 = (t_us * 1e3 - fixed) * ceiling;
    return static_cast<int64_t>(std::nearbyint((fixed + r0 * ratio / ceiling)));
  };
  // V100: fp32 15.7 TFLOP/s on CUDA cores, fp16 125 on tensor cores.
  EXPECT_THAT(Durations("scudnn"), Each(on_curve(100, 0.75, 15.7 / 125)));
  EXPECT_THAT(Durations("sgemm_64x64_nn"), Each(on_curve(50, 0.75, 15.7 / 125)));
  // Memory-bound kernels move half the bytes.
  EXPECT_THAT(Durations("elementwise"), Each(on_curve(20, 0.85, 0.5)));
  EXPECT_THAT(Durations("bn_bw"), Each(on_curve(30, 0.85, 0.5)));
  EXPECT_THAT(Durations("multi_tensor"), Each(10'000));  // update stays FP32
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
  // The hand-built update kernels imply 30us x the V100's achieved memory
  // bandwidth / 11 passes, fine;
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

// On 4 layers x (gemm, relu) with each forward output (1 MiB) saved for its
// mirror in the backward and 4 MiB of weights, the peak is 12 MiB at the
// first backward launch; each memory script lowers it by what it frees
// there (hand-computed below), and no script leaks: every allocation it
// makes is freed, so what stays allocated is the weights.
TEST_F(LibraryTest, MemoryScriptsLowerThePeakByWhatTheyFree) {
  struct Case {
    const char* script;
    std::vector<std::pair<std::string, std::string>> sets;
    double peak_mib;
  };
  const std::vector<Case> cases = {
      // Segment 1 (layers 0-1) is recomputed: its 3 inner outputs go.
      {"activation_checkpointing.lua", {{"segments", "2"}}, 9.0},
      // Relu maps held encoded (0.5 MiB each) but the last, decoded
      // before the first backward launch that needs it.
      {"gist.lua", {}, 10.5},
      // The inputs of gemms 2-4 (relus 1-3) offloaded; relu 3's prefetch
      // is for the first backward, so it is back by then.
      {"vdnn.lua", {}, 10.0},
      // Every output written in half.
      {"amp.lua", {}, 8.0},
  };
  for (const Case& c : cases) {
    g_ = transforms::testing::MakeDeepTrainingGraph(4);
    transforms::testing::AddActivationMemory(g_);
    runner_.reset();
    EXPECT_DOUBLE_EQ(PeakMiB(), 12.0);
    ASSERT_TRUE(Apply({c.script}, c.sets).ok()) << c.script;
    EXPECT_DOUBLE_EQ(PeakMiB(), c.peak_mib) << c.script;
    EXPECT_EQ(NetBytes(), 4 << 20) << c.script;
    EXPECT_TRUE(g_.Validate().ok()) << c.script;
  }
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

TEST_F(LibraryTest, RetargetGpuByTheCostModel) {
  // Without a GPU the model has nothing to start from, and says so.
  model_ = depgraph::ModelInfo();
  EXPECT_THAT(std::string(Apply({"retarget_gpu.lua"}, {{"to", "A100-SXM4-80GB"}}).message()),
              ::testing::HasSubstr("records no GPU"));
  const absl::Status st = Apply({"retarget_gpu.lua"}, {{"from", "V100-SXM2"}, {"to", "A100-SXM4-80GB"}});
  ASSERT_TRUE(st.ok()) << st;
  // No shapes and no geometry: each kernel sits on its class's prior curve
  // (fixed 5 us, LibraryTest.AmpByTheCostModel) and its roofline scales by
  // the peaks of its class: memory bandwidth 900 -> 2039 GB/s, fp32 CUDA
  // cores 15.7 -> 19.5 TFLOP/s (FP32 GEMMs stay FP32: tf32_matmul off),
  // TF32 tensor cores for FP32 convolutions on the A100 (156 TFLOP/s).
  const auto on_curve = [](double t_us, double ceiling, double ratio) {
    const double fixed = 5'000, r0 = (t_us * 1e3 - fixed) * ceiling;
    return static_cast<int64_t>(std::nearbyint((fixed + r0 * ratio / ceiling)));
  };
  EXPECT_THAT(Durations("elementwise"), Each(on_curve(20, 0.85, 900.0 / 2039)));
  EXPECT_THAT(Durations("multi_tensor"), Each(on_curve(10, 0.85, 900.0 / 2039)));
  EXPECT_THAT(Durations("sgemm_64x64_nn"), Each(on_curve(50, 0.75, 15.7 / 19.5)));
  EXPECT_THAT(Durations("scudnn"), Each(on_curve(100, 0.75, 15.7 / 156)));
  EXPECT_THAT(Durations("cudaLaunchKernel", TaskKind::kCpuApi), Each(5'000));
  // The same GPU changes nothing.
  g_ = transforms::testing::MakeTrainingGraph(2);
  ASSERT_TRUE(Apply({"retarget_gpu.lua"}, {{"from", "V100-SXM2"}, {"to", "V100-SXM2"}}).ok());
  EXPECT_THAT(Durations("scudnn"), Each(100'000));
  EXPECT_THAT(Durations("elementwise"), Each(20'000));
}

}  // namespace
}  // namespace reverie::lua
