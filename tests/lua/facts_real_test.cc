// Issue 25 on the shared traces: the facts each trace records, and the
// shipped scripts reading them before changing anything (nothing to change,
// a refusal naming why, or an adapted model).
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lua/lua_engine.h"
#include "tests/lua/real_graph.h"
#include "whatif/info.h"

namespace reverie {
namespace {

using ::testing::HasSubstr;
using testing::Predict;
using testing::Prediction;

constexpr char kOwl[] =
    "AMD-AGI__TraceLens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz";

const lua::ScriptReport& Report(const Prediction& p) { return p.reports.front(); }

TEST(FactsRealTest, Mi300DdpTraceIsBf16OnEightRanksWithCheckpointing) {
  REVERIE_REQUIRE_GRAPH(g, testing::kMi300DdpTrace);
  const depgraph::TraceFacts& f = g->model.facts;
  EXPECT_EQ(f.precision.compute, "bf16");
  EXPECT_GE(f.precision.share, 0.9);
  EXPECT_EQ(f.data_parallel.world_size, 8);
  EXPECT_TRUE(f.data_parallel.generic_kernels);  // RCCL's ncclDevKernel_Generic
  EXPECT_GT(f.data_parallel.allreduce_bytes_per_step, 20e6);  // 23.4 MB recorded
  EXPECT_TRUE(f.checkpointing.used);
  EXPECT_EQ(f.optimizer.name, "SGD");
}

// The precision a trace runs, read off kernel names two libraries spell in
// their own way: hipBLASLt's bf16 GEMMs on the MI300X ("Cijk_..._B_BS_BH_",
// read as fp32 before) and a CUTLASS fp16 GEMM whose m16n8k16 tag was
// read as tf32. The ops' recorded input types say the same.
TEST(FactsRealTest, PrecisionFromHipBlasLtAndCutlassNames) {
  REVERIE_REQUIRE_GRAPH(mi300,
                        "AMD-AGI__TraceLens/tests/traces/mi300/"
                        "facebook_timesformer-base-finetuned-k400__1016002.json.gz");
  EXPECT_EQ(mi300->model.facts.precision.compute, "bf16");
  EXPECT_GE(mi300->model.facts.precision.share, 0.99);
  REVERIE_REQUIRE_GRAPH(cutlass, "JeremyMorlier__GPUModel/trace2.json");
  EXPECT_EQ(cutlass->model.facts.precision.compute, "fp16");
}

// TraceLens' MI300X traces list their GPU as device 0 and record its work on
// device 2 (roctracer's machine index): the run's GPU is that one, so the
// scripts that need its peaks run (they refused: "device 2 has no name").
TEST(FactsRealTest, AnAmdTracesWorkIsOnItsOnlyListedGpu) {
  REVERIE_REQUIRE_GRAPH(g,
                        "AMD-AGI__TraceLens/tests/traces/mi300/"
                        "Falconsai_nsfw_image_detection__1016002.json.gz");
  EXPECT_EQ(g->model.facts.gpu.name, "AMD Instinct MI300X VF");
  EXPECT_EQ(g->trace.GetCounter(TraceCounter::device_numbered_apart), 1);
  const Prediction p =
      Predict(*g, {"retarget_gpu.lua"}, {{"to", "H100-SXM"}, {"cross_vendor", "true"}});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_GT(p.speedup(), 0.0);
}

// TraceLens' B200 vLLM trace is tensor-parallel inference on 8 ranks: its
// all-reduces carry activations, so it is not data parallel and ddp.lua,
// which re-times gradient all-reduces for more replicas, refuses it. The
// MI300X DDP training trace is data parallel.
TEST(FactsRealTest, CollectivesWithoutABackwardPassAreNotDataParallel) {
  REVERIE_REQUIRE_GRAPH(tp, "AMD-AGI__TraceLens/tests/traces/b200/eager_trace.json.gz");
  EXPECT_TRUE(tp->model.facts.data_parallel.used);
  EXPECT_TRUE(tp->model.facts.data_parallel.inference);
  const Prediction p = Predict(*tp, {"ddp.lua"}, {{"workers", "16"}});
  EXPECT_EQ(p.status.code(), absl::StatusCode::kFailedPrecondition) << p.status;
  EXPECT_THAT(p.status.message(), HasSubstr("without a backward pass"));
  REVERIE_REQUIRE_GRAPH(dp, testing::kMi300DdpTrace);
  EXPECT_TRUE(dp->model.facts.data_parallel.used);
  EXPECT_FALSE(dp->model.facts.data_parallel.inference);
}

// vDNN pairs forward and backward layers by position; a model that
// checkpoints runs forward work again in its backward, so vdnn.lua refuses
// it in one line (it raised a dependency cycle with a traceback).
TEST(FactsRealTest, VdnnRefusesATraceThatCheckpoints) {
  REVERIE_REQUIRE_GRAPH(g, testing::kMi300DdpTrace);
  ASSERT_TRUE(g->model.facts.checkpointing.used);
  const Prediction p = Predict(*g, {"vdnn.lua"});
  EXPECT_EQ(p.status.code(), absl::StatusCode::kFailedPrecondition) << p.status;
  EXPECT_THAT(p.status.message(), HasSubstr("refused: the trace already checkpoints activations"));
}

constexpr char kRecsys16[] =
    "facebookresearch__HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/"
    "rank0.json.gz";
constexpr char kShampoo128[] =
    "facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz";

// HTA's 16-rank recsys trace steps apex's FusedAdam: one multi-tensor kernel
// whose functor is the whole Adam update (AdamFunctor), not torch's foreach
// arithmetic. It is fused already: fused_adam.lua had predicted the switch
// "FusedAdam, foreach -> fused".
TEST(FactsRealTest, ApexFusedAdamIsFused) {
  REVERIE_REQUIRE_GRAPH(g, kRecsys16);
  EXPECT_EQ(g->model.facts.optimizer.name, "FusedAdam");
  EXPECT_EQ(g->model.facts.optimizer.implementation, "fused");
  const Prediction p = Predict(*g, {"fused_adam.lua"});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Report(p).outcome, lua::ScriptOutcome::kUnchanged);
  EXPECT_THAT(Report(p).outcome_reason, HasSubstr("already fused"));
  EXPECT_DOUBLE_EQ(p.speedup(), 1.0);
}

// HTA's 128-rank sample steps two optimizers in turn, Shampoo then an EMA
// of the weights; both are named (the last one alone was), and neither has
// a fused implementation: fused_adam.lua refuses (it removed 44 ms of
// Shampoo's step as if one kernel could do it), unless told to model one.
TEST(FactsRealTest, TwoOptimizersAreBothNamedAndShampooIsNotFused) {
  REVERIE_REQUIRE_GRAPH(g, kShampoo128);
  EXPECT_EQ(g->model.facts.optimizer.name, "Shampoo + EMAOptimizer");
  Prediction p = Predict(*g, {"fused_adam.lua"});
  EXPECT_EQ(p.status.code(), absl::StatusCode::kFailedPrecondition) << p.status;
  EXPECT_THAT(p.status.message(),
              HasSubstr("Shampoo and EMAOptimizer have no fused implementation"));
  // The trace names no GPU: the scripts that need the GPU table refuse in
  // one line (they raised with a script location and traceback).
  for (const char* script : {"async_copy.lua", "batch_size.lua", "p3.lua"}) {
    std::vector<std::pair<std::string, std::string>> sets;
    if (script == std::string_view("async_copy.lua")) sets = {{"pin_memory", "true"}};
    p = Predict(*g, {script}, sets);
    EXPECT_EQ(p.status.code(), absl::StatusCode::kFailedPrecondition) << script << ": " << p.status;
    EXPECT_THAT(p.status.message(), HasSubstr("has no name in the trace's deviceProperties"))
        << script;
  }
}

// ddp.lua re-times gradient all-reduces for more workers. Where a trace's
// communication kernels are only send/recv (the recsys traces' all-to-all),
// it refuses instead of predicting "no change"; where some are other
// collectives, the log says they were left as recorded.
TEST(FactsRealTest, DdpRetimesAllReducesOnlyAndSaysWhatItLeft) {
  REVERIE_REQUIRE_GRAPH(sendrecv, kShampoo128);
  Prediction p = Predict(*sendrecv, {"ddp.lua"}, {{"workers", "256"}});
  EXPECT_EQ(p.status.code(), absl::StatusCode::kFailedPrecondition) << p.status;
  EXPECT_THAT(p.status.message(), HasSubstr("no all-reduce (10 SendRecv)"));
  REVERIE_REQUIRE_GRAPH(nccl, testing::kNcclTrace);
  p = Predict(*nccl, {"ddp.lua"}, {{"workers", "32"}});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_THAT(Report(p).log, ::testing::Contains(HasSubstr("left as recorded: 6 Broadcast")));
  // Longer all-reduces; this CPU-bound step (166 ms of CPU alone) hides them.
  EXPECT_LE(p.speedup(), 1.0);
}

TEST(FactsRealTest, ResnetSampleIsAForLoopSgdWithZeroGradAndMainThreadLoading) {
  REVERIE_REQUIRE_GRAPH(g, testing::kResnetSampleTrace);
  const depgraph::TraceFacts& f = g->model.facts;
  EXPECT_EQ(f.optimizer.name, "SGD");
  EXPECT_EQ(f.optimizer.implementation, "for-loop");
  EXPECT_NEAR(f.optimizer.zero_grad_kernels, 161, 1);
  EXPECT_EQ(f.optimizer.origin.source, depgraph::FactSource::kRecorded);
  EXPECT_EQ(f.dataloader.mode, "main thread");
  EXPECT_GT(f.dataloader.loading_us_per_step, 50'000);
  EXPECT_EQ(f.precision.compute, "fp32");
  EXPECT_FALSE(f.data_parallel.used);
}

// info --json carries the facts on every shared trace it can build a graph of.
TEST(FactsRealTest, InfoJsonHasFactsOnEveryTrace) {
  const std::filesystem::path root(testing::TracesDir());
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "no shared traces under " << root;
  int built = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.find("_et.") != std::string::npos ||
        !(name.ends_with(".json") || name.ends_with(".json.gz"))) {
      continue;
    }
    std::string error;
    const testing::RealGraph* g = testing::LoadRealGraph(e.path().string(), &error);
    if (g == nullptr) continue;  // refused in one line: its own tests
    const whatif::GraphView v = whatif::ViewOf(g->trace, g->graph, g->baseline, g->stats);
    const std::string json = whatif::InfoJson(g->trace, Summarize(g->trace), v);
    EXPECT_THAT(json, HasSubstr("\"facts\"")) << name;
    ++built;
  }
  EXPECT_GE(built, 38);
}

