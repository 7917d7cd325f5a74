// CompareHostSpeed: launch APIs compared with themselves, medians, the
// weighted geometric mean, and too few calls giving no answer.
#include "depgraph/host_speed.h"

#include <cmath>
#include <string_view>
#include <vector>

#include "depgraph/runtime_api.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

// One CPU thread calling `api` once per duration given, then one sync.
void AddCalls(Graph* g, std::string_view api, const std::vector<int64_t>& durations) {
  ResourceId r;
  if (g->resource_count() == 0) {
    r = g->AddResource({ResourceKind::kCpuThread, 1, 1, -1, "main", true});
  } else {
    r = ResourceId(0);
  }
  for (int64_t d : durations) {
    g->AppendTask({.kind = TaskKind::kCpuApi, .name = api, .resource = r, .duration_ns = d});
  }
  g->AppendTask({.kind = TaskKind::kCpuApi,
                 .name = "cudaDeviceSynchronize",
                 .resource = r,
                 .duration_ns = 1});
}

std::vector<int64_t> Repeat(int64_t d, int n) { return std::vector<int64_t>(n, d); }

TEST(HostSpeedTest, RatioOfTheLaunchMediansOfEachApi) {
  Graph before, after;
  std::vector<int64_t> b = Repeat(7000, 30), a = Repeat(5000, 25);
  b.push_back(1'000'000);  // an outlier moves a median by nothing
  AddCalls(&before, "cudaLaunchKernel", b);
  AddCalls(&after, "cudaLaunchKernel", a);
  const SpeedRatio h = CompareHostSpeed(before, after).launches;
  ASSERT_TRUE(h.known());
  EXPECT_NEAR(h.ratio, 5000.0 / 7000.0, 1e-12);
  EXPECT_EQ(h.name, "cudaLaunchKernel");
  EXPECT_EQ(h.before_median_ns, 7000);
  EXPECT_EQ(h.after_median_ns, 5000);
  EXPECT_EQ(h.before_count, 31);
  EXPECT_EQ(h.after_count, 25);
}

TEST(HostSpeedTest, ApisAreWeightedByTheirSmallerCallCount) {
  Graph before, after;
  AddCalls(&before, "cudaLaunchKernel", Repeat(1000, 60));
  AddCalls(&after, "cudaLaunchKernel", Repeat(2000, 60));  // 2x slower, weight 60
  AddCalls(&before, "cuLaunchKernel", Repeat(1000, 20));
  AddCalls(&after, "cuLaunchKernel", Repeat(500, 40));  // 0.5x, weight 20
  const SpeedRatio h = CompareHostSpeed(before, after).launches;
  EXPECT_NEAR(h.ratio, std::exp((60 * std::log(2.0) + 20 * std::log(0.5)) / 80), 1e-12);
  EXPECT_EQ(h.name, "cudaLaunchKernel");
}

TEST(HostSpeedTest, FewLaunchesOrOtherApisGiveNoAnswer) {
  Graph before, after;
  AddCalls(&before, "cudaLaunchKernel", Repeat(1000, kMinLaunchesCompared - 1));
  AddCalls(&after, "cudaLaunchKernel", Repeat(1000, 100));
  AddCalls(&before, "cudaMemcpyAsync", Repeat(1000, 100));  // not a launch
  AddCalls(&after, "cudaMemcpyAsync", Repeat(3000, 100));
  AddCalls(&before, "hipLaunchKernel", Repeat(1000, 100));  // no such calls in AFTER
  EXPECT_FALSE(CompareHostSpeed(before, after).launches.known());
}

TEST(HostSpeedTest, EvenCountsTakeTheMeanOfTheMiddleTwo) {
  Graph before, after;
  std::vector<int64_t> b = Repeat(100, 10);
  for (int i = 0; i < 10; ++i) b.push_back(300);
  AddCalls(&before, "cudaLaunchKernel", b);  // median (100 + 300) / 2
  AddCalls(&after, "cudaLaunchKernel", Repeat(400, 20));
  EXPECT_NEAR(CompareHostSpeed(before, after).launches.ratio, 2.0, 1e-12);
}

// One copy engine running `n` copies named `name` of `bytes` each.
void AddCopies(Graph* g, std::string_view name, int64_t bytes, int64_t duration_ns, int n) {
  const ResourceId r = g->AddResource({ResourceKind::kGpuStream, 0, 7, 0, "stream 7", true});
  for (int i = 0; i < n; ++i) {
    g->AppendTask({.kind = TaskKind::kMemcpy,
                   .name = name,
                   .resource = r,
                   .duration_ns = duration_ns,
                   .bytes = bytes});
  }
}

