// The cost model (transforms/cost_model.h) on real traces: every GPU of
// the shared traces matches a row of the table; the work of recorded ops
// is what their shapes say; the calibration finds the traces' own curves;
// and no change that only adds work makes a kernel faster, nor one that
// only removes work or adds peak makes it slower.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "depgraph/model_info.h"
#include "frameworks/trace_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/lua/real_graph.h"
#include "transforms/cost_model.h"

namespace reverie {
namespace {

using depgraph::TaskId;

constexpr char kTimesformer[] =
    "AMD-AGI__TraceLens/tests/traces/h100/"
    "facebook_timesformer-base-finetuned-k400__1016002.json.gz";
constexpr char kS1[] = "anupambhatnagar__GPUPuzzlers/streams/blocking/blocking_streams.json.gz";

transforms::CostModel Model(const testing::RealGraph& rg) {
  absl::StatusOr<transforms::CostModel> m = transforms::BuildCostModel(rg.graph, rg.model.devices);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : transforms::CostModel();
}

transforms::Selection Kernels(const depgraph::Graph& g) {
  std::vector<TaskId> ids;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    if (!g.removed(TaskId(i)) && g.kind(TaskId(i)) == depgraph::TaskKind::kKernel)
      ids.push_back(TaskId(i));
  }
  return transforms::Selection::FromSorted(std::move(ids));
}

// Every trace of MANIFEST.md that records a named GPU matches a row.
TEST(CostModelRealTest, EveryGpuOfTheSharedTracesMatches) {
  const std::string dir = testing::TracesDir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no traces at " << dir;
  int traces = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (!e.is_regular_file() || (p.find(".json") == std::string::npos) || p.find("_et.json") != std::string::npos) {
      continue;
    }
    absl::StatusOr<Trace> t = LoadTraceFile(p);
    if (!t.ok()) continue;
    for (const proto::Device& d : t->header().devices()) {
      if (d.name().empty()) continue;
      hardware::DeviceFacts f;
      f.name = d.name();
      f.vendor = d.vendor();
      f.sm_count = d.sm_count();
      f.cc_major = d.compute_major();
      f.cc_minor = d.compute_minor();
      f.total_memory_bytes = d.total_memory_bytes();
      const hardware::GpuMatch m = hardware::MatchGpu(f);
      EXPECT_NE(m.spec, nullptr) << p << ": " << d.name();
      if (m.spec != nullptr && d.sm_count() > 0) {
        EXPECT_EQ(m.spec->sm_count, d.sm_count()) << p;
      }
      ++traces;
    }
  }
  EXPECT_GT(traces, 30);
}

TEST(CostModelRealTest, WorkOfRecordedShapes) {
  REVERIE_REQUIRE_GRAPH(rg, testing::kLoaderBs16Trace);
  const transforms::CostModel m = Model(*rg);
  EXPECT_EQ(m.gpu.spec.key, "RTX3080");
  EXPECT_EQ(m.kernels_with_work, m.kernels);  // record_shapes on: every kernel has work
  // The first layer's forward GEMM: addmm [16, 2056] x [2056, 256] + bias,
  // shared with the split-K reduction kernel cuBLAS runs after it.
  double flops = 0;
  int kernels = 0;
  for (uint32_t i = 0; i < rg->graph.task_count(); ++i) {
    const TaskId t(i);
    const transforms::KernelWork* w = m.WorkOf(t);
    if (w == nullptr || rg->graph.op_name(w->op) != "aten::addmm" || rg->graph.step_of(t) != 0) continue;
    const hardware::OpArgs* in = rg->graph.op_inputs(w->op);
    if (in == nullptr || (*in)[1].shapes[0] != std::vector<int64_t>{16, 2056}) continue;
    flops += w->flops;
    ++kernels;
    EXPECT_EQ(w->math, hardware::Math::kFp32);
    EXPECT_FALSE(w->matrix);  // ampere_sgemm: CUDA cores
  }
  EXPECT_EQ(kernels, 2);
  EXPECT_NEAR(flops, 2.0 * 16 * 256 * 2056 + 16 * 256, 1);
}

