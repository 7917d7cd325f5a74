// Acceptance on a real trace: build the graph of resnet_kineto.json.gz,
// write measured + simulated timelines, re-import, and check that every task
// survives the trip.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "base/testing/cli_runner.h"
#include "depgraph/builder.h"
#include "depgraph/simulator.h"
#include "export/timeline.h"
#include "frameworks/trace_loader.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"
#include "whatif/pipeline.h"

namespace reverie::exporter {
namespace {

TEST(TimelineRealTest, ResnetTimelineReimports) {
  REVERIE_REQUIRE_TRACE(path, testing::kRtxResnetTrace);
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> run = whatif::LoadAndSimulate(path);
  ASSERT_TRUE(run.ok()) << run.status();
  const depgraph::Graph& g = (*run)->graph;
  const depgraph::SimResult& sim = (*run)->baseline;
  const std::string dir = testing::TempDir("timeline_real");
  const std::string out = dir + "/resnet_timeline.json";
  TimelineStats st;
  ASSERT_TRUE(WriteTimeline(out, {{"measured", &g, nullptr}, {"baseline", &g, &sim}}, &st).ok());
  std::printf("timeline: %lld events, %lld tasks, %lld flows, %lld layer ranges\n",
              static_cast<long long>(st.events), static_cast<long long>(st.tasks),
              static_cast<long long>(st.flows), static_cast<long long>(st.layer_ranges));
  EXPECT_GT(st.events, 1000);
  EXPECT_EQ(st.skipped_untimed, 0);
  EXPECT_EQ(st.tasks, 2 * static_cast<int64_t>(g.live_task_count()));

  absl::StatusOr<Trace> back = LoadTraceFile(out);
  ASSERT_TRUE(back.ok()) << back.status();
  int64_t gpu_tasks = 0, api_tasks = 0;
  for (size_t i = 0; i < g.task_count(); ++i) {
    const depgraph::TaskId t(static_cast<uint32_t>(i));
    if (g.removed(t)) continue;
    gpu_tasks += depgraph::IsGpuKind(g.kind(t));
    api_tasks += g.kind(t) == depgraph::TaskKind::kCpuApi;
  }
  EXPECT_EQ(back->events().gpu_activities_size(), 2 * gpu_tasks);
  EXPECT_EQ(back->events().api_calls_size(), 2 * api_tasks);
  EXPECT_EQ(back->GetCounter(TraceCounter::unmatched_correlation), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reverie::exporter
