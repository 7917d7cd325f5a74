// The default Chakra export (one compute lane per rank) on the examples and
// on shared traces with several CPU threads and GPU streams (HTA's nccl_data
// and DLRM rank 0), and the kernel-level one: every file decoded with the
// Chakra schema keeps what ASTRA-sim needs (export/chakra_check.h), and
// ASTRA-sim's workload model (export/astra_model.h) finishes the lane, its
// communication taking reverie's times, when reverie's simulation does.
// Label real_traces: the shared traces skip when ../shared/traces is absent.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "depgraph/builder.h"
#include "depgraph/simulator.h"
#include "export/astra_model.h"
#include "export/chakra.h"
#include "export/chakra_check.h"
#include "export/chakra_lane.h"
#include "export/comm_typing.h"
#include "frameworks/trace_loader.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"
#include "whatif/pipeline.h"

namespace reverie::testing {
namespace {

using exporter::CommMode;

struct Case {
  const char* name;
  const char* path;  // under ../shared/traces, or the source tree when example
  bool example = false;
};

const Case kCases[] = {
    {"tiny_mlp", "examples/tiny_mlp_training.json", true},
    {"ddp_rank0", "examples/ddp_rank0.json", true},
    {"nccl_data", testing::kNcclTrace},
    {"dlrm_rank0",
     "facebookresearch__HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/"
     "rank0.json.gz"},
    {"h100_transformer",
     "Quentin-Anthony__torch-profiling-tutorial/log/transformer/"
     "dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json"},
    {"bert_small",
     "AMD-AGI__TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"},
};

class ChakraLaneRealTest : public ::testing::TestWithParam<Case> {};

TEST_P(ChakraLaneRealTest, LaneKeepsReveriesTimeUnderAstraSimsModel) {
  const Case& c = GetParam();
  std::string path;
  if (c.example) {
    path = std::string(REVERIE_SOURCE_DIR) + "/" + c.path;
  } else {
    path = TracePath(c.path);
    if (path.empty()) GTEST_SKIP() << "real trace " << c.path << " not found under " << TracesDir();
  }
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> run = whatif::LoadAndSimulate(path);
  ASSERT_TRUE(run.ok()) << run.status();
  const depgraph::Graph& g = (*run)->graph;
  const depgraph::SimResult& sim = (*run)->baseline;
  const std::vector<exporter::CollectiveRecord> records =
      exporter::CollectiveRecordsOf((*run)->trace);
  const exporter::CommTyping typing = exporter::TypeCommunication(g, records);
  const exporter::SimWindow window = exporter::SimulatedWindow(g, sim);

  for (CommMode mode : {CommMode::kNetwork, CommMode::kReplay}) {
    const exporter::CommPlan plan = exporter::PlanSingleRank(g, sim, typing, mode, window);
    absl::StatusOr<exporter::LaneTrace> lane =
        exporter::ExportLane({&g, &sim, {}, 0, plan.network, window});
    ASSERT_TRUE(lane.ok()) << lane.status();
    absl::StatusOr<exporter::ChakraFile> file = exporter::ReadChakra(lane->bytes);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_TRUE(exporter::ValidateChakra(*file, /*one_compute_lane=*/true).ok())
        << exporter::ValidateChakra(*file, true);
    absl::StatusOr<exporter::AstraModelResult> model = exporter::ReplayLikeAstraSim(*file);
    ASSERT_TRUE(model.ok()) << model.status();
    // Rounding to whole microseconds: at most 1 us per stretch of lane between
    // two waits for the network.
    const int64_t tolerance = 1'000 * (1 + lane->stats.comm_nodes);
    EXPECT_NEAR(model->finish_ns, window.span_ns(), tolerance)
        << (mode == CommMode::kNetwork ? "network" : "replay");
    std::printf("%s (%s): span %.1f us, ASTRA-sim's model %.1f us (%+.4f%%); %lld lane nodes, "
                "%lld communication nodes, %lld replayed\n",
                c.name, mode == CommMode::kNetwork ? "network" : "replay", window.span_ns() / 1e3,
                model->finish_ns / 1e3, 100.0 * (model->finish_ns - window.span_ns()) / window.span_ns(),
                static_cast<long long>(lane->stats.lane_nodes),
                static_cast<long long>(lane->stats.comm_nodes),
                static_cast<long long>(plan.replayed));
  }

  // The kernel-level export keeps the invariants too, with its many lanes.
  absl::StatusOr<exporter::ChakraTrace> kernels =
      exporter::ExportChakra(g, sim, {.collectives = records});
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  absl::StatusOr<exporter::ChakraFile> file = exporter::ReadChakra(kernels->bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(exporter::ValidateChakra(*file, false).ok()) << exporter::ValidateChakra(*file, false);
  EXPECT_EQ(kernels->stats.span_ns, window.span_ns());
}

INSTANTIATE_TEST_SUITE_P(Traces, ChakraLaneRealTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace reverie::testing
