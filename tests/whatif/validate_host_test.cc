// `reverie validate`'s host-speed attribution (whatif/validate.h,
// depgraph/host_speed.h) on the repository's H100 pairs: the same program
// compared with itself has the same host speed and the attribution changes
// nothing; where AFTER's host launched faster (or slower) the prediction at
// its speed is no later (no earlier) than the prediction, the simulator
// being max-plus; and the figure is never the prediction itself.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "whatif/pipeline.h"
#include "whatif/validate.h"

namespace reverie {
namespace {

const std::string kH100 = std::string(REVERIE_SOURCE_DIR) + "/tests/data/validation/h100/";

std::unique_ptr<whatif::LoadedTrace> Load(const std::string& name) {
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> t = whatif::LoadAndSimulate(kH100 + name);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? std::move(*t) : nullptr;
}

whatif::Validation Check(const whatif::LoadedTrace& before, const whatif::LoadedTrace& after,
                         const std::string& script, const std::string& dtype) {
  whatif::ScriptSpec spec;
  spec.scripts = {script};
  if (!dtype.empty()) spec.settings = {{"dtype", dtype}};
  absl::StatusOr<whatif::Validation> v = whatif::ValidatePrediction(before, after, spec, 5);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : whatif::Validation{};
}

TEST(ValidateHostTest, ATraceAgainstItselfHasTheSameHostAndTheSamePrediction) {
  std::unique_ptr<whatif::LoadedTrace> t = Load("resnet50_fp32_r1.json.gz");
  ASSERT_NE(t, nullptr);
  const whatif::Validation v = Check(*t, *t, "identity.lua", "");
  ASSERT_TRUE(v.host.known());
  EXPECT_DOUBLE_EQ(v.host.ratio, 1.0);
  EXPECT_EQ(v.host.before_calls, v.host.after_calls);
  EXPECT_GT(v.host.before_calls, 600);  // ResNet-50's launches in the two steps and around them
  EXPECT_NEAR(v.at_after_host_us, v.predicted.mean_ns / 1e3, 1e-6);
  EXPECT_NEAR(v.at_after_host_error_pct, v.error_pct, 1e-9);
}

TEST(ValidateHostTest, AFasterHostNeverLengthensAndASlowerNeverShortensTheStep) {
  std::unique_ptr<whatif::LoadedTrace> fp32 = Load("resnet50_fp32_r1.json.gz");
  std::unique_ptr<whatif::LoadedTrace> bf16 = Load("resnet50_bf16_r1.json.gz");
  std::unique_ptr<whatif::LoadedTrace> fp32b = Load("resnet50_fp32_r2.json.gz");
  std::unique_ptr<whatif::LoadedTrace> bf16b = Load("resnet50_bf16_r2.json.gz");
  ASSERT_TRUE(fp32 && bf16 && fp32b && bf16b);
  // Repeat 1's bf16 process launched kernels about a third faster than its
  // fp32 baseline's; repeat 2's about a tenth slower (docs/ACCURACY.md).
  const whatif::Validation faster = Check(*fp32, *bf16, "amp.lua", "bf16");
  ASSERT_TRUE(faster.host.known());
  EXPECT_LT(faster.host.ratio, 0.8);
  EXPECT_GT(faster.at_after_host_us, 0);
  EXPECT_LT(faster.at_after_host_us, faster.predicted.mean_ns / 1e3);
  const whatif::Validation slower = Check(*fp32b, *bf16b, "amp.lua", "bf16");
  ASSERT_TRUE(slower.host.known());
  EXPECT_GT(slower.host.ratio, 1.05);
  EXPECT_GT(slower.at_after_host_us, slower.predicted.mean_ns / 1e3);
  // The attribution is reported beside the prediction, never in its place.
  EXPECT_NE(faster.error_pct, faster.at_after_host_error_pct);
  EXPECT_NEAR(faster.error_pct,
              (faster.predicted.mean_ns - faster.measured.mean_ns) / faster.measured.mean_ns * 100,
              1e-9);
  const std::string text = whatif::ValidationText(faster);
  EXPECT_NE(text.find("host: AFTER's kernel launches took 0."), std::string::npos) << text;
  EXPECT_NE(text.find("its CPU ran faster"), std::string::npos) << text;
}

}  // namespace
}  // namespace reverie