TEST(FactsRealTest, ScriptsSayNothingToChangeWhereTheRunAlreadyDoesIt) {
  REVERIE_REQUIRE_TRACE(mi300, testing::kMi300DdpTrace);
  const testing::RealGraph* g = testing::LoadOrFail(mi300);
  ASSERT_NE(g, nullptr);
  Prediction p = Predict(*g, {"activation_checkpointing.lua"});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Report(p).outcome, lua::ScriptOutcome::kUnchanged);
  EXPECT_THAT(Report(p).outcome_reason, HasSubstr("already checkpoints"));
  EXPECT_DOUBLE_EQ(p.speedup(), 1.0);
  // Mixed precision on runs whose compute kernels are bf16 already (the
  // MI300X DDP training and OWLv2's inference on an H100): nothing to change,
  // the precision named; force=true applies the cost model anyway.
  p = Predict(*g, {"amp.lua"});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Report(p).outcome, lua::ScriptOutcome::kUnchanged);
  EXPECT_THAT(Report(p).outcome_reason, HasSubstr("already run in bf16"));
  EXPECT_DOUBLE_EQ(p.speedup(), 1.0);
  REVERIE_REQUIRE_TRACE(owl, kOwl);
  const testing::RealGraph* o = testing::LoadOrFail(owl);
  ASSERT_NE(o, nullptr);
  p = Predict(*o, {"amp.lua"});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Report(p).outcome, lua::ScriptOutcome::kUnchanged);
  EXPECT_DOUBLE_EQ(p.speedup(), 1.0);
  p = Predict(*o, {"amp.lua"}, {{"force", "true"}});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Report(p).outcome, lua::ScriptOutcome::kApplied);
  // bf16 -> fp16 at the same tensor-core peak: within 2% either way.
  EXPECT_NEAR(p.speedup(), 1.0, 0.02);
  // Checkpointing an inference run recomputes nothing: it says so instead
  // of "applied" with no change (a hunt found it on every inference trace).
  p = Predict(*o, {"activation_checkpointing.lua"});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Report(p).outcome, lua::ScriptOutcome::kUnchanged);
  EXPECT_THAT(Report(p).outcome_reason, HasSubstr("an inference trace"));
  // A trace whose DataLoader already uses workers: num_workers is refused,
  // naming why and what still applies.
  REVERIE_REQUIRE_TRACE(d1, testing::kLoaderBs16Trace);
  const testing::RealGraph* w = testing::LoadOrFail(d1);
  ASSERT_NE(w, nullptr);
  p = Predict(*w, {"dataloader.lua"}, {{"num_workers", "4"}});
  EXPECT_EQ(p.status.code(), absl::StatusCode::kFailedPrecondition) << p.status;
  EXPECT_THAT(p.status.message(), HasSubstr("refused: the trace's DataLoader already uses worker"));
}

