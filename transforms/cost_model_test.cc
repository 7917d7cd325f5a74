// The cost model on a hand-built graph whose kernels follow a known
// efficiency curve: the calibration recovers it, and retiming moves each
// kernel along it as worked out by hand.
#include "transforms/cost_model.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transforms/cost_model_internal.h"
#include "transforms/structure.h"

namespace reverie::transforms {
namespace {

using depgraph::EdgeKind;
using depgraph::Graph;
using depgraph::OpId;
using depgraph::TaskId;
using depgraph::TaskKind;
using depgraph::TaskSpec;
using ::testing::HasSubstr;

constexpr double kFixedNs = 5000;  // what every GEMM costs, however small
constexpr double kCeiling = 0.5;   // the share of peak a large one reaches
constexpr double kFp32Tflops = 19.5;  // A100 fp32 on CUDA cores (sgemm)

hardware::OpArg Tensor(std::vector<int64_t> dims) { return {"float", {std::move(dims)}, "", false}; }

struct Built {
  Graph g;
  std::vector<TaskId> gemms;  // by size, smallest first
  std::vector<TaskId> copies;
  TaskId orphan;              // a kernel launched outside any op
  std::vector<depgraph::DeviceInfo> devices;
};

// m x 1024 @ 1024 x 1024 GEMMs (m = 64 ... 8192) on an A100, each taking
// kFixedNs + R / kCeiling (R its FLOPs at the fp32 peak), and pageable
// host-to-device copies at 10 GB/s plus 2 us. The largest GEMM's n is
// `last_n` in its recorded shapes.
Built Make(int64_t last_n = 1024) {
  Built b;
  Graph& g = b.g;
  const depgraph::ResourceId cpu =
      g.AddResource({depgraph::ResourceKind::kCpuThread, 1, 100, -1, "thread 100", true});
  const depgraph::ResourceId gpu =
      g.AddResource({depgraph::ResourceKind::kGpuStream, 1, 7, 0, "stream 7 (gpu 0)", true});
  g.AddStep({"ProfilerStep#0", 0, 0});
  auto launch = [&](const char* name, TaskKind kind, double ns, OpId op, int64_t bytes) {
    TaskSpec l{
        .kind = TaskKind::kCpuApi,
        .name = kind == TaskKind::kKernel ? "cudaLaunchKernel" : "cudaMemcpyAsync",
        .resource = cpu, .duration_ns = 4000, .phase = depgraph::Phase::kForward, .step = 0};
    const TaskId lt = g.AppendTask(l);
    if (op.valid()) g.set_op(lt, op);
    TaskSpec k{
        .kind = kind, .name = name, .resource = gpu,
        .duration_ns = static_cast<int64_t>(std::nearbyint(ns)),
        .phase = depgraph::Phase::kForward, .step = 0, .bytes = bytes};
    const TaskId kt = g.AppendTask(k);
    g.AddEdge(lt, kt, EdgeKind::kLaunch);
    return kt;
  };
  for (int64_t m = 64; m <= 8192; m *= 2) {
    const OpId op = g.AddOp("aten::mm", OpId(), 1000);
    g.set_op_inputs(op, {Tensor({m, 1024}), Tensor({1024, m == 8192 ? last_n : 1024})});
    const double r = 2.0 * m * 1024 * 1024 / (kFp32Tflops * 1e3);
    b.gemms.push_back(launch("ampere_sgemm_128x64_nn", TaskKind::kKernel, kFixedNs + r / kCeiling, op, 0));
  }
  for (int64_t bytes : {1 << 20, 4 << 20, 16 << 20}) {
    b.copies.push_back(launch("Memcpy HtoD (Pageable -> Device)", TaskKind::kMemcpy,
                              2000 + bytes / 10.0, OpId(), bytes));
  }
  b.orphan = launch("void at::native::vectorized_elementwise_kernel<4>", TaskKind::kKernel, 3000, OpId(), 0);
  depgraph::DeviceInfo d;
  d.id = 0;
  d.name = "NVIDIA A100-SXM4-80GB";
  d.sm_count = 108;
  d.compute_major = 8;
  d.total_memory_bytes = 85095874560;
  b.devices = {d};
  return b;
}

Selection Of(std::vector<TaskId> ids) { return Selection::FromSorted(std::move(ids)); }

RetimeSpec Spec(double work, std::optional<hardware::Math> dtype = std::nullopt,
                const hardware::GpuSpec* dest = nullptr) {
  RetimeSpec s;
  s.work_factor = work;
  s.dtype = dtype;
  s.dest = dest;
  return s;
}

TEST(CostModelTest, CalibrationRecoversTheTracesCurve) {
  const Built b = Make();
  absl::StatusOr<CostModel> m = BuildCostModel(b.g, b.devices);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->gpu.spec.key, "A100-SXM4-80GB");
  EXPECT_THAT(m->gpu.matched_by, HasSubstr("NVIDIA A100-SXM4-80GB"));
  EXPECT_EQ(m->kernels, 9);
  EXPECT_EQ(m->kernels_with_work, 8);
  const hardware::EfficiencyCurve& c = m->curve[static_cast<int>(depgraph::KernelClass::kGemm)];
  EXPECT_FALSE(c.slope_from_prior);
  EXPECT_EQ(c.samples, 8);
  EXPECT_NEAR(c.fixed_ns, kFixedNs, 5);
  EXPECT_NEAR(c.ceiling(), kCeiling, 1e-3);
  // Work of the largest GEMM: 2*m*n*k in fp32 on CUDA cores.
  const KernelWork* w = m->WorkOf(b.gemms.back());
  ASSERT_NE(w, nullptr);
  EXPECT_DOUBLE_EQ(w->flops, 2.0 * 8192 * 1024 * 1024);
  EXPECT_EQ(w->math, hardware::Math::kFp32);
  EXPECT_FALSE(w->matrix);
  EXPECT_EQ(m->WorkOf(b.orphan), nullptr);
  EXPECT_THAT(m->WhyNot(b.orphan), HasSubstr("launched outside any recorded op"));
  // Copies: 10 GB/s + 2 us, fitted.
  const LinkRate& r = m->copy[static_cast<int>(CopyKind::kHtoDPageable)];
  EXPECT_EQ(r.samples, 3);
  EXPECT_NEAR(r.gbs, 10, 0.01);
  EXPECT_NEAR(r.fixed_ns, 2000, 5);
  EXPECT_NEAR(CopyNs(*m, CopyKind::kHtoDPageable, 8 << 20), 2000 + (8 << 20) / 10.0, 10);
  // No pinned copies: twice the pageable rate of the direction, within the link.
  EXPECT_NEAR(m->copy[static_cast<int>(CopyKind::kHtoDPinned)].gbs, 20, 0.01);
}

TEST(CostModelTest, RetimingMovesKernelsAlongTheCurve) {
  Built b = Make();
  const CostModel m = BuildCostModel(b.g, b.devices).value();
  const hardware::EfficiencyCurve& c = m.curve[static_cast<int>(depgraph::KernelClass::kGemm)];
  const TaskId big = b.gemms.back(), small = b.gemms.front();
  const double t_big = b.g.duration_ns(big), t_small = b.g.duration_ns(small);
  const double r_big = 2.0 * 8192 * 1024 * 1024 / (kFp32Tflops * 1e3);
  const double r_small = r_big / 128;
  // Batch x2: FLOPs double (the weight, arg 1 of mm, does not grow).
  ASSERT_TRUE(Retime(b.g, Of({small, big}), m, Spec(2)).ok());
  EXPECT_NEAR(b.g.duration_ns(big), t_big * c.TimeNs(2 * r_big) / c.TimeNs(r_big), 2);
  EXPECT_NEAR(b.g.duration_ns(small), t_small * c.TimeNs(2 * r_small) / c.TimeNs(r_small), 2);
  // A bigger GEMM runs closer to peak: the small one grows less than the big one.
  EXPECT_LT(b.g.duration_ns(small) / t_small, b.g.duration_ns(big) / t_big);
  EXPECT_LT(b.g.duration_ns(small), 2 * t_small);
  EXPECT_GT(b.g.duration_ns(big), 1.9 * t_big);

  // fp16 on tensor cores: 312 TFLOP/s; bytes halve (still compute-bound).
  b = Make();
  ASSERT_TRUE(Retime(b.g, Of({big}), m, Spec(1, hardware::Math::kFp16)).ok());
  EXPECT_NEAR(b.g.duration_ns(big), t_big * c.TimeNs(r_big * kFp32Tflops / 312) / c.TimeNs(r_big), 2);

  // The same GEMM with n = 1023 cannot use the tensor cores' 16-byte loads:
  // in fp16 it runs at the A100's fp16 vector peak (78 TFLOP/s), counted.
  {
    Built odd = Make(1023);
    const CostModel mo = BuildCostModel(odd.g, odd.devices).value();
    const hardware::EfficiencyCurve& co = mo.curve[static_cast<int>(depgraph::KernelClass::kGemm)];
    const double r_odd = r_big * 1023 / 1024;
    absl::StatusOr<RetimeStats> st = Retime(odd.g, Of({odd.gemms.back()}), mo, Spec(1, hardware::Math::kFp16));
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->unaligned, 1);
    EXPECT_NEAR(odd.g.duration_ns(odd.gemms.back()),
                t_big * co.TimeNs(r_odd * kFp32Tflops / 78) / co.TimeNs(r_odd), 2);
    // The aligned one above was counted as none.
    Built even = Make();
    EXPECT_EQ(Retime(even.g, Of({even.gemms.back()}), m, Spec(1, hardware::Math::kFp16))->unaligned, 0);
  }

