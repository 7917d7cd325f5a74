// The step's memory (depgraph/memory.h) on the shared traces recorded with
// profile_memory=True: the batch pair's peaks as the files' own totals give
// them, and a per-step peak on the V100 DDP trace and the 2021 ResNet-50
// sample. Skips when ../shared/traces is absent.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "depgraph/builder.h"
#include "depgraph/memory.h"
#include "depgraph/step_time.h"
#include "frameworks/trace_loader.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"

namespace reverie {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr char kBatchDir[] = "JonathanHourany__pytorch-sandbox/profiling/data-bottleneck/profiler-output/";

depgraph::MemoryReport MemoryOf(const std::string& path, Trace* keep = nullptr) {
  absl::StatusOr<Trace> trace = LoadTraceFile(path);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return {};
  absl::StatusOr<depgraph::Graph> g = depgraph::BuildGraph(*trace, {});
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return {};
  if (keep != nullptr) *keep = std::move(*trace);
  return depgraph::ComputeMemory(*g, depgraph::MeasuredSteps(*g));
}

const depgraph::DeviceMemory* Gpu(const depgraph::MemoryReport& r) {
  for (const depgraph::DeviceMemory& d : r.devices) {
    if (d.device >= 0) return &d;
  }
  return nullptr;
}

// The largest Total Allocated of the GPU's events in the file.
int64_t RecordedPeak(const Trace& t) {
  int64_t peak = 0;
  for (const proto::MemoryEvent& m : t.events().memory_events()) {
    if (m.device_type() == 1) peak = std::max(peak, m.total_allocated());
  }
  return peak;
}

void CheckSplitSums(const depgraph::DeviceMemory& d) {
  for (const depgraph::StepMemory& s : d.steps) {
    if (!s.matched) continue;
    int64_t sum = s.persistent + s.from_earlier + s.kept;
    for (int64_t b : s.by_phase) sum += b;
    EXPECT_EQ(sum, s.peak) << "step " << s.step << ": the parts of the peak sum to it";
    EXPECT_GE(s.persistent, 0);
    EXPECT_GE(s.from_earlier, 0);
    EXPECT_GE(s.kept, 0);
  }
}

TEST(MemoryReal, BatchPairPeaks) {
  struct Case {
    const char* file;
    double peak_mib;  // the figure, which the file's totals give too
  };
  for (const Case& c : {Case{"num-workers-8-batch-size-16/trace-num-workers-8-batch-size-16.json", 27.1},
                        Case{"num-workers-8-batch-size-2056/trace-num-workers-8-batch-size-2056.json", 47.1}}) {
    REVERIE_REQUIRE_TRACE(path, std::string(kBatchDir) + c.file);
    Trace t;
    const depgraph::MemoryReport r = MemoryOf(path, &t);
    const depgraph::DeviceMemory* d = Gpu(r);
    ASSERT_NE(d, nullptr) << c.file;
    EXPECT_TRUE(d->absolute);
    EXPECT_NEAR(static_cast<double>(d->peak) / kMiB, c.peak_mib, 0.05) << c.file;
    EXPECT_EQ(d->peak, RecordedPeak(t)) << c.file << ": the peak falls in a counted step";
    EXPECT_GT(d->peak_reserved, d->peak);
    ASSERT_FALSE(d->steps.empty());
    for (const depgraph::StepMemory& s : d->steps) EXPECT_TRUE(s.matched);
    CheckSplitSums(*d);
    // Weights and Adam's state persist across steps.
    EXPECT_GT(d->steps.back().persistent, 0) << c.file;
  }
}

TEST(MemoryReal, DdpTraceHasAPerStepPeak) {
  REVERIE_REQUIRE_TRACE(path, testing::kDfIndexResolverTrace);
  const depgraph::MemoryReport r = MemoryOf(path);
  const depgraph::DeviceMemory* d = Gpu(r);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->device, 1) << "rank 1's GPU";
  EXPECT_TRUE(d->absolute);
  ASSERT_GE(d->steps.size(), 4u);
  for (const depgraph::StepMemory& s : d->steps) {
    EXPECT_GT(s.events, 0);
    EXPECT_GE(s.peak, s.start_level);
    EXPECT_GT(s.peak, 1000 * kMiB) << "a conv net on a 32 GB V100 at over a GiB";
    EXPECT_GE(s.peak_reserved, s.peak);
  }
  CheckSplitSums(*d);
}

TEST(MemoryReal, ResNet2021SampleHasARelativePeak) {
  REVERIE_REQUIRE_TRACE(path, testing::kResnetSampleTrace);
  const depgraph::MemoryReport r = MemoryOf(path);
  const depgraph::DeviceMemory* d = Gpu(r);
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->absolute) << "the 2021 schema records no totals";
  ASSERT_EQ(d->steps.size(), 6u);
  for (const depgraph::StepMemory& s : d->steps) {
    EXPECT_FALSE(s.matched);
    EXPECT_GT(s.events, 0);
    EXPECT_GT(s.peak, s.start_level) << "activations grow in the forward pass";
    EXPECT_GT(s.by_phase[static_cast<size_t>(depgraph::Phase::kForward)], 0);
  }
  bool host = false;
  for (const depgraph::DeviceMemory& x : r.devices) host |= x.device < 0;
  EXPECT_TRUE(host) << "the host's allocations are reported apart";
}

}  // namespace
}  // namespace reverie