// fused_adam on an SGD model fuses the optimizer's step (PyTorch's fused
// SGD), not zero_grad: its saving is bounded by the Optimizer.step span.
TEST(FactsRealTest, FusedOptimizerSavesNoMoreThanTheOptimizerStep) {
  REVERIE_REQUIRE_GRAPH(g, testing::kResnetSampleTrace);
  const Prediction p = Predict(*g, {"fused_adam.lua"});
  ASSERT_TRUE(p.status.ok()) << p.status;
  const double saved_us = p.base_us - p.pred_us;
  EXPECT_GT(saved_us, 0);
  EXPECT_LE(saved_us, g->model.facts.optimizer.step_us);
  EXPECT_THAT(Report(p).log.back(), HasSubstr("SGD, for-loop -> fused"));
}

// fused Adam on a foreach Adam: the fused kernel makes Adam's 7 passes over
// the parameters at the time the trace's own foreach ops take per pass
// (tests/data/validation/h100: GPT-2 small on an H100, in the repository).
TEST(FactsRealTest, FusedAdamIsTimedByItsPassesOverTheParameters) {
  const testing::RealGraph* g = testing::LoadOrFail(
      std::string(REVERIE_SOURCE_DIR) + "/tests/data/validation/h100/gpt2_fp32_r1.json.gz");
  ASSERT_NE(g, nullptr);
  const Prediction p = Predict(*g, {"fused_adam.lua"});
  ASSERT_TRUE(p.status.ok()) << p.status;
  const std::string log = Report(p).log.back();
  EXPECT_THAT(log, HasSubstr("Adam, foreach -> fused"));
  EXPECT_THAT(log, HasSubstr("7 passes over the parameters"));
  // 49 kernels of 3,333 us become one of 7 x the median pass (187 us):
  // well under the removed time, as fusion saves six passes of 13.
  const double saved_us = p.base_us - p.pred_us;
  EXPECT_GT(saved_us, 1500);
  EXPECT_LE(saved_us, g->model.facts.optimizer.step_us);
  // An explicit factor still sets the fused kernel to that share.
  const Prediction same = Predict(*g, {"fused_adam.lua"}, {{"fused_time_factor", "1"}});
  ASSERT_TRUE(same.status.ok()) << same.status;
  EXPECT_THAT(Report(same).log.back(), HasSubstr("1.00x the removed kernels' time"));
  EXPECT_LT(p.pred_us, same.pred_us);
}

