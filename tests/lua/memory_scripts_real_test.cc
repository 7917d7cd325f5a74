// The memory-saving scripts (activation checkpointing, Gist, vDNN) on the
// shared training traces that recorded memory: they never predict a higher
// peak than the baseline's, every allocation they make is freed again (what
// stays allocated at the end is the baseline's), and where the trace records
// the tensors the forward saved (addresses) they move some; without
// addresses (the 2021 schema) they leave memory as recorded and say so.
// Skips when ../shared/traces is absent.
#include <algorithm>
#include <string>
#include <vector>

#include "depgraph/memory_replay.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/lua/real_graph.h"
#include "transforms/memory_edit.h"
#include "whatif/memory_fit.h"

namespace reverie {
namespace {

using testing::LoadOrFail;
using testing::Predict;
using testing::Prediction;

const char* const kTraces[] = {
    testing::kDfIndexResolverTrace,
    "JonathanHourany__pytorch-sandbox/profiling/data-bottleneck/profiler-output/"
    "num-workers-0-batch-size-16/trace-num-workers-0-batch-size-16.json",
    "JonathanHourany__pytorch-sandbox/profiling/data-bottleneck/profiler-output/"
    "num-workers-8-batch-size-2056/trace-num-workers-8-batch-size-2056.json",
    testing::kResnetSampleTrace,
};

int64_t Peak(const depgraph::Graph& g, const depgraph::SimResult& sim) {
  int64_t peak = 0;
  for (const depgraph::DevicePeak& d : depgraph::ReplayMemory(g, sim.start_ns, sim.end_ns)) {
    if (d.device >= 0) peak = std::max(peak, d.peak);
  }
  return peak;
}

int64_t Net(const depgraph::Graph& g) {
  int64_t sum = 0;
  for (const depgraph::MemoryEvent& m : g.memory_events()) sum += m.bytes;
  return sum;
}

bool Logged(const Prediction& p, const std::string& what) {
  for (const std::string& line : p.reports[0].log) {
    if (line.find(what) != std::string::npos) return true;
  }
  return false;
}

class MemoryScriptsRealTest : public ::testing::TestWithParam<const char*> {};

TEST_P(MemoryScriptsRealTest, SaveMemoryWithoutLeaking) {
  REVERIE_REQUIRE_TRACE(path, GetParam());
  const whatif::LoadedTrace* t = LoadOrFail(path);
  ASSERT_NE(t, nullptr);
  int64_t saved = 0;
  for (const transforms::Allocation& a : transforms::Allocations(t->graph)) saved += a.saved() ? 1 : 0;
  const int64_t base_peak = Peak(t->graph, t->baseline);
  ASSERT_GT(base_peak, 0) << "a trace with memory events";
  for (const char* script : {"activation_checkpointing.lua", "gist.lua", "vdnn.lua"}) {
    SCOPED_TRACE(script);
    const Prediction p = Predict(*t, {script});
    ASSERT_TRUE(p.status.ok()) << p.status;
    EXPECT_LE(Peak(p.graph, p.sim), base_peak);
    EXPECT_EQ(Net(p.graph), Net(t->graph)) << "every allocation a script makes is freed";
    if (saved == 0) {
      EXPECT_EQ(p.graph.memory_events().size(), t->graph.memory_events().size());
      if (std::string(script) != "vdnn.lua") {
        EXPECT_TRUE(Logged(p, "memory: unchanged"));
      }
    } else {
      EXPECT_GT(p.graph.memory_events().size(), t->graph.memory_events().size()) << "tensors moved";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, MemoryScriptsRealTest, ::testing::ValuesIn(kTraces));

// Scripts whose memory effect is not modelled say so in the peak line
// instead of printing the baseline's peak as a plain prediction (dgc.lua's
// compression buffers, a CUDA graph's private pool); DDP's gradient buckets
// (the gradients' size, as the buckets the script all-reduces) are
// allocated from the first step when ddp.lua or blueconnect.lua make a
// single-GPU trace data-parallel, unless gradient_as_bucket_view.
TEST(MemoryScriptsRealTest, WhatAScriptDoesNotModelIsNamedInThePeakLine) {
  REVERIE_REQUIRE_TRACE(
      path,
      "JonathanHourany__pytorch-sandbox/profiling/data-bottleneck/profiler-output/"
      "num-workers-8-batch-size-16/trace-num-workers-8-batch-size-16.json");
  const whatif::LoadedTrace* t = LoadOrFail(path);
  ASSERT_TRUE(t);
  struct Case {
    std::vector<std::string> scripts;
    std::vector<std::pair<std::string, std::string>> sets;
    bool buckets;       // the peak grows by the buckets' allocation
    std::string words;  // in the peak line ("" = no estimate)
  };
  for (const Case& c : std::vector<Case>{
           {{"ddp.lua"}, {{"workers", "8"}}, true, "gradient buckets are sized by an estimate"},
           {{"ddp.lua"}, {{"workers", "8"}, {"bucket_view", "true"}}, false, ""},
           {{"ddp.lua"}, {}, false, ""},  // one worker: no DDP
           {{"blueconnect.lua"}, {}, true, "gradient buckets are sized by an estimate"},
           {{"dgc.lua"}, {}, false, "dgc.lua does not count DDP's gradient buckets (6.1 MiB"},
           {{"cuda_graphs.lua"}, {}, false, "a CUDA graph's private memory pool"},
           {{"identity.lua"}, {}, false, ""}}) {
    const std::string label = c.scripts[0] + (c.sets.empty() ? "" : " " + c.sets.back().second);
    const Prediction p = Predict(*t, c.scripts, c.sets);
    ASSERT_TRUE(p.status.ok()) << label << ": " << p.status;
    const std::vector<whatif::MemoryFit> fits =
        whatif::FitMemory(t->graph, t->baseline, p.graph, p.sim, t->model.devices);
    ASSERT_EQ(fits.size(), 1u) << label;
    // What the scripts allocated, held from the first step: the gradients'
    // size, estimated from the update kernels (no Parameter records), 6.1 MiB.
    int64_t added = 0;
    const auto events = p.graph.memory_events();
    for (size_t i = t->graph.memory_events().size(); i < events.size(); ++i) {
      if (events[i].bytes > 0) added += events[i].bytes;
    }
    EXPECT_EQ(added > 0, c.buckets) << label;
    if (c.buckets) {
      EXPECT_NEAR(static_cast<double>(added) / (1 << 20), 6.1, 0.1) << label;
    }
    EXPECT_EQ(fits[0].pred_peak - fits[0].base_peak, c.buckets ? added : 0) << label;
    EXPECT_EQ(fits[0].estimate.empty(), c.words.empty()) << label << ": " << fits[0].estimate;
    if (!c.words.empty()) {
      EXPECT_THAT(whatif::MemoryFitLine(fits[0]), ::testing::HasSubstr(c.words)) << label;
    }
  }
}

}  // namespace
}  // namespace reverie