  // Another GPU: H100 SXM runs fp32 at 67 TFLOP/s.
  b = Make();
  const RetimeSpec h100 = Spec(1, std::nullopt, hardware::FindGpu("H100-SXM"));
  ASSERT_TRUE(Retime(b.g, Of({big}), m, h100).ok());
  EXPECT_NEAR(b.g.duration_ns(big), t_big * c.TimeNs(r_big * kFp32Tflops / 67) / c.TimeNs(r_big), 2);

  // The same GPU and nothing changed: every kernel keeps its time.
  b = Make();
  ASSERT_TRUE(Retime(b.g, Of(b.gemms), m, Spec(1)).ok());
  for (size_t i = 0; i < b.gemms.size(); ++i) {
    EXPECT_EQ(b.g.duration_ns(b.gemms[i]), Make().g.duration_ns(b.gemms[i]));
  }
}

// A converted kernel is marked (" [fp16]") and a later retime starts from
// the math it now runs: fp16, then H100, equals fp16 on H100 in one retime
// (not the fp32 peaks' ratio); a second fp16 conversion changes nothing.
TEST(CostModelTest, RetimesComposeFromTheMathAKernelNowRuns) {
  Built b = Make();
  const CostModel m = BuildCostModel(b.g, b.devices).value();
  const hardware::GpuSpec* h100 = hardware::FindGpu("H100-SXM");
  const TaskId big = b.gemms.back();
  ASSERT_TRUE(Retime(b.g, Of({big}), m, Spec(1, hardware::Math::kFp16)).ok());
  EXPECT_THAT(std::string(b.g.name(big)), ::testing::EndsWith(" [fp16]"));
  const int64_t fp16 = b.g.duration_ns(big);
  ASSERT_TRUE(Retime(b.g, Of({big}), m, Spec(1, hardware::Math::kFp16)).ok());
  EXPECT_EQ(b.g.duration_ns(big), fp16);
  EXPECT_THAT(std::string(b.g.name(big)), ::testing::EndsWith("nn [fp16]"));
  ASSERT_TRUE(Retime(b.g, Of({big}), m, Spec(1, std::nullopt, h100)).ok());
  Built once = Make();
  ASSERT_TRUE(Retime(once.g, Of({big}), m, Spec(1, hardware::Math::kFp16, h100)).ok());
  EXPECT_NEAR(b.g.duration_ns(big), once.g.duration_ns(big), 2);
  // The marker follows the math: fp8 replaces fp16, back to fp32 too.
  ASSERT_TRUE(Retime(b.g, Of({big}), m, Spec(1, hardware::Math::kFp8)).ok());
  EXPECT_THAT(std::string(b.g.name(big)), ::testing::EndsWith("nn [fp8]"));
  ASSERT_TRUE(Retime(b.g, Of({big}), m, Spec(1, hardware::Math::kFp32)).ok());
  EXPECT_THAT(std::string(b.g.name(big)), ::testing::EndsWith("nn [fp32]"));
  // An fp32 kernel asked to stay fp32 gets no marker.
  Built plain = Make();
  ASSERT_TRUE(Retime(plain.g, Of({big}), m, Spec(1, hardware::Math::kFp32)).ok());
  EXPECT_EQ(plain.g.name(big), Make().g.name(big));
}

