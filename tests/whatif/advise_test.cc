// `reverie advise` (whatif/advise.h) on the example training trace, which
// ships with the sources: the invariants of every answer
// (tests/whatif/advise_checks.h), the answer independent of the thread
// count, the user's --set overriding the settings tried, and a --set no
// tried script declares refused as predict refuses it.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/whatif/advise_checks.h"
#include "whatif/advise.h"
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

}  // namespace
}  // namespace reverie
