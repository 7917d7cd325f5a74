// `reverie validate`'s host-speed attribution (whatif/validate.h,
// depgraph/host_speed.h) and same-program check on the repository's H100
// pairs: the same program
// compared with itself has the same host speed and the attribution changes
// nothing; where AFTER's host launched faster (or slower) the prediction at
// its speed is no later (no earlier) than the prediction, the simulator
// being max-plus; and the figure is never the prediction itself.
#include <cmath>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/import/import_test_util.h"
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
  ASSERT_TRUE(v.host.launches.known());
  EXPECT_DOUBLE_EQ(v.host.launches.ratio, 1.0);
  EXPECT_EQ(v.host.launches.before_count, v.host.launches.after_count);
  EXPECT_GT(v.host.launches.before_count,
            600);  // ResNet-50's launches in the two steps and around them
  EXPECT_NEAR(v.at_after_host_us, v.predicted.mean_ns / 1e3, 1e-6);
  EXPECT_NEAR(v.at_after_host_error_pct, v.error_pct, 1e-9);
}

// AFTER must be BEFORE's program with the change: ResNet-50 "validated"
// against GPT-2 is warned about (only half of ResNet-50's op names run in
// GPT-2), a fused optimizer's pair is not (it removes a tenth of them).
TEST(ValidateHostTest, AnotherProgramAsAfterIsWarnedAbout) {
  std::unique_ptr<whatif::LoadedTrace> resnet = Load("resnet50_fp32_r1.json.gz");
  std::unique_ptr<whatif::LoadedTrace> fused = Load("resnet50_fused_r1.json.gz");
  std::unique_ptr<whatif::LoadedTrace> gpt2 = Load("gpt2_fp32_r1.json.gz");
  ASSERT_TRUE(resnet && fused && gpt2);
  const whatif::Validation other = Check(*resnet, *gpt2, "identity.lua", "");
  EXPECT_LT(other.op_overlap, whatif::kSameProgramOps);
  EXPECT_NE(whatif::ValidationText(other).find("is AFTER the same program?"), std::string::npos);
  const whatif::Validation same = Check(*resnet, *fused, "fused_adam.lua", "");
  EXPECT_GE(same.op_overlap, whatif::kSameProgramOps);
  EXPECT_LT(same.op_overlap, 1.0);
  EXPECT_EQ(whatif::ValidationText(same).find("same program"), std::string::npos);
  EXPECT_DOUBLE_EQ(Check(*resnet, *resnet, "identity.lua", "").op_overlap, 1.0);
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
  ASSERT_TRUE(faster.host.launches.known());
  EXPECT_LT(faster.host.launches.ratio, 0.8);
  EXPECT_GT(faster.at_after_host_us, 0);
  EXPECT_LT(faster.at_after_host_us, faster.predicted.mean_ns / 1e3);
  const whatif::Validation slower = Check(*fp32b, *bf16b, "amp.lua", "bf16");
  ASSERT_TRUE(slower.host.launches.known());
  EXPECT_GT(slower.host.launches.ratio, 1.05);
  EXPECT_GT(slower.at_after_host_us, slower.predicted.mean_ns / 1e3);
  // The attribution is reported beside the prediction, never in its place.
  EXPECT_NE(faster.error_pct, faster.at_after_host_error_pct);
  EXPECT_NEAR(faster.error_pct,
              (faster.predicted.mean_ns - faster.measured.mean_ns) / faster.measured.mean_ns * 100,
              1e-9);
  const std::string text = whatif::ValidationText(faster);
  EXPECT_NE(text.find("host: AFTER's kernel launches took 0."), std::string::npos) << text;
  EXPECT_NE(text.find("its CPU ran faster"), std::string::npos) << text;
  // Read from BEFORE alone, the prediction says it rests on the host; the
  // identity prediction of a GPU-bound fp32 step does not.
  EXPECT_GE(faster.host_sensitivity_pct, depgraph::kHostBoundPct);
  EXPECT_NE(text.find("bound by the host's CPU"), std::string::npos) << text;
  const whatif::Validation same = Check(*fp32, *fp32, "identity.lua", "");
  EXPECT_GE(same.host_sensitivity_pct, 0);
  EXPECT_LT(same.host_sensitivity_pct, 1);
}

// One step of 30 launches of `launch_us` each, each followed by its kernel.
std::string LaunchTrace(double launch_us) {
  std::string events = R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1",
      "pid": 1, "tid": 1, "ts": 0, "dur": 1e9})";
  double t = 1;
  for (int i = 1; i <= 30; ++i) {
    absl::StrAppend(&events, R"(, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",)",
                    R"( "pid": 1, "tid": 1, "ts": )", t, R"(, "dur": )", launch_us,
                    R"(, "args": {"correlation": )", i, R"(}}, {"ph": "X", "cat": "kernel",)",
                    R"( "name": "k", "pid": 0, "tid": 7, "ts": )", t + launch_us,
                    R"(, "dur": 5, "args": {"correlation": )", i,
                    R"(, "stream": 7, "device": 0}})");
    t += launch_us + 10;
  }
  return testing::KinetoDoc(events);
}

TEST(ValidateHostTest, HostileLaunchTimesStayWithinTheLimits) {
  // Launch medians 1 us and 10^8 us apart: every CPU task scaled by 10^8
  // must saturate at the largest duration a trace may hold, not overflow.
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> before =
      whatif::LoadAndSimulate(testing::WriteTempFile(LaunchTrace(1), ".before.json"));
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> after =
      whatif::LoadAndSimulate(testing::WriteTempFile(LaunchTrace(1e8), ".after.json"));
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(after.ok()) << after.status();
  const whatif::Validation v = Check(**before, **after, "identity.lua", "");
  ASSERT_TRUE(v.host.launches.known());
  EXPECT_NEAR(v.host.launches.ratio, 1e8, 1e2);
  EXPECT_GT(v.at_after_host_us, v.predicted.mean_ns / 1e3);
  EXPECT_TRUE(std::isfinite(v.at_after_host_error_pct)) << v.at_after_host_us;
}

}  // namespace
}  // namespace reverie
