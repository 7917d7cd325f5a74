// graph:simulate() inside a script reads its steps as the command that runs
// the script reads the prediction: in the baseline's frame
// (depgraph/step_time.h). A script that checks its own result, or decides
// from it, sees the step `predict` prints (a hunt found them 0.875x against
// 1.068x on one trace: one said slower, the other faster).
#include <cstdlib>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "whatif/pipeline.h"

namespace reverie {
namespace {

const std::string kTrace =
    std::string(REVERIE_SOURCE_DIR) + "/tests/data/validation/h100/resnet50_fp32_r1.json.gz";

// Halves every CPU task and gap and a third of the kernels (work only
// shrinks), then logs the step graph:simulate() reads.
constexpr char kScript[] = R"lua(
local cpu = graph:select{kind = "cpu"}
cpu:scale(0.5)
cpu:scale_gap(0.5)
local i = 0
for t in graph:select{kind = "kernel"}:tasks() do
  i = i + 1
  if i % 3 == 0 then t.duration_ns = t.duration_ns // 2 end
end
reverie.log(string.format("%.3f", graph:simulate().mean_step_ns))
)lua";

TEST(ScriptSimulateTest, AScriptSimulatesTheStepThePredictionReports) {
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> base = whatif::LoadAndSimulate(kTrace);
  ASSERT_TRUE(base.ok()) << base.status();
  whatif::ScriptSpec spec;
  spec.scripts = {"check.lua"};
  spec.sources = {{"check.lua", kScript}};
  absl::StatusOr<whatif::Prediction> p = whatif::Predict(**base, spec);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->reports.size(), 1u);
  ASSERT_EQ(p->reports[0].log.size(), 1u);
  const double in_script = std::strtod(p->reports[0].log[0].c_str(), nullptr);
  EXPECT_NEAR(in_script, p->sim.mean_step_ns(), 0.001);
  EXPECT_LT(p->sim.mean_step_ns(), (*base)->baseline.mean_step_ns());  // not vacuous
}

}  // namespace
}  // namespace reverie