// The compute kernels' type from the ops that launched them, where those
// recorded input types: GPT-2's bf16 run (tests/data/validation/h100) calls
// cuBLASLt's nvjet GEMMs, whose names say no type, and cuDNN's flash
// attention, whose names say f16 for bf16 too; by names alone 63% of its
// compute time read bf16, 9% fp16 and 28% unknown.
TEST(FactsRealTest, PrecisionFromTheLaunchingOpsInputTypes) {
  const testing::RealGraph* g = testing::LoadOrFail(
      std::string(REVERIE_SOURCE_DIR) + "/tests/data/validation/h100/gpt2_bf16_r1.json.gz");
  ASSERT_NE(g, nullptr);
  const depgraph::PrecisionFact& f = g->model.facts.precision;
  EXPECT_EQ(f.compute, "bf16");
  EXPECT_DOUBLE_EQ(f.share, 1.0);
  EXPECT_EQ(f.origin.source, depgraph::FactSource::kRecorded);
  ASSERT_EQ(f.by_type_ns.size(), 1u);
  EXPECT_EQ(f.by_type_ns[0].first, "bf16");
}

// A shipped script copied under another name, so one run can hold it twice
// with different settings ("back.to"); removed with its folder.
class ScriptCopy {
 public:
  ScriptCopy(const char* script, const char* tag)
      : dir_(std::filesystem::temp_directory_path() /
             (std::string("reverie_") + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    std::filesystem::copy_file(std::string(REVERIE_SOURCE_DIR "/scripts/") + script,
                               dir_ / "back.lua",
                               std::filesystem::copy_options::overwrite_existing);
  }
  ~ScriptCopy() { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "back.lua").string(); }

