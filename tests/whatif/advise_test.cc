// `reverie advise` (whatif/advise.h) on the example training trace, which
// ships with the sources: the invariants of every answer
// (tests/whatif/advise_checks.h), the answer independent of the thread
// count, the user's --set overriding the settings tried, and a --set no
// tried script declares refused as predict refuses it.
#include "whatif/advise.h"

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/whatif/advise_checks.h"
#include "whatif/pipeline.h"

namespace reverie {
namespace {

using ::testing::HasSubstr;

const whatif::LoadedTrace& Tiny() {
  static const whatif::LoadedTrace* t = [] {
    absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> l =
        whatif::LoadAndSimulate(std::string(REVERIE_SOURCE_DIR) + "/examples/tiny_mlp_training.json");
    EXPECT_TRUE(l.ok()) << l.status();
    return l.ok() ? l->release() : nullptr;
  }();
  return *t;
}

absl::StatusOr<whatif::Advice> AdviseTiny(int threads, whatif::ScriptSpec spec = {}) {
  whatif::AdviseOptions o;
  o.spec = std::move(spec);
  o.threads = threads;
  return whatif::Advise(Tiny(), o);
}

TEST(AdviseTest, AnswerHoldsItsInvariants) {
  absl::StatusOr<whatif::Advice> a = AdviseTiny(2);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_GE(a->candidates.size(), 3u);
  EXPECT_EQ(a->diagnosis.lines.size(), 3u);
  EXPECT_FALSE(a->not_tried.empty());  // identity.lua at least
  testing::CheckAdvice(Tiny(), *a);
}

TEST(AdviseTest, SameAnswerOnOneThreadAndOnSeveral) {
  absl::StatusOr<whatif::Advice> one = AdviseTiny(1), four = AdviseTiny(4);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_EQ(one->threads, 1);
  four->threads = 1;
  EXPECT_EQ(whatif::AdviceJson(*one, 1000), whatif::AdviceJson(*four, 1000));
}

TEST(AdviseTest, UserSettingOverridesTheTablesForTheScriptDeclaringIt) {
  whatif::ScriptSpec spec;
  spec.settings = {{"dataloader.num_workers", "4"}, {"dtype", "fp16"}};
  absl::StatusOr<whatif::Advice> a = AdviseTiny(2, spec);
  ASSERT_TRUE(a.ok()) << a.status();
  int dataloader = 0;
  for (const whatif::Candidate& c : a->candidates) {
    if (c.script == "dataloader.lua") {
      ++dataloader;
      EXPECT_EQ(c.label, "dataloader.lua num_workers=4");
      EXPECT_TRUE(c.same_gain.empty());
    }
    if (c.script == "amp.lua") {
      EXPECT_EQ(c.label, "amp.lua dtype=fp16");
    }
  }
  EXPECT_LE(dataloader, 1);
  testing::CheckAdvice(Tiny(), *a, spec.settings);
}

TEST(AdviseTest, SettingNoTriedScriptDeclaresIsRefused) {
  whatif::ScriptSpec spec;
  spec.settings = {{"no_such_key", "1"}};
  absl::StatusOr<whatif::Advice> a = AdviseTiny(2, spec);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(), HasSubstr("no_such_key"));
  spec.settings = {{"vdnn.fraction", "1"}};
  a = AdviseTiny(2, spec);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("vdnn"));
}

// The H100 training traces recorded for the validation corpus
// (tests/data/validation/h100, in the repository).
std::unique_ptr<whatif::LoadedTrace> LoadH100(const std::string& name) {
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> l = whatif::LoadAndSimulate(
      std::string(REVERIE_SOURCE_DIR) + "/tests/data/validation/h100/" + name);
  EXPECT_TRUE(l.ok()) << l.status();
  return l.ok() ? *std::move(l) : nullptr;
}

// FP32 ResNet-50 on an H100: bf16 (the GPU has it) is advised, backed by
// the bf16 pairs; the same model recorded in bf16 is never advised AMP.
TEST(AdviseTest, Bf16IsAdvisedOnFp32AndNeverOnBf16) {
  std::unique_ptr<whatif::LoadedTrace> fp32 = LoadH100("resnet50_fp32_r1.json.gz");
  std::unique_ptr<whatif::LoadedTrace> bf16 = LoadH100("resnet50_bf16_r1.json.gz");
  ASSERT_TRUE(fp32 && bf16);
  whatif::AdviseOptions o;
  o.threads = 2;
  absl::StatusOr<whatif::Advice> a = whatif::Advise(*fp32, o);
  ASSERT_TRUE(a.ok()) << a.status();
  testing::CheckAdvice(*fp32, *a);
  ASSERT_FALSE(a->candidates.empty());
  EXPECT_EQ(a->candidates[0].label, "amp.lua dtype=bf16");  // the GPU bounds this step
  EXPECT_TRUE(a->candidates[0].backing.exact);
  EXPECT_THAT(a->candidates[0].confidence, HasSubstr("A1"));
  EXPECT_EQ(a->diagnosis.side, "GPU");
  absl::StatusOr<whatif::Advice> b = whatif::Advise(*bf16, o);
  ASSERT_TRUE(b.ok()) << b.status();
  testing::CheckAdvice(*bf16, *b);
  for (const whatif::Candidate& c : b->candidates) EXPECT_NE(c.script, "amp.lua");
  bool said_why = false;
  for (const whatif::NotApplicable& n : b->not_applicable) {
    if (n.script == "amp.lua") {
      said_why = n.outcome == "unchanged" && n.reason.find("bf16") != std::string::npos;
    }
  }
  EXPECT_TRUE(said_why);
}

