// Many predictions of one loaded trace at once (whatif/trials.h), on a
// synthetic training graph built in memory (no trace file), so the test
// also runs in the ThreadSanitizer build (`cmake --preset tsan`): every
// trial on its own copy of the graph with its own Lua engine, the results
// the same as one at a time.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "depgraph/simulator.h"
#include "transforms/test_graphs.h"
#include "whatif/pipeline.h"
#include "whatif/several.h"
#include "whatif/sweep.h"
#include "whatif/trials.h"

namespace reverie {
namespace {

std::unique_ptr<whatif::LoadedTrace> Synthetic() {
  auto t = std::make_unique<whatif::LoadedTrace>();
  t->path = "synthetic";
  t->graph = transforms::testing::MakeTrainingGraph(3);
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(t->graph);
  EXPECT_TRUE(sim.ok()) << sim.status();
  if (sim.ok()) t->baseline = *std::move(sim);
  (void)t->graph.adjacency();  // as LoadAndSimulate fills the lazy caches
  return t;
}

TEST(TrialsTest, ManyAtOnceEqualOneAtATime) {
  // Never destroyed: in the ThreadSanitizer build the protobuf arena of an
  // (empty) proto Trace crashes in its destructor, whatever the threads
  // did (Debian's libprotobuf is not instrumented).
  static const whatif::LoadedTrace* const base = Synthetic().release();
  const std::string halve =
      "local P = reverie.params{f = {default = 2, doc = 'factor'}}\n"
      "graph:select{kind = 'kernel'}:shrink(P.f)\n";
  whatif::ScriptSpec common;
  common.sources = {{"halve.lua", halve}, {"same.lua", "reverie.nothing_to_change('no')\n"}};
  std::vector<whatif::Trial> trials;
  for (int f = 1; f <= 8; ++f) {
    trials.push_back({{"halve.lua"}, {{"f", std::to_string(f + 1)}}});
    trials.push_back({{"same.lua"}, {}});
  }
  const std::vector<whatif::TrialResult> one = whatif::RunTrials(*base, trials, common, 1);
  const std::vector<whatif::TrialResult> four = whatif::RunTrials(*base, trials, common, 4);
  ASSERT_EQ(one.size(), trials.size());
  ASSERT_EQ(four.size(), trials.size());
  for (size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(one[i].outcome, four[i].outcome) << i << ": " << four[i].reason;
    EXPECT_EQ(one[i].predicted.mean_ns, four[i].predicted.mean_ns) << i;
    EXPECT_EQ(one[i].reason, four[i].reason) << i;
  }
  EXPECT_EQ(four[0].outcome, whatif::TrialOutcome::kApplied) << four[0].reason;
  EXPECT_GT(four[0].speedup, 1.0);
  EXPECT_EQ(four[1].outcome, whatif::TrialOutcome::kUnchanged);
  EXPECT_EQ(four[1].reason, "no");
}

TEST(TrialsTest, ASweepOnAllCoresEqualsOneAtATime) {
  static const whatif::LoadedTrace* const base = Synthetic().release();
  whatif::ScriptSpec spec;
  spec.scripts = {"halve.lua"};
  spec.sources = {{"halve.lua", "local P = reverie.params{f = {default = 2, doc = 'factor'}}\n"
                                "graph:select{kind = 'kernel'}:shrink(P.f)\n"}};
  absl::StatusOr<report::SweepParam> f = report::ParseSweepParam("f=1.5,2,3,4,0,6");
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<int> calls;
  const absl::StatusOr<report::SweepResult> one = whatif::Sweep(*base, spec, {*f}, {}, 1);
  const absl::StatusOr<report::SweepResult> four =
      whatif::Sweep(*base, spec, {*f}, [&calls](int done, int) { calls.push_back(done); }, 4);
  ASSERT_TRUE(one.ok() && four.ok());
  ASSERT_EQ(one->points.size(), 6u);
  ASSERT_EQ(four->points.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(one->points[i].predicted_ns, four->points[i].predicted_ns) << i;
    EXPECT_EQ(one->points[i].error, four->points[i].error) << i;
    EXPECT_EQ(four->points[i].settings[0].second, f->values[i]) << "grid order kept";
  }
  EXPECT_FALSE(four->points[4].error.empty()) << "shrink(0) fails that point alone";
  EXPECT_EQ(calls.size(), 7u) << "once at the start, then once per point";
  EXPECT_EQ(calls.back(), 6);
}

// `reverie report`'s runs (each script, then all together) on all cores:
// the predictions one at a time give, and the first failing run's error.
TEST(TrialsTest, EachAndAllOnAllCoresEqualOneAtATime) {
  static const whatif::LoadedTrace* const base = Synthetic().release();  // see above
  whatif::ScriptSpec spec;
  spec.scripts = {"halve.lua", "third.lua", "copies.lua"};
  spec.sources = {
      {"halve.lua", "graph:select{kind = 'kernel'}:shrink(2)\n"},
      {"third.lua", "graph:select{kind = 'kernel', phase = 'backward'}:shrink(3)\n"},
      {"copies.lua", "graph:select{kind = 'memcpy'}:scale(0.5)\n"}};
  const auto one = whatif::PredictEachAndAll(*base, spec, 1);
  const auto four = whatif::PredictEachAndAll(*base, spec, 4);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(four.ok()) << four.status();
  ASSERT_EQ(one->size(), 4u);
  ASSERT_EQ(four->size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*one)[i].name, (*four)[i].name);
    EXPECT_EQ((*one)[i].prediction.sim.mean_step_ns(), (*four)[i].prediction.sim.mean_step_ns())
        << (*four)[i].name;
  }
  EXPECT_EQ((*four)[3].name, "halve.lua + third.lua + copies.lua");
  EXPECT_LT((*four)[3].prediction.sim.mean_step_ns(), base->baseline.mean_step_ns());
  spec.sources[1].second = "graph:select{kind = 'kernel'}:shrink(0)\n";
  const auto failed = whatif::PredictEachAndAll(*base, spec, 4);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("third.lua"), std::string_view::npos)
      << failed.status();
}

// A prediction that empties a counted step is not an answer to rank.
TEST(TrialsTest, EmptiedStepFailsTheTrial) {
  static const whatif::LoadedTrace* const base = Synthetic().release();  // see above
  whatif::ScriptSpec common;
  common.sources = {{"empty.lua", "graph:select{step = 0}:remove()\n"}};
  const std::vector<whatif::TrialResult> r =
      whatif::RunTrials(*base, {{{"empty.lua"}, {}}}, common, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].outcome, whatif::TrialOutcome::kFailed);
  EXPECT_NE(r[0].reason.find("empties step 0"), std::string::npos) << r[0].reason;
}

}  // namespace
}  // namespace reverie