// A 4096 x 1024 @ 1024 x 1024 fp32 GEMM op that launches cuDNN's layout
// transpose and then the GEMM (as cuDNN and MIOpen convolutions do): the
// FLOPs are the GEMM's alone, the transpose moves the op's data.
TEST(CostModelTest, AHelperKernelOfAMatrixOpDoesMemoryWork) {
  Built b = Make();
  Graph& g = b.g;
  const depgraph::ResourceId gpu = g.resource_of(b.gemms[0]);
  const depgraph::ResourceId cpu = g.resource_of(LauncherOf(g, b.gemms[0]));
  const OpId op = g.AddOp("aten::mm", OpId(), 1000);
  g.set_op_inputs(op, {Tensor({4096, 1024}), Tensor({1024, 1024})});
  auto launch = [&](const char* name, int64_t ns) {
    const TaskId l = g.AppendTask({.kind = TaskKind::kCpuApi,
                                   .name = "cudaLaunchKernel",
                                   .resource = cpu,
                                   .duration_ns = 4000,
                                   .step = 0});
    g.set_op(l, op);
    const TaskId k = g.AppendTask(
        {.kind = TaskKind::kKernel, .name = name, .resource = gpu, .duration_ns = ns, .step = 0});
    g.AddEdge(l, k, EdgeKind::kLaunch);
    return k;
  };
  const TaskId helper = launch(
      "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true>", 30000);
  const TaskId gemm = launch("ampere_sgemm_128x64_nn", 470000);
  const CostModel m = BuildCostModel(g, b.devices).value();
  const KernelWork* h = m.WorkOf(helper);
  const KernelWork* k = m.WorkOf(gemm);
  ASSERT_NE(h, nullptr);
  ASSERT_NE(k, nullptr);
  const hardware::OpWork op_work = hardware::WorkOfOp("aten::mm", *g.op_inputs(op));
  EXPECT_DOUBLE_EQ(k->flops, op_work.flops);
  EXPECT_EQ(k->kind, hardware::WorkKind::kGemm);
  EXPECT_TRUE(h->helper());
  EXPECT_FALSE(k->helper());
  EXPECT_EQ(h->kind, hardware::WorkKind::kMemory);
  EXPECT_EQ(h->flops, 0);
  EXPECT_FALSE(h->matrix);
  EXPECT_DOUBLE_EQ(h->bytes, op_work.bytes * 30000 / 500000);
  // Another GPU, same type: the same algorithm, the transpose on the memory
  // roofline (A100 2039 -> H100 3350 GB/s), not the GEMM's compute peaks.
  const hardware::GpuSpec* h100 = hardware::FindGpu("H100-SXM");
  const hardware::EfficiencyCurve& e = m.curve[static_cast<int>(depgraph::NameClass(g, helper))];
  const double want =
      30000 * e.TimeNs(m.RooflineNs(*h, *h100)) / e.TimeNs(m.RooflineNs(*h, m.gpu.spec));
  Graph moved = g;
  ASSERT_TRUE(Retime(moved, Of({helper}), m, Spec(1, std::nullopt, h100)).ok());
  EXPECT_NEAR(moved.duration_ns(helper), want, 2);
  EXPECT_GT(moved.duration_ns(helper), 30000 * 2039 / 3350 - 2);
  // A dtype change: the library's half-precision algorithm has helpers the
  // trace cannot show, so the transpose follows its op onto the tensor
  // cores, as its share of the op's work on the GEMM curve (whose fixed
  // cost a small share feels more): far below the half its bytes would give.
  Graph half = g;
  ASSERT_TRUE(Retime(half, Of({helper, gemm}), m, Spec(1, hardware::Math::kFp16)).ok());
  EXPECT_LT(half.duration_ns(gemm), 470000 / 10);
  EXPECT_LT(half.duration_ns(helper), 30000 * 3 / 10);
  EXPECT_GT(static_cast<double>(half.duration_ns(helper)) / 30000,
            static_cast<double>(half.duration_ns(gemm)) / 470000);
}