// A setting for a script that then refuses this trace (no DataLoader time
// recorded) is accepted, and the refusal names it.
TEST(AdviseTest, SettingForAScriptThatRefusesIsAccepted) {
  std::unique_ptr<whatif::LoadedTrace> t = LoadH100("resnet50_fp32_r1.json.gz");
  ASSERT_TRUE(t);
  whatif::AdviseOptions o;
  o.threads = 2;
  o.spec.settings = {{"num_workers", "4"}};
  absl::StatusOr<whatif::Advice> a = whatif::Advise(*t, o);
  ASSERT_TRUE(a.ok()) << a.status();
  bool named = false;
  for (const whatif::NotApplicable& n : a->not_applicable) {
    named |= n.script == "dataloader.lua" && n.label == "num_workers=4" && n.outcome == "refused";
  }
  EXPECT_TRUE(named);
}

// Two candidates with gains `g1` > `g2`, each predicted over `steps` steps of
// mean 100 ms and standard deviation `sd_ms`; the second backed by a pair.
std::vector<whatif::Candidate> TwoCandidates(double g1, double g2, int steps, double sd_ms) {
  std::vector<whatif::Candidate> c(2);
  c[0].label = "cuda_graphs.lua";
  c[1].label = "dataloader.lua num_workers=2";
  c[1].backing.pairs.push_back({});
  c[1].confidence = "error -12.9% (D1)";
  for (int i = 0; i < 2; ++i) {
    c[i].result.throughput_speedup = i == 0 ? g1 : g2;
    c[i].result.predicted = {.counted = steps, .mean_ns = 100e6, .stddev_ns = sd_ms * 1e6};
  }
  return c;
}

// The first place settled on two candidates; returns the note and the
// label now first (and checks the swap is said exactly when it happened).
std::pair<std::string, std::string> Settle(std::vector<whatif::Candidate> c) {
  const std::string was = c.empty() ? "" : c[0].label;
  bool swapped = true;
  std::string note = whatif::SettleFirstPlace(&c, &swapped);
  const std::string first = c.empty() ? "" : c[0].label;
  EXPECT_EQ(swapped, first != was);
  EXPECT_EQ(swapped, note.find("is listed first") != std::string::npos);
  return {note, first};
}

TEST(AdviseTest, WithinTheirNoiseTheFirstTwoGoByEvidence) {
  // 3.6% apart; relative standard errors 20/sqrt(6)/100 = 8.2% and 0.4%:
  // the noise (16.3%) covers the difference, and only the second is
  // backed by a measured pair: it goes first.
  auto [note, first] = Settle(TwoCandidates(1.551, 1.497, 6, 20));
  EXPECT_EQ(first, "dataloader.lua num_workers=2");
  EXPECT_THAT(note, HasSubstr("3.6% apart"));
  EXPECT_THAT(note, HasSubstr("dataloader.lua num_workers=2 is listed first, as only it is "
                              "backed by measured pairs (error -12.9% (D1)); cuda_graphs.lua "
                              "predicts the larger gain"));
  // Backed first already: it stays, and the order is said to be open.
  std::vector<whatif::Candidate> backed_first = TwoCandidates(1.551, 1.497, 6, 20);
  backed_first[0].backing.pairs.push_back({});
  backed_first[0].confidence = "error +1.0% (F1)";
  backed_first[1].backing.pairs.clear();
  std::tie(note, first) = Settle(backed_first);
  EXPECT_EQ(first, "cuda_graphs.lua");
  EXPECT_THAT(note, HasSubstr("order is not decided; only cuda_graphs.lua is backed"));
  // Both backed: open, by gain.
  backed_first[1].backing.pairs.push_back({});
  std::tie(note, first) = Settle(backed_first);
  EXPECT_EQ(first, "cuda_graphs.lua");
  EXPECT_THAT(note, ::testing::EndsWith("their order is not decided"));
  // Steady steps: the same 3.6% is decided by gain.
  EXPECT_EQ(Settle(TwoCandidates(1.551, 1.497, 6, 0.5)),
            std::make_pair(std::string(), std::string("cuda_graphs.lua")));
  // One step has no noise to judge by; one candidate has no second.
  EXPECT_EQ(Settle(TwoCandidates(1.551, 1.497, 1, 20)).first, "");
  std::vector<whatif::Candidate> one = TwoCandidates(1.5, 1.4, 6, 20);
  one.pop_back();
  EXPECT_EQ(Settle(one), std::make_pair(std::string(), std::string("cuda_graphs.lua")));
  // When even the first slows the step, there is no first try to choose;
  // a backed second that slows the step never goes first.
  EXPECT_EQ(Settle(TwoCandidates(0.99, 0.98, 6, 20)),
            std::make_pair(std::string(), std::string("cuda_graphs.lua")));
  EXPECT_EQ(Settle(TwoCandidates(1.05, 0.99, 6, 20)),
            std::make_pair(std::string(), std::string("cuda_graphs.lua")));
}

}  // namespace
}  // namespace reverie
