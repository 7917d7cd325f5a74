#include "whatif/compare.h"

#include "gtest/gtest.h"

namespace reverie::whatif {
namespace {

// Name patterns are depgraph's (kernel_class_test.cc); what compare adds is
// that the activity kind wins over a misleading name.
TEST(ClassifyKernelTest, ActivityKindOverridesTheName) {
  EXPECT_EQ(ClassifyKernel("gemm_staging_copy", proto::GpuActivity::MEMCPY), KernelClass::kMemcpy);
  EXPECT_EQ(ClassifyKernel("Memset (Device)", proto::GpuActivity::MEMSET), KernelClass::kMemset);
  EXPECT_EQ(ClassifyKernel("volta_sgemm_128x64_nn"), KernelClass::kGemm);
}

void AddKernel(Trace& t, const char* name, int64_t start, int64_t dur) {
  proto::GpuActivity* g = t.events().add_gpu_activities();
  g->set_kind(proto::GpuActivity::KERNEL);
  g->set_name_sid(t.Intern(name));
  g->set_start_ns(start);
  g->set_end_ns(start + dur);
}

void AddStep(Trace& t, int64_t start, int64_t end) {
  proto::Step* it = t.events().add_steps();
  it->set_start_ns(start);
  it->set_end_ns(end);
}

TEST(CompareTest, PerStepDiffsAndOnlyIn) {
  Trace a, b;
  // A: 2 steps of 10 ms; gemm 2 ms + conv 1 ms each.
  AddStep(a, 0, 10'000'000);
  AddStep(a, 10'000'000, 20'000'000);
  for (int i = 0; i < 2; ++i) {
    AddKernel(a, "volta_sgemm_128x64_nn", i * 10'000'000, 2'000'000);
    AddKernel(a, "implicit_convolve_sgemm", i * 10'000'000 + 3'000'000, 1'000'000);
  }
  // B: 1 step of 8 ms; gemm 3 ms, and a kernel A lacks.
  AddStep(b, 0, 8'000'000);
  AddKernel(b, "volta_sgemm_128x64_nn", 0, 3'000'000);
  AddKernel(b, "ncclKernel_AllReduce", 3'000'000, 500'000);
  const CompareResult r = Compare(ProfileTrace(a, "a.json"), ProfileTrace(b, "b.pb"));
  EXPECT_DOUBLE_EQ(r.a_step_ns, 10e6);
  EXPECT_DOUBLE_EQ(r.b_step_ns, 8e6);
  EXPECT_DOUBLE_EQ(r.relative_error, 0.25);
  ASSERT_EQ(r.classes.size(), static_cast<size_t>(kKernelClassCount));
  const Diff& gemm = r.classes[static_cast<int>(KernelClass::kGemm)];
  EXPECT_DOUBLE_EQ(gemm.a_ns, 2e6);
  EXPECT_DOUBLE_EQ(gemm.b_ns, 3e6);
  EXPECT_DOUBLE_EQ(gemm.a_count, 1);
  ASSERT_EQ(r.kernels.size(), 1u);
  ASSERT_EQ(r.only_in_a.size(), 1u);
  EXPECT_EQ(r.only_in_a[0].name, "implicit_convolve_sgemm");
  ASSERT_EQ(r.only_in_b.size(), 1u);
  EXPECT_EQ(r.only_in_b[0].name, "ncclKernel_AllReduce");
  const std::string json = CompareJson(r);
  EXPECT_NE(json.find("\"relative_error\":0.25"), std::string::npos) << json;
  EXPECT_NE(json.find("\"only_in_b\":[{\"name\":\"ncclKernel_AllReduce\""), std::string::npos);
  const std::string text = CompareText(r);
  EXPECT_NE(text.find("error +25.00%"), std::string::npos) << text;
}

TEST(CompareTest, PidSelectsOneRunByCorrelation) {
  Trace t;
  for (int pid = 1; pid <= 2; ++pid) {
    proto::ApiCall* a = t.events().add_api_calls();
    a->set_pid(pid);
    a->set_correlation_id(pid * 10);
    a->set_start_ns(0);
    a->set_end_ns(10);
    AddKernel(t, pid == 1 ? "k_measured" : "k_predicted", 20, 100 * pid);
    t.events().mutable_gpu_activities()->rbegin()->set_correlation_id(pid * 10);
    proto::Step* it = t.events().add_steps();
    it->set_pid(pid);
    it->set_start_ns(0);
    it->set_end_ns(1000 * pid);
  }
  const TraceProfile p2 = ProfileTrace(t, "tl.json", 2);
  EXPECT_EQ(p2.path, "tl.json (pid 2)");
  EXPECT_EQ(p2.steps, 1);
  EXPECT_DOUBLE_EQ(p2.step_ns, 2000);
  EXPECT_EQ(p2.kernels.size(), 1u);
  EXPECT_TRUE(p2.kernels.contains("k_predicted"));
  EXPECT_EQ(ProfileTrace(t, "tl.json").kernels.size(), 2u);
}

TEST(CompareTest, NoStepsUsesSpan) {
  Trace t;
  AddKernel(t, "k", 100, 50);
  AddKernel(t, "k", 1000, 100);
  const TraceProfile p = ProfileTrace(t, "x");
  EXPECT_EQ(p.steps, 0);
  EXPECT_DOUBLE_EQ(p.step_ns, 1000);
  EXPECT_DOUBLE_EQ(p.kernels.at("k").count, 2);
}

}  // namespace
}  // namespace reverie::whatif