TEST(CostModelTest, AKernelWithoutWorkSitsOnItsClassCurve) {
  Built b = Make();
  const CostModel m = BuildCostModel(b.g, b.devices).value();
  const hardware::EfficiencyCurve& e = m.curve[static_cast<int>(depgraph::KernelClass::kElementwise)];
  EXPECT_TRUE(e.slope_from_prior);  // no element-wise kernel has work here
  const double t = b.g.duration_ns(b.orphan);
  const double r0 = std::max(0.0, (t - e.fixed_ns) / e.slope);
  // Memory-bound: half the bytes in fp16, 2039 -> 3350 GB/s on an H100.
  ASSERT_TRUE(Retime(b.g, Of({b.orphan}), m,
                     Spec(1, hardware::Math::kFp16, hardware::FindGpu("H100-SXM")))
                  .ok());
  EXPECT_NEAR(b.g.duration_ns(b.orphan), e.TimeNs(r0 * 0.5 * 2039 / 3350), 2);
  EXPECT_LE(b.g.duration_ns(b.orphan), t);
}

// A trace whose kernels are all long (a microbenchmark of 128 us fp32 GEMMs,
// no shapes recorded) says nothing about what a kernel costs however little
// it does: that fixed cost is at most a launch call's time, so bf16 on the
// tensor cores still speeds the GEMMs up (their 10th percentile, 128 us,
// taken as fixed cost, kept them whole).
TEST(CostModelTest, AllLongKernelsAreNotTakenForFixedCost) {
  Graph g;
  const depgraph::ResourceId cpu =
      g.AddResource({depgraph::ResourceKind::kCpuThread, 1, 100, -1, "thread 100", true});
  const depgraph::ResourceId gpu =
      g.AddResource({depgraph::ResourceKind::kGpuStream, 1, 7, 0, "stream 7 (gpu 0)", true});
  g.AddStep({"ProfilerStep#0", 0, 0});
  std::vector<TaskId> gemms;
  for (int i = 0; i < 10; ++i) {
    const TaskId l = g.AppendTask({.kind = TaskKind::kCpuApi,
                                   .name = "cudaLaunchKernel",
                                   .resource = cpu,
                                   .duration_ns = 5000,
                                   .step = 0});
    gemms.push_back(g.AppendTask({.kind = TaskKind::kKernel,
                                  .name = "ampere_sgemm_128x64_nn",
                                  .resource = gpu,
                                  .duration_ns = 128000,
                                  .step = 0}));
    g.AddEdge(l, gemms.back(), EdgeKind::kLaunch);
  }
  depgraph::DeviceInfo d;
  d.id = 0;
  d.name = "NVIDIA A100-SXM4-80GB";
  d.sm_count = 108;
  d.compute_major = 8;
  const CostModel m = BuildCostModel(g, {d}).value();
  const hardware::EfficiencyCurve& c = m.curve[static_cast<int>(depgraph::KernelClass::kGemm)];
  EXPECT_LE(c.fixed_ns, 5000);
  ASSERT_TRUE(Retime(g, Of(gemms), m, Spec(1, hardware::Math::kBf16)).ok());
  for (TaskId t : gemms) {
    // fp32 CUDA cores -> bf16 tensor cores: 19.5 -> 312 TFLOP/s on an A100.
    EXPECT_LT(g.duration_ns(t), 128000 / 4);
    EXPECT_GT(g.duration_ns(t), 5000);
  }
}