 private:
  std::filesystem::path dir_;
};

// Both orders of two scripts predict the same step within `tolerance`.
void ExpectOrdersAgree(const testing::RealGraph& g, const std::string& a_script,
                       const std::string& b_script,
                       const std::vector<std::pair<std::string, std::string>>& sets,
                       double tolerance, const std::string& label) {
  const Prediction a = Predict(g, {a_script, b_script}, sets);
  const Prediction b = Predict(g, {b_script, a_script}, sets);
  ASSERT_TRUE(a.status.ok() && b.status.ok()) << a.status << b.status;
  EXPECT_NEAR(b.pred_us, a.pred_us, tolerance * a.pred_us) << label;
}

// Every script's cost model is calibrated on the trace as measured, not on
// the previous script's result: a GPU change and CUDA graphs commute (the
// model fitted after cuda_graphs.lua read its 0 us launches as the GPU's
// fixed cost: 1.951x on the README's example, for 1.806x the other way).
TEST(FactsRealTest, AGpuChangeAndCudaGraphsCommute) {
  const testing::RealGraph* g =
      testing::LoadOrFail(std::string(REVERIE_SOURCE_DIR) + "/examples/tiny_mlp_training.json");
  ASSERT_NE(g, nullptr);
  ExpectOrdersAgree(*g, "cuda_graphs.lua", "retarget_gpu.lua", {{"to", "H100-SXM"}}, 1e-6, "");
}

