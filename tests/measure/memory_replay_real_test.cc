// The memory replay (depgraph/memory_replay.h) on every shared trace that
// recorded allocations: the simulated baseline replays them in the measured
// order, so its peaks are the measured ones (and, where the allocator's
// totals are recorded, the largest total of each GPU), and a script that
// changes nothing predicts the same peak. Skips when ../shared/traces is
// absent.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "depgraph/memory_replay.h"
#include "depgraph/step_time.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"
#include "whatif/memory_fit.h"
#include "whatif/pipeline.h"

namespace reverie {
namespace {

class MemoryReplayTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MemoryReplayTest, TheBaselineReplaysTheMeasuredPeaks) {
  if (GetParam().empty()) GTEST_SKIP() << "no traces under " << testing::TracesDir();
  REVERIE_REQUIRE_TRACE(path, GetParam());
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> t = whatif::LoadAndSimulate(path);
  if (!t.ok()) {
    // Refused in one line (no GPU work, no API calls): nothing to replay.
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
    return;
  }
  const depgraph::Graph& g = (*t)->graph;
  const depgraph::TaskTimes m = depgraph::MeasuredTimes(g);
  if (g.memory_events().empty()) {
    // Without profile_memory=True there is no peak to replay or predict,
    // and no line claims one.
    EXPECT_TRUE(depgraph::ReplayMemory(g, m.start, m.end).empty());
    EXPECT_TRUE(whatif::FitMemory(g, (*t)->baseline, g, (*t)->baseline, (*t)->model.devices).empty());
    return;
  }
  const std::vector<depgraph::DevicePeak> measured = depgraph::ReplayMemory(g, m.start, m.end);
  const std::vector<depgraph::DevicePeak> simulated =
      depgraph::ReplayMemory(g, (*t)->baseline.start_ns, (*t)->baseline.end_ns);
  ASSERT_EQ(measured.size(), simulated.size());
  for (size_t i = 0; i < measured.size(); ++i) {
    EXPECT_EQ(simulated[i].device, measured[i].device);
    EXPECT_EQ(simulated[i].peak, measured[i].peak) << "device " << measured[i].device;
    EXPECT_EQ(simulated[i].left_out, 0);
    // A GPU's replayed level is the allocator's own total but where events
    // of the same microsecond on two threads come in another order than
    // the allocator saw them (a block or two). The host's totals are the
    // CPU allocator's, which sees more than the profiler records.
    if (!measured[i].absolute || measured[i].device < 0) continue;
    int64_t largest = 0;
    for (const depgraph::MemoryEvent& e : g.memory_events()) {
      if (e.device == measured[i].device) largest = std::max(largest, e.total_allocated);
    }
    EXPECT_NEAR(static_cast<double>(measured[i].peak), static_cast<double>(largest),
                std::max(4096.0, 1e-4 * static_cast<double>(largest)))
        << "device " << measured[i].device << ": the allocator's own totals";
  }
  whatif::ScriptSpec spec;
  spec.scripts = {"nothing"};
  spec.sources = {{"nothing", "-- changes nothing\n"}};
  absl::StatusOr<whatif::Prediction> p = whatif::Predict(**t, spec);
  ASSERT_TRUE(p.ok()) << p.status();
  for (const whatif::MemoryFit& f :
       whatif::FitMemory(g, (*t)->baseline, p->graph, p->sim, (*t)->model.devices)) {
    EXPECT_EQ(f.pred_peak, f.base_peak) << "gpu " << f.device;
    std::printf("%s: %s\n", GetParam().c_str(), whatif::MemoryFitLine(f).c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Shared, MemoryReplayTest, ::testing::ValuesIn(testing::AllKinetoTraces()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::TraceTestName(info.index, info.param);
                         });

}  // namespace
}  // namespace reverie