// A type change saves a memory kernel's bytes only at the share of its time
// those bytes explain at the peak bandwidth: an element-wise add at 95% of
// its roofline about halves in fp16, one at 28% (batch norm's kind of
// kernel, bound by something other than bytes) keeps most of its time.
TEST(CostModelTest, HalfPrecisionSavesBytesAtTheirShareOfTheTime) {
  Built b = Make();
  auto add = [&](double roofline_share) {
    const OpId op = b.g.AddOp("aten::add", OpId(), 1000);
    b.g.set_op_inputs(op, {Tensor({1 << 22}), Tensor({1 << 22})});
    auto task = [&](TaskKind kind, const char* name, uint32_t resource, int64_t ns) {
      return b.g.AppendTask(TaskSpec{.kind = kind,
                                     .name = name,
                                     .resource = depgraph::ResourceId(resource),
                                     .duration_ns = ns,
                                     .phase = depgraph::Phase::kForward,
                                     .step = 0});
    };
    const TaskId l = task(TaskKind::kCpuApi, "cudaLaunchKernel", 0, 4000);
    b.g.set_op(l, op);
    const TaskId k = task(TaskKind::kKernel, "void at::native::vectorized_elementwise_kernel<4>", 1, 1);
    b.g.AddEdge(l, k, EdgeKind::kLaunch);
    return std::pair{k, roofline_share};
  };
  const auto fast = add(0.95), slow = add(0.28);
  // Times set from the work the model gives the op on this GPU.
  for (const auto& [k, share] : {fast, slow}) {
    const CostModel m0 = BuildCostModel(b.g, b.devices).value();
    ASSERT_NE(m0.WorkOf(k), nullptr) << m0.WhyNot(k);
    const double r = m0.RooflineNs(*m0.WorkOf(k), m0.gpu.spec);
    b.g.set_duration_ns(k, static_cast<int64_t>(std::nearbyint(r / share)));
  }
  const CostModel m = BuildCostModel(b.g, b.devices).value();
  const hardware::EfficiencyCurve& c = m.curve[static_cast<int>(depgraph::KernelClass::kElementwise)];
  std::vector<double> before;
  for (const auto& [k, share] : {fast, slow}) before.push_back(b.g.duration_ns(k));
  ASSERT_TRUE(Retime(b.g, Of({fast.first, slow.first}), m, Spec(1, hardware::Math::kFp16)).ok());
  int i = 0;
  for (const auto& [k, share] : {fast, slow}) {
    ASSERT_NE(m.WorkOf(k), nullptr);
    const double r0 = m.RooflineNs(*m.WorkOf(k), m.gpu.spec);
    const double u = r0 / before[i];  // the share as the model measured it
    // fp32 -> fp16 halves the bytes; only the share u of them counts.
    EXPECT_NEAR(b.g.duration_ns(k), before[i] * c.TimeNs(r0 * (1 - u / 2)) / c.TimeNs(r0), 2) << i;
    EXPECT_LE(b.g.duration_ns(k), before[i]) << i;  // never slower
    ++i;
  }
  // The kernel bytes bound keeps far less of its time than the other.
  const double kept_fast = b.g.duration_ns(fast.first) / before[0];
  const double kept_slow = b.g.duration_ns(slow.first) / before[1];
  EXPECT_LT(kept_fast, 0.7);
  EXPECT_GT(kept_slow, 0.85);
}