// A GPU change moves the kernels from where an earlier one put them
// (graph:set_gpu), so there and back gives the trace's times: before, every
// retime started from the trace's GPU and the way back changed nothing (A100
// -> T4 -> A100 predicted the T4's step). An fp32 trace from a GPU with
// TF32 keeps fp32 on the way back (the program turned TF32 off).
TEST(FactsRealTest, AGpuChangeThereAndBackGivesTheTracesTimes) {
  const ScriptCopy copy("retarget_gpu.lua", "gpu");
  const std::string back = copy.path();
  for (const auto& [trace, gpu] : std::vector<std::pair<std::string, std::string>>{
           {"/examples/tiny_mlp_training.json", "A100-SXM4-80GB"},
           {"/tests/data/validation/h100/resnet50_fp32_r1.json.gz", "H100-SXM"}}) {
    const testing::RealGraph* g = testing::LoadOrFail(std::string(REVERIE_SOURCE_DIR) + trace);
    ASSERT_NE(g, nullptr);
    const Prediction there = Predict(*g, {"retarget_gpu.lua"}, {{"retarget_gpu.to", "T4"}});
    const Prediction round =
        Predict(*g, {"retarget_gpu.lua", back}, {{"retarget_gpu.to", "T4"}, {"back.to", gpu}});
    ASSERT_TRUE(there.status.ok() && round.status.ok()) << there.status << round.status;
    EXPECT_LT(there.speedup(), 0.9) << trace;  // the T4 is slower: the way back has work to do
    EXPECT_NEAR(round.pred_us, round.base_us, 1e-6 * round.base_us) << trace;
    EXPECT_THAT(round.reports[1].log.front(),
                HasSubstr("where an earlier script moved the kernels"));
  }
}

// A batch change scales work from the batch the kernels now run
// (graph:set_batch), and a host copy's time, a batch free's stretch and a
// batch tensor's allocation are functions of the total batch
// (batch_size.lua): x2 then x0.5 gives the trace's step and allocations
// back, and x0.5 twice is x0.25 once. Before, the second change scaled the
// recorded work (0.936x on the H100 ResNet-50 trace), a copy shrunk after
// growing kept a floor taken from its grown time (0.997x on the kineto
// sample), and the resized tensors were no longer recognised (that
// sample's peak 2.79 GB came back as 3.72 GB).
TEST(FactsRealTest, ABatchChangeThereAndBackGivesTheTracesTimes) {
  const ScriptCopy copy("batch_size.lua", "batch");
  const std::string back = copy.path();
  std::vector<std::string> traces;
  for (const char* t :
       {"/examples/tiny_mlp_training.json", "/tests/data/validation/h100/resnet50_fp32_r1.json.gz",
        "/tests/data/validation/h100/gpt2_fp32_r1.json.gz"}) {
    traces.push_back(std::string(REVERIE_SOURCE_DIR) + t);
  }
  // With host copies and main-thread loading; checked where the traces are.
  if (const std::string sample = testing::TracePath(testing::kResnetSampleTrace); !sample.empty()) {
    traces.push_back(sample);
  }
  for (const std::string& trace : traces) {
    const testing::RealGraph* g = testing::LoadOrFail(trace);
    ASSERT_NE(g, nullptr);
    for (const auto& [there, back_factor] : std::vector<std::pair<std::string, std::string>>{
             {"2", "0.5"}, {"0.25", "4"}, {"0.5", "2"}}) {
      const Prediction round =
          Predict(*g, {"batch_size.lua", back},
                  {{"batch_size.factor", there}, {"back.factor", back_factor}});
      ASSERT_TRUE(round.status.ok()) << round.status;
      // Durations are whole ns, rounded at each change.
      EXPECT_NEAR(round.pred_us, round.base_us, 5e-5 * round.base_us) << trace << " x" << there;
      // Every allocation (and free) is back at its recorded size.
      const auto before = g->graph.memory_events();
      const auto after = round.graph.memory_events();
      ASSERT_EQ(after.size(), before.size()) << trace;
      int64_t resized = 0;
      for (size_t i = 0; i < before.size(); ++i) resized += after[i].bytes != before[i].bytes;
      EXPECT_EQ(resized, 0) << trace << " x" << there;
    }
    const Prediction twice = Predict(*g, {"batch_size.lua", back},
                                     {{"batch_size.factor", "0.5"}, {"back.factor", "0.5"}});
    const Prediction once = Predict(*g, {"batch_size.lua"}, {{"batch_size.factor", "0.25"}});
    ASSERT_TRUE(twice.status.ok() && once.status.ok()) << twice.status << once.status;
    EXPECT_NEAR(twice.pred_us, once.pred_us, 5e-5 * once.pred_us) << trace;
  }
}