TEST(HostSpeedTest, PageableCopiesAreComparedByNameAndSize) {
  Graph before, after;
  constexpr char kHtoD[] = "Memcpy HtoD (Pageable -> Device)";
  AddCopies(&before, kHtoD, 4 << 20, 400, 30);
  AddCopies(&after, kHtoD, 4 << 20, 800, 40);  // 2x, weight 30
  AddCopies(&before, kHtoD, 1 << 20, 100, 10);
  AddCopies(&after, kHtoD, 1 << 20, 50, 10);  // 0.5x, weight 10
  // Another size in one run only, pinned copies and too few copies: not compared.
  AddCopies(&after, kHtoD, 2 << 20, 9000, 50);
  AddCopies(&before, "Memcpy DtoH (Device -> Pinned)", 4 << 20, 100, 50);
  AddCopies(&after, "Memcpy DtoH (Device -> Pinned)", 4 << 20, 900, 50);
  AddCopies(&before, "Memcpy DtoH (Device -> Pageable)", 4 << 20, 100, kMinCopiesCompared - 1);
  AddCopies(&after, "Memcpy DtoH (Device -> Pageable)", 4 << 20, 900, 50);
  const HostSpeed h = CompareHostSpeed(before, after);
  EXPECT_FALSE(h.launches.known());  // no launches
  const SpeedRatio& c = h.pageable_copies;
  ASSERT_TRUE(c.known());
  EXPECT_NEAR(c.ratio, std::exp((30 * std::log(2.0) + 10 * std::log(0.5)) / 40), 1e-12);
  EXPECT_EQ(c.name, kHtoD);
  EXPECT_EQ(c.bytes, 4 << 20);
  EXPECT_EQ(c.before_median_ns, 400);
  EXPECT_EQ(c.after_median_ns, 800);
  EXPECT_EQ(c.before_count, 40);
  EXPECT_EQ(c.after_count, 50);
}

TEST(HostSpeedTest, NoPageableCopiesGiveNoCopyAnswer) {
  Graph before, after;
  AddCalls(&before, "cudaLaunchKernel", Repeat(1000, 30));
  AddCalls(&after, "cudaLaunchKernel", Repeat(1000, 30));
  AddCopies(&before, "Memcpy HtoD (Pinned -> Device)", 1 << 20, 100, 50);
  AddCopies(&after, "Memcpy HtoD (Pinned -> Device)", 1 << 20, 300, 50);
  const HostSpeed h = CompareHostSpeed(before, after);
  EXPECT_TRUE(h.launches.known());
  EXPECT_FALSE(h.pageable_copies.known());
  EXPECT_TRUE(IsPageableCopy("Memcpy DtoH (Device -> Pageable)"));
  EXPECT_FALSE(IsPageableCopy("Memcpy DtoD (Device -> Device)"));
}

TEST(HostSpeedTest, LaunchApisByName) {
  for (const char* api : {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
                          "hipExtLaunchKernel", "cudaLaunchCooperativeKernel"}) {
    EXPECT_TRUE(IsKernelLaunchApi(api)) << api;
  }
  // A graph launch replays many kernels; a copy launches none.
  for (const char* api : {"cudaGraphLaunch", "cudaMemcpyAsync", "cudaStreamSynchronize"}) {
    EXPECT_FALSE(IsKernelLaunchApi(api)) << api;
  }
}

// A thread launching `n` kernels of `kernel_ns` on one stream: each launch
// call takes 5 us and leaves 2 us, and a pageable copy ends the run.
Graph LaunchLoop(int n, int64_t kernel_ns) {
  Graph g;
  const ResourceId thread = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "main", true});
  const ResourceId stream = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
  for (int i = 0; i < n; ++i) {
    const TaskId call = g.AppendTask({.kind = TaskKind::kCpuApi,
                                      .name = "cudaLaunchKernel",
                                      .resource = thread,
                                      .duration_ns = 5000,
                                      .gap_ns = 2000});
    const TaskId k = g.AppendTask(
        {.kind = TaskKind::kKernel, .name = "k", .resource = stream, .duration_ns = kernel_ns});
    g.AddEdge(call, k, EdgeKind::kLaunch);
  }
  g.AppendTask({.kind = TaskKind::kMemcpy,
                .name = "Memcpy DtoH (Device -> Pageable)",
                .resource = stream,
                .duration_ns = 3000});
  return g;
}

std::vector<std::pair<int64_t, int64_t>> Times(const Graph& g) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    out.emplace_back(g.duration_ns(TaskId(i)), g.gap_ns(TaskId(i)));
  }
  return out;
}

// The graph comes back as it was; a host-bound loop moves with the host,
// a GPU-bound one does not, and a slower host never shortens the step.
TEST(HostSpeedTest, SensitivityMovesHostBoundStepsAndGivesTheGraphBack) {
  for (const int64_t kernel_ns : {1000, 10'000, 100'000}) {
    Graph g = LaunchLoop(50, kernel_ns);
    const std::vector<std::pair<int64_t, int64_t>> before = Times(g);
    const absl::StatusOr<SimResult> sim = Simulate(g);
    ASSERT_TRUE(sim.ok());
    const double step = sim->mean_step_ns();
    const double pct = HostSensitivityPct(g, {}, step);
    EXPECT_EQ(Times(g), before) << kernel_ns;
    EXPECT_GE(pct, 0) << kernel_ns;
    EXPECT_LE(pct, 10.0 + 1e-9) << kernel_ns;
    if (kernel_ns == 1000) {
      EXPECT_GT(pct, 9.0);  // 7 us of host per 1 us of GPU
    }
    if (kernel_ns == 100'000) {
      EXPECT_LT(pct, 0.1);  // the GPU sets the step
    }
    // Scaled by the ratios given, copies apart from the CPU.
    const double copies_only = StepAtHostSpeed(g, {}, 1, 2);
    EXPECT_NEAR(copies_only - step, 3000, 1) << kernel_ns;
    EXPECT_EQ(Times(g), before);
  }
  Graph empty;
  EXPECT_EQ(HostSensitivityPct(empty, {}, 0), -1);
}

}  // namespace
}  // namespace reverie::depgraph