TEST(CostModelTest, ErrorsNameTheProblem) {
  Built b = Make();
  EXPECT_EQ(BuildCostModel(b.g, {}).status().code(), absl::StatusCode::kFailedPrecondition);
  std::vector<depgraph::DeviceInfo> unknown = b.devices;
  unknown[0].name = "Imaginary GPU 9000";
  unknown[0].sm_count = 7;
  const absl::Status s = BuildCostModel(b.g, unknown).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("Imaginary GPU 9000"));
  const CostModel m = BuildCostModel(b.g, b.devices).value();
  EXPECT_FALSE(Retime(b.g, Of(b.gemms), m, Spec(0)).ok());
  EXPECT_FALSE(Retime(b.g, Of(b.gemms), m, Spec(-1)).ok());
  EXPECT_EQ(b.g.duration_ns(b.gemms[0]), Make().g.duration_ns(b.gemms[0]));
}

TEST(CostModelTest, GridUseQuantizesWaves) {
  const hardware::GpuSpec& a100 = *hardware::FindGpu("A100-SXM4-80GB");
  depgraph::KernelGeometry geo;
  geo.blocks = 54;  // half the SMs
  geo.threads_per_block = 256;
  EXPECT_DOUBLE_EQ(internal::GridUse(geo, a100, 1), 0.5);
  geo.blocks = 300;  // more than the SMs, within a wave of 8 x 108 blocks
  EXPECT_DOUBLE_EQ(internal::GridUse(geo, a100, 1), 1.0);
  geo.blocks = 865;  // one block into a second wave
  EXPECT_DOUBLE_EQ(internal::GridUse(geo, a100, 1), 865.0 / 1728);
  geo.blocks = 54;   // a batch x 2 (the tile kept) fills the SMs
  EXPECT_DOUBLE_EQ(internal::GridUse(geo, a100, 2), 1.0);
  EXPECT_DOUBLE_EQ(internal::GridUse(depgraph::KernelGeometry(), a100, 1), 1.0);
}

}  // namespace
}  // namespace reverie::transforms