// amp.lua after a GPU change converts the kernels on the new GPU (its
// kernel_ns, retime and peaks start from graph:gpu()), so the two orders
// agree; before, the later amp.lua used the trace's GPU's fp32-to-half ratio.
TEST(FactsRealTest, AmpAndAGpuChangeAgreeInEitherOrder) {
  const testing::RealGraph* g = testing::LoadOrFail(
      std::string(REVERIE_SOURCE_DIR) + "/tests/data/validation/h100/resnet50_fp32_r1.json.gz");
  ASSERT_NE(g, nullptr);
  for (const char* to : {"A100-SXM4-80GB", "B200"}) {
    ExpectOrdersAgree(*g, "amp.lua", "retarget_gpu.lua",
                      {{"retarget_gpu.to", to}, {"amp.dtype", "bf16"}}, 0.005, to);
  }
}

// amp.lua after a batch change converts the kernels at the batch they now
// run and sizes its input casts and layout transposes (activations) at it,
// so the two orders agree (2.6% apart when the casts kept the trace's batch).
TEST(FactsRealTest, AmpAndABatchChangeAgreeInEitherOrder) {
  for (const char* trace : {"/tests/data/validation/h100/resnet50_fp32_r1.json.gz",
                            "/tests/data/validation/h100/gpt2_fp32_r1.json.gz"}) {
    const testing::RealGraph* g = testing::LoadOrFail(std::string(REVERIE_SOURCE_DIR) + trace);
    ASSERT_NE(g, nullptr);
    ExpectOrdersAgree(*g, "amp.lua", "batch_size.lua",
                      {{"batch_size.factor", "2"}, {"amp.dtype", "bf16"}}, 0.005, trace);
  }
}

// The facts are the trace's: after amp.lua in the same run they still say
// fp32, so a second amp.lua reads the kernels the first converted (their
// " [bf16]" marks) and has nothing to change (it added its casts and
// GradScaler again: 1.119x for 1.247x on GPT-2).
TEST(FactsRealTest, AmpAfterAmpHasNothingToChange) {
  const testing::RealGraph* g = testing::LoadOrFail(
      std::string(REVERIE_SOURCE_DIR) + "/tests/data/validation/h100/gpt2_fp32_r1.json.gz");
  ASSERT_NE(g, nullptr);
  const Prediction once = Predict(*g, {"amp.lua"}, {{"dtype", "bf16"}});
  const Prediction twice = Predict(*g, {"amp.lua", "amp.lua"}, {{"dtype", "bf16"}});
  ASSERT_TRUE(once.status.ok() && twice.status.ok()) << once.status << twice.status;
  EXPECT_DOUBLE_EQ(twice.pred_us, once.pred_us);
  ASSERT_EQ(twice.reports.size(), 2u);
  EXPECT_THAT(twice.reports[1].log.back(), HasSubstr("already converted"));
  // What amp.lua reads: t.converted, the math of the retime's marker.
  const std::filesystem::path probe = std::filesystem::temp_directory_path() /
                                      ("reverie_converted_" + std::to_string(::getpid()) + ".lua");
  {
    std::ofstream out(probe);
    out << "local n = 0\n"
           "for t in graph:select{kind = 'kernel'}:tasks() do\n"
           "  if t.converted == 'bf16' then n = n + 1 end\n"
           "end\n"
           "print('converted to bf16: ' .. n)\n";
  }
  const Prediction before = Predict(*g, {probe.string()});
  const Prediction after = Predict(*g, {"amp.lua", probe.string()}, {{"dtype", "bf16"}});
  std::filesystem::remove(probe);
  ASSERT_TRUE(before.status.ok() && after.status.ok()) << before.status << after.status;
  EXPECT_THAT(before.reports[0].log.back(), HasSubstr("converted to bf16: 0"));
  ASSERT_EQ(after.reports.size(), 2u);
  EXPECT_THAT(after.reports[1].log.back(), ::testing::Not(HasSubstr("converted to bf16: 0")));
}

}  // namespace
}  // namespace reverie
