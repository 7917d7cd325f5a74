// whatif::PredictAfter: continuing a prediction of some scripts with more
// gives the prediction of all of them in one run, to the nanosecond, with
// every script's report, the settings used and the changes of all against
// the trace as built (advise's combinations share their first scripts this
// way, whatif/advise.cc).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "whatif/pipeline.h"

namespace reverie {
namespace {

const std::string kTrace =
    std::string(REVERIE_SOURCE_DIR) + "/tests/data/validation/h100/resnet50_fp32_r1.json.gz";

using Settings = std::vector<std::pair<std::string, std::string>>;

whatif::ScriptSpec Spec(std::vector<std::string> scripts, Settings settings) {
  whatif::ScriptSpec spec;
  spec.scripts = std::move(scripts);
  spec.settings = std::move(settings);
  spec.settings_for_several_runs = true;  // as advise's trials run
  return spec;
}

void ExpectSame(const whatif::Prediction& a, const whatif::Prediction& b) {
  ASSERT_EQ(a.sim.steps.size(), b.sim.steps.size());
  for (size_t i = 0; i < a.sim.steps.size(); ++i) {
    EXPECT_EQ(a.sim.steps[i].start_ns, b.sim.steps[i].start_ns) << "step " << i;
    EXPECT_EQ(a.sim.steps[i].end_ns, b.sim.steps[i].end_ns) << "step " << i;
  }
  EXPECT_EQ(a.graph.task_count(), b.graph.task_count());
  EXPECT_EQ(a.graph.live_task_count(), b.graph.live_task_count());
  EXPECT_EQ(a.graph.edge_count(), b.graph.edge_count());
  ASSERT_EQ(a.reports.size(), b.reports.size());
  for (size_t i = 0; i < a.reports.size(); ++i) {
    EXPECT_EQ(a.reports[i].script.display_name, b.reports[i].script.display_name);
    EXPECT_EQ(a.reports[i].log, b.reports[i].log);
  }
  EXPECT_EQ(a.used_settings, b.used_settings);
  EXPECT_EQ(a.changes.added, b.changes.added);
  EXPECT_EQ(a.changes.removed, b.changes.removed);
  EXPECT_EQ(a.changes.modified, b.changes.modified);
  EXPECT_EQ(a.changes.edges_added, b.changes.edges_added);
  EXPECT_DOUBLE_EQ(a.work_factor, b.work_factor);
  EXPECT_EQ(a.samples_per_step, b.samples_per_step);
  EXPECT_EQ(a.runs_on, b.runs_on);
}

TEST(PredictAfterTest, ContinuingIsOneRunOfAllTheScripts) {
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> base = whatif::LoadAndSimulate(kTrace);
  ASSERT_TRUE(base.ok()) << base.status();
  const Settings first = {{"batch_size.factor", "2"}, {"batch_size.batch", "64"}};
  const Settings rest = {{"amp.dtype", "bf16"}};
  Settings all = first;
  all.insert(all.end(), rest.begin(), rest.end());
  absl::StatusOr<whatif::Prediction> whole =
      whatif::Predict(**base, Spec({"batch_size.lua", "amp.lua", "cuda_graphs.lua"}, all));
  ASSERT_TRUE(whole.ok()) << whole.status();
  absl::StatusOr<whatif::Prediction> prefix =
      whatif::Predict(**base, Spec({"batch_size.lua"}, first));
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  // The continuation is given every setting, as advise gives a trial's.
  absl::StatusOr<whatif::Prediction> continued =
      whatif::PredictAfter(**base, *prefix, Spec({"amp.lua", "cuda_graphs.lua"}, all));
  ASSERT_TRUE(continued.ok()) << continued.status();
  ExpectSame(*whole, *continued);
  EXPECT_GT(whole->changes.added, 0);  // amp's casts: the comparison is not vacuous
  EXPECT_LT(continued->sim.mean_step_ns(), prefix->sim.mean_step_ns());
  // The prefix itself is untouched: it serves several continuations.
  absl::StatusOr<whatif::Prediction> again =
      whatif::PredictAfter(**base, *prefix, Spec({"cuda_graphs.lua"}, all));
  ASSERT_TRUE(again.ok()) << again.status();
  absl::StatusOr<whatif::Prediction> whole2 =
      whatif::Predict(**base, Spec({"batch_size.lua", "cuda_graphs.lua"}, all));
  ASSERT_TRUE(whole2.ok()) << whole2.status();
  ExpectSame(*whole2, *again);
}

TEST(PredictAfterTest, AScriptThatChangesNothingAfterwardsKeepsThePrefix) {
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> base = whatif::LoadAndSimulate(kTrace);
  ASSERT_TRUE(base.ok()) << base.status();
  const Settings s = {{"amp.dtype", "bf16"}};
  absl::StatusOr<whatif::Prediction> prefix = whatif::Predict(**base, Spec({"amp.lua"}, s));
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  absl::StatusOr<whatif::Prediction> whole =
      whatif::Predict(**base, Spec({"amp.lua", "identity.lua"}, s));
  ASSERT_TRUE(whole.ok()) << whole.status();
  absl::StatusOr<whatif::Prediction> continued =
      whatif::PredictAfter(**base, *prefix, Spec({"identity.lua"}, s));
  ASSERT_TRUE(continued.ok()) << continued.status();
  ExpectSame(*whole, *continued);
  EXPECT_EQ(continued->sim.mean_step_ns(), prefix->sim.mean_step_ns());
}

TEST(PredictAfterTest, APredictionWithItsOwnScheduleIsNotContinued) {
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> base = whatif::LoadAndSimulate(kTrace);
  ASSERT_TRUE(base.ok()) << base.status();
  absl::StatusOr<whatif::Prediction> prefix = whatif::Predict(**base, Spec({"identity.lua"}, {}));
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  prefix->schedule_kind = transforms::ScheduleChoice::Kind::kCustom;
  absl::StatusOr<whatif::Prediction> continued =
      whatif::PredictAfter(**base, *prefix, Spec({"identity.lua"}, {}));
  ASSERT_FALSE(continued.ok());
  EXPECT_NE(continued.status().message().find("cannot be continued"), std::string::npos);
}

}  // namespace
}  // namespace reverie