TEST(CostModelRealTest, CalibrationUsesTheTracesOwnKernels) {
  REVERIE_REQUIRE_GRAPH(rg, kTimesformer);
  const transforms::CostModel m = Model(*rg);
  EXPECT_EQ(m.gpu.spec.key, "H100-SXM");
  EXPECT_GT(m.kernels_with_work, m.kernels * 9 / 10);
  // Large bf16 GEMMs: the slope comes from the trace, the ceiling below 1.
  const hardware::EfficiencyCurve& gemm = m.curve[static_cast<int>(depgraph::KernelClass::kGemm)];
  EXPECT_GT(gemm.samples, 50);
  EXPECT_FALSE(gemm.slope_from_prior);
  EXPECT_LE(gemm.ceiling(), 1.0);
  EXPECT_GT(gemm.ceiling(), 0.05);
  // The achieved memory bandwidth is below the datasheet's.
  EXPECT_LT(m.memory_gbs(), m.gpu.spec.memory_bandwidth_gbs);
}

TEST(CostModelRealTest, CopyRatesComeFromTheTracesCopies) {
  REVERIE_REQUIRE_GRAPH(rg, kS1);
  const transforms::CostModel m = Model(*rg);
  EXPECT_EQ(m.gpu.spec.key, "A100-SXM4-80GB");  // "NVIDIA PG509-210"
  const transforms::LinkRate& d2h = m.copy[static_cast<int>(transforms::CopyKind::kDtoHPageable)];
  EXPECT_EQ(d2h.samples, 100);
  EXPECT_THAT(d2h.from, ::testing::HasSubstr("fitted"));
  EXPECT_GT(d2h.gbs, 4);  // 4 MiB copies at about 6 GB/s
  EXPECT_LT(d2h.gbs, 8);
  // No pinned copies in the trace: twice the pageable rate, below the link.
  const transforms::LinkRate& pinned = m.copy[static_cast<int>(transforms::CopyKind::kDtoHPinned)];
  EXPECT_NEAR(pinned.gbs, 2 * d2h.gbs, 1e-9);
  EXPECT_LT(pinned.gbs, hardware::HostLinkGbs(m.gpu.spec));
}

// Directions: more work is never faster, half precision or a GPU with no
// lower peak and more bandwidth is never slower, no change changes nothing.
TEST(CostModelRealTest, ChangesMoveKernelsTheRightWay) {
  for (const char* trace :
       {testing::kLoaderBs16Trace, kTimesformer, testing::kTransformerTutorialTrace}) {
    REVERIE_REQUIRE_GRAPH(rg, trace);
    const transforms::CostModel m = Model(*rg);
    auto retimed = [&](transforms::RetimeSpec spec) {
      depgraph::Graph g = rg->graph;
      EXPECT_TRUE(transforms::Retime(g, Kernels(g), m, spec).ok());
      return g;
    };
    transforms::RetimeSpec same;
    transforms::RetimeSpec more;
    more.work_factor = 4;
    transforms::RetimeSpec half;
    half.dtype = hardware::Math::kFp16;
    transforms::RetimeSpec bigger;
    bigger.dest = m.gpu.spec.key == "H100-SXM" ? hardware::FindGpu("H200") : hardware::FindGpu("H100-SXM");
    const depgraph::Graph g_same = retimed(same), g_more = retimed(more), g_half = retimed(half),
                          g_big = retimed(bigger);
    for (uint32_t i = 0; i < rg->graph.task_count(); ++i) {
      const TaskId t(i);
      if (rg->graph.kind(t) != depgraph::TaskKind::kKernel) continue;
      const int64_t d = rg->graph.duration_ns(t);
      ASSERT_EQ(g_same.duration_ns(t), d) << trace << " " << rg->graph.name(t);
      ASSERT_GE(g_more.duration_ns(t), d) << trace << " " << rg->graph.name(t);
      ASSERT_LE(g_half.duration_ns(t), d) << trace << " " << rg->graph.name(t);
      if (m.gpu.spec.sm_count <= bigger.dest->sm_count) {
        ASSERT_LE(g_big.duration_ns(t), d + 1) << trace << " " << rg->graph.name(t);
      }
    }
  }
}

}  // namespace
}  // namespace reverie
