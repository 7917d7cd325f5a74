// `reverie advise` on the shared traces (label real_traces; each test skips
// when its trace is absent): the invariants of every answer
// (tests/whatif/advise_checks.h), and what issue 28 asks of these traces.
#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"
#include "tests/lua/real_graph.h"
#include "tests/whatif/advise_checks.h"
#include "whatif/advise.h"

namespace reverie {
namespace {

using ::testing::HasSubstr;

struct Answer {
  const whatif::LoadedTrace* base = nullptr;
  whatif::Advice advice;
};

// Advise on `path`, its answer checked against predict (CheckAdvice).
Answer AdviseOn(const std::string& path) {
  Answer out;
  std::string error;
  out.base = testing::LoadRealGraph(path, &error);
  EXPECT_NE(out.base, nullptr) << error;
  if (out.base == nullptr) return out;
  absl::StatusOr<whatif::Advice> a = whatif::Advise(*out.base, {});
  EXPECT_TRUE(a.ok()) << a.status();
  if (!a.ok()) return out;
  out.advice = *std::move(a);
  testing::CheckAdvice(*out.base, out.advice);
  return out;
}

int RankOf(const whatif::Advice& a, const std::string& script) {
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    if (a.candidates[i].script == script) return static_cast<int>(i);
  }
  return -1;
}

const whatif::NotApplicable* NotApplicable(const whatif::Advice& a, const std::string& script) {
  for (const whatif::NotApplicable& n : a.not_applicable) {
    if (n.script == script) return &n;
  }
  return nullptr;
}

// The kineto ResNet-50 sample: 69 of 178 ms per step load data on the
// training thread, which is busy 97% of the step. Data loading ranks
// ahead of every GPU-side change (which gains nothing alone: the CPU then
// bounds the step); CUDA graphs, which remove 81 ms of CPU per step,
// predict a little more (1.55x against 1.50x, within each other's noise).
TEST(AdviseRealTest, ResnetSampleRanksDataLoadingAheadOfFasterKernels) {
  REVERIE_REQUIRE_TRACE(path, testing::kResnetSampleTrace);
  const Answer r = AdviseOn(path);
  ASSERT_NE(r.base, nullptr);
  const whatif::Advice& a = r.advice;
  EXPECT_GE(a.candidates.size(), 3u);
  EXPECT_EQ(a.diagnosis.side, "CPU");
  EXPECT_THAT(a.diagnosis.lines[2], HasSubstr("DataLoader worker processes"));
  // CUDA graphs and the workers gain within the noise of their predicted
  // steps (graphs' steps spread 103-172 ms) and only the workers are backed
  // by measured pairs: data loading ranks first, and the note says why.
  const int loader = RankOf(a, "dataloader.lua");
  ASSERT_EQ(loader, 0);
  EXPECT_GT(a.candidates[loader].gain(), 1.4);
  for (const char* gpu_side : {"amp.lua", "retarget_gpu.lua", "pointwise_fusion.lua"}) {
    const int rank = RankOf(a, gpu_side);
    if (rank >= 0) {
      EXPECT_GT(rank, loader) << gpu_side;
    }
  }
  // The three settings of num_workers predict the same: one candidate.
  EXPECT_EQ(a.candidates[loader].label, "dataloader.lua num_workers=2");
  EXPECT_EQ(a.candidates[loader].same_gain.size(), 2u);
  EXPECT_EQ(a.candidates[1].script, "cuda_graphs.lua");
  EXPECT_GT(a.candidates[1].gain(), a.candidates[0].gain());
  EXPECT_TRUE(a.first_by_evidence);
  EXPECT_THAT(a.order_note, HasSubstr("dataloader.lua num_workers=2 is listed first, as only "
                                      "it is backed by measured pairs"));
  // A combination uses the loader once the CPU is what bounds the step;
  // the best three take CUDA graphs with it, which a search extending only
  // the loader misses (the loader's best pair is with twice the batch).
  ASSERT_FALSE(a.combined.empty());
  const std::vector<std::string>& best = a.combined.back().labels;
  for (const char* script : {"dataloader.lua", "cuda_graphs.lua"}) {
    EXPECT_TRUE(std::any_of(best.begin(), best.end(), [script](const std::string& l) {
      return l.starts_with(script);
    })) << script;
  }
}

// bf16 DDP training on 8 MI300X with activation checkpointing: never
// advised AMP (nothing to change, saying bf16), and communication bounds
// the step.
TEST(AdviseRealTest, Bf16TraceIsNeverAdvisedAmp) {
  REVERIE_REQUIRE_TRACE(path, testing::kMi300DdpTrace);
  const Answer r = AdviseOn(path);
  ASSERT_NE(r.base, nullptr);
  const whatif::Advice& a = r.advice;
  EXPECT_EQ(RankOf(a, "amp.lua"), -1);
  const whatif::NotApplicable* amp = NotApplicable(a, "amp.lua");
  ASSERT_NE(amp, nullptr);
  EXPECT_EQ(amp->outcome, "unchanged");
  EXPECT_THAT(amp->reason, HasSubstr("bf16"));
  EXPECT_EQ(a.diagnosis.bound, whatif::kCommunication);
  EXPECT_GE(RankOf(a, "faster_network.lua"), 0);
  // Its GPU's next generation is what retarget_gpu tries.
  const int retarget = RankOf(a, "retarget_gpu.lua");
  ASSERT_GE(retarget, 0);
  EXPECT_EQ(a.candidates[retarget].label, "retarget_gpu.lua to=MI325X");
}

// HTA's nccl_data: SGD, foreach already, two ranks; CPU-bound.
TEST(AdviseRealTest, NcclDataIsCpuBoundAndHoldsTheInvariants) {
  REVERIE_REQUIRE_TRACE(path, testing::kNcclTrace);
  const Answer r = AdviseOn(path);
  ASSERT_NE(r.base, nullptr);
  EXPECT_EQ(r.advice.diagnosis.side, "CPU");
  EXPECT_GE(r.advice.candidates.size(), 3u);
}

// zoology's trace records runtime calls but no kernel: nothing says what
// the GPU did, so nothing that changes GPU work is a candidate (a batch
// twice as large once doubled its throughput for free) and the diagnosis
// does not say the GPU waits.
TEST(AdviseRealTest, ATraceWithoutGpuActivityGetsNoGpuCandidate) {
  REVERIE_REQUIRE_TRACE(path, "HazyResearch__zoology/trace.json");
  const Answer r = AdviseOn(path);
  ASSERT_NE(r.base, nullptr);
  const whatif::Advice& a = r.advice;
  EXPECT_EQ(a.diagnosis.side, "no GPU");
  ASSERT_EQ(a.diagnosis.lines.size(), 3u);
  EXPECT_THAT(a.diagnosis.lines[2], HasSubstr("no GPU activity"));
  for (const char* script : {"batch_size.lua", "amp.lua", "retarget_gpu.lua"}) {
    EXPECT_EQ(RankOf(a, script), -1) << script;
    const whatif::NotApplicable* n = NotApplicable(a, script);
    ASSERT_NE(n, nullptr) << script;
    EXPECT_THAT(n->reason, HasSubstr("no GPU kernels")) << script;
  }
}

// param's RTX 2080 Ti ResNet already loads data in worker processes and
// still waits on them for half its critical path: the diagnosis asks for
// more workers, not for num_workers > 0 (which the run has).
TEST(AdviseRealTest, DataLoadingThatAlreadyUsesWorkersIsNotAdvisedWorkers) {
  REVERIE_REQUIRE_TRACE(path, testing::kRtxResnetTrace);
  const Answer r = AdviseOn(path);
  ASSERT_NE(r.base, nullptr);
  const whatif::Advice& a = r.advice;
  ASSERT_EQ(r.base->model.facts.dataloader.mode, "worker processes");
  EXPECT_EQ(a.diagnosis.bound, "data loading");
  ASSERT_EQ(a.diagnosis.lines.size(), 3u);
  EXPECT_THAT(a.diagnosis.lines[2], HasSubstr("more DataLoader workers"));
  EXPECT_THAT(a.diagnosis.lines[2], ::testing::Not(HasSubstr("num_workers > 0")));
}

}  // namespace
}  // namespace reverie
