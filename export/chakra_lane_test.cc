// The compute-lane export (chakra_lane.h) on small graphs whose timeline is
// known: one lane, communication placed between its producer and its
// consumer, waiting for the network dropped from the lane, and ASTRA-sim's
// workload model (astra_model.h) finishing when reverie does, also when the
// network is slower than reverie's model.
#include "export/chakra_lane.h"

#include <map>
#include <string>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "depgraph/testing/named_graph.h"
#include "export/astra_model.h"
#include "export/chakra_check.h"
#include "export/chakra_io.h"
#include "export/comm_typing.h"
#include "gtest/gtest.h"

namespace reverie::exporter {
namespace {

using depgraph::EdgeKind;
using depgraph::Graph;
using depgraph::ResourceId;
using depgraph::ResourceKind;
using depgraph::SimResult;
using depgraph::TaskId;
using depgraph::TaskKind;
using depgraph::TaskSpec;

constexpr int64_t kBucketBytes = 1 << 20;

// One CPU thread launching onto two compute streams, and a script-style
// all-reduce on a channel between the backward kernel that produces the
// gradients and the optimizer kernel that consumes them; other compute
// (k3) overlaps the all-reduce.
struct Training : depgraph::testing::NamedGraph {
  Training() {
    const ResourceId cpu = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "thread 1", true});
    const ResourceId s1 = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
    const ResourceId s2 = g.AddResource({ResourceKind::kGpuStream, 1, 9, 0, "stream 9", true});
    const ResourceId ch = g.AddResource({ResourceKind::kCommChannel, 0, 0, -1, "ring", false});
    const TaskId l1 = Add(TaskKind::kCpuApi, "launch k1", cpu, 5'000, 1'000);
    const TaskId l2 = Add(TaskKind::kCpuApi, "launch k2", cpu, 5'000);
    const TaskId l3 = Add(TaskKind::kCpuApi, "launch k3", cpu, 5'000);
    const TaskId l4 = Add(TaskKind::kCpuApi, "launch adam", cpu, 5'000);
    const TaskId sync = Add(TaskKind::kCpuApi, "cudaDeviceSynchronize", cpu, 1'000);
    const TaskId k1 = Add(TaskKind::kKernel, "backward k1", s1, 100'000);
    const TaskId k2 = Add(TaskKind::kKernel, "backward k2", s2, 50'000);
    const TaskId k3 = Add(TaskKind::kKernel, "other k3", s1, 30'000);
    const TaskId adam = Add(TaskKind::kKernel, "adam", s1, 20'000);
    const TaskId ar = Add(TaskKind::kComm, "allreduce bucket 0", ch, 40'000, 0, kBucketBytes);
    g.AddEdge(l1, k1, EdgeKind::kLaunch, 2'000);
    g.AddEdge(l2, k2, EdgeKind::kLaunch, 2'000);
    g.AddEdge(l3, k3, EdgeKind::kLaunch, 2'000);
    g.AddEdge(l4, adam, EdgeKind::kLaunch, 2'000);
    g.AddEdge(k1, ar, EdgeKind::kComm);
    g.AddEdge(ar, adam, EdgeKind::kComm);
    g.AddEdge(adam, sync, EdgeKind::kSync);
  }
};

struct Exported {
  SimResult sim;
  SimWindow window;
  CommPlan plan;
  LaneTrace lane;
  ChakraFile file;
};

Exported ExportOf(const Graph& g, CommMode mode) {
  Exported e;
  absl::StatusOr<SimResult> sim = depgraph::Simulate(g);
  EXPECT_TRUE(sim.ok()) << sim.status();
  e.sim = std::move(*sim);
  e.window = SimulatedWindow(g, e.sim);
  const CommTyping typing = TypeCommunication(g, {});
  e.plan = PlanSingleRank(g, e.sim, typing, mode, e.window);
  absl::StatusOr<LaneTrace> lane = ExportLane({&g, &e.sim, {}, 0, e.plan.network, e.window});
  EXPECT_TRUE(lane.ok()) << lane.status();
  e.lane = std::move(*lane);
  absl::StatusOr<ChakraFile> file = ReadChakra(e.lane.bytes);
  EXPECT_TRUE(file.ok()) << file.status();
  e.file = std::move(*file);
  return e;
}

int64_t FinishNs(const ChakraFile& f) {
  absl::StatusOr<AstraModelResult> r = ReplayLikeAstraSim(f);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->finish_ns : -1;
}

TEST(ChakraLaneTest, OneLaneThatAstraSimFinishesWhenReverieDoes) {
  Training f;
  const Exported e = ExportOf(f.g, CommMode::kNetwork);
  EXPECT_TRUE(ValidateChakra(e.file, /*one_compute_lane=*/true).ok())
      << ValidateChakra(e.file, true);
  int comm = 0;
  for (const chakra_et::Node& n : e.file.nodes) {
    if (n.type() != chakra_et::COMM_COLL_NODE) continue;
    ++comm;
    EXPECT_EQ(n.name(), "allreduce bucket 0");
    EXPECT_EQ(FindAttr(n, "comm_type")->int64_val(), chakra_et::ALL_REDUCE);
    EXPECT_EQ(FindAttr(n, "comm_size")->int64_val(), kBucketBytes);
    EXPECT_EQ(n.duration_micros(), 40u);
  }
  EXPECT_EQ(comm, 1);
  EXPECT_EQ(e.lane.stats.comm_nodes, 1);
  // Two threads' and streams' overlap is resolved: the lane holds the busy
  // union, and only the wait for the all-reduce (after k3, before adam) left it.
  const int64_t span = e.window.span_ns();
  EXPECT_EQ(e.lane.stats.rank_end_ns, span);
  EXPECT_EQ(e.lane.stats.lane_ns + e.lane.stats.dropped_ns, span);
  const int64_t k3_end = e.sim.end_ns[f.task["other k3"].value()];
  const int64_t ar_end = e.sim.end_ns[f.task["allreduce bucket 0"].value()];
  ASSERT_GT(ar_end, k3_end);
  EXPECT_EQ(e.lane.stats.dropped_ns, ar_end - k3_end);
  EXPECT_NEAR(FinishNs(e.file), span, 1'000);
}

TEST(ChakraLaneTest, CommunicationSitsBetweenItsProducerAndItsConsumer) {
  Training f;
  const Exported e = ExportOf(f.g, CommMode::kNetwork);
  const int64_t origin = e.window.start_ns;
  const chakra_et::Node* ar = nullptr;
  for (const chakra_et::Node& n : e.file.nodes) {
    if (n.type() == chakra_et::COMM_COLL_NODE) ar = &n;
  }
  ASSERT_NE(ar, nullptr);
  // Its lane parent ends where k1 (the gradients) ends.
  const int64_t k1_end_us = RoundUs(e.sim.end_ns[f.task["backward k1"].value()] - origin);
  bool after_k1 = false;
  for (uint64_t p : ar->data_deps()) {
    const chakra_et::Node& parent = e.file.nodes[p];
    after_k1 |= parent.type() == chakra_et::COMP_NODE &&
                static_cast<int64_t>(parent.start_time_micros() + parent.duration_micros()) == k1_end_us;
  }
  EXPECT_TRUE(after_k1);
  // The lane piece that starts with adam depends on it.
  const int64_t adam_us = RoundUs(e.sim.start_ns[f.task["adam"].value()] - origin);
  bool gates_adam = false;
  for (const chakra_et::Node& n : e.file.nodes) {
    if (n.type() != chakra_et::COMP_NODE || static_cast<int64_t>(n.start_time_micros()) != adam_us) {
      continue;
    }
    for (uint64_t p : n.data_deps()) gates_adam |= p == ar->id();
  }
  EXPECT_TRUE(gates_adam);
}

TEST(ChakraLaneTest, ASlowerNetworkDelaysTheStepAsReverieWould) {
  // ASTRA-sim's network taking 3x reverie's time for the all-reduce: the
  // lane replayed with that time ends when reverie's own simulation of the
  // graph with that duration does.
  for (const int64_t ar_ns : {80'000, 120'000}) {
    Training f;
    const Exported e = ExportOf(f.g, CommMode::kNetwork);
    ChakraFile slow = e.file;
    for (chakra_et::Node& n : slow.nodes) {
      if (n.type() == chakra_et::COMM_COLL_NODE) n.set_duration_micros(ar_ns / 1000);
    }
    f.g.set_duration_ns(f.task["allreduce bucket 0"], ar_ns);
    absl::StatusOr<SimResult> resim = depgraph::Simulate(f.g);
    ASSERT_TRUE(resim.ok());
    const SimWindow w = SimulatedWindow(f.g, *resim);
    EXPECT_NEAR(FinishNs(slow), w.span_ns(), 1'000) << ar_ns;
    EXPECT_GT(w.span_ns(), e.window.span_ns());
  }
}

TEST(ChakraLaneTest, ReplayKeepsCommunicationOnTheLane) {
  Training f;
  const Exported e = ExportOf(f.g, CommMode::kReplay);
  EXPECT_TRUE(ValidateChakra(e.file, true).ok());
  EXPECT_EQ(e.lane.stats.comm_nodes, 0);
  EXPECT_EQ(e.plan.replayed, 1);
  EXPECT_EQ(e.lane.stats.dropped_ns, 0);
  ASSERT_EQ(e.file.nodes.size(), 1u);  // nothing to cut the lane at
  EXPECT_NEAR(FinishNs(e.file), e.window.span_ns(), 1'000);
}

TEST(ChakraLaneTest, UnsizedAndUntypedCommunicationStaysOnTheLane) {
  Training f;
  f.g.set_bytes(f.task["allreduce bucket 0"], 0);
  const ResourceId s3 = f.g.AddResource({ResourceKind::kGpuStream, 1, 11, 0, "stream 11", true});
  TaskSpec reduce{
      .kind = TaskKind::kKernel, .name = "ncclKernel_Reduce_RING_LL_Sum_float", .resource = s3,
      .duration_ns = 7'000};
  f.g.AddEdge(f.task["adam"], f.g.AppendTask(reduce), EdgeKind::kEvent);
  const Exported e = ExportOf(f.g, CommMode::kNetwork);
  EXPECT_EQ(e.plan.replayed, 2);
  EXPECT_EQ(e.plan.unsized, 1);
  EXPECT_EQ(e.lane.stats.comm_nodes, 0);
  EXPECT_TRUE(ValidateChakra(e.file, true).ok());
  EXPECT_NEAR(FinishNs(e.file), e.window.span_ns(), 1'000);
}

TEST(ChakraLaneTest, IdleLatencyWithNothingRunningIsKept) {
  // A launch latency no other work hides stays on the lane.
  Graph g;
  const ResourceId cpu = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "thread 1", true});
  const ResourceId s = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
  TaskSpec call{
      .kind = TaskKind::kCpuApi, .name = "cudaLaunchKernel", .resource = cpu,
      .duration_ns = 3'000};
  TaskSpec kernel = call;
  kernel.kind = TaskKind::kKernel;
  kernel.name = "gemm";
  kernel.resource = s;
  kernel.duration_ns = 10'000;
  const TaskId l = g.AppendTask(call);
  g.AddEdge(l, g.AppendTask(kernel), EdgeKind::kLaunch, 4'000);
  const Exported e = ExportOf(g, CommMode::kNetwork);
  EXPECT_EQ(e.window.span_ns(), 17'000);
  EXPECT_EQ(e.lane.stats.idle_ns, 4'000);
  EXPECT_EQ(FinishNs(e.file), 17'000);
}

TEST(ChakraLaneTest, WindowIsTheSimulatedSpan) {
  Training f;
  absl::StatusOr<SimResult> sim = depgraph::Simulate(f.g);
  ASSERT_TRUE(sim.ok());
  const SimWindow w = SimulatedWindow(f.g, *sim);
  EXPECT_EQ(w.start_ns, 0);
  EXPECT_EQ(w.end_ns, sim->makespan_ns);
}

TEST(ChakraLaneTest, BadRequestsAreErrors) {
  Training f;
  absl::StatusOr<SimResult> sim = depgraph::Simulate(f.g);
  ASSERT_TRUE(sim.ok());
  const SimWindow w = SimulatedWindow(f.g, *sim);
  SimResult short_sim = *sim;
  short_sim.start_ns.pop_back();
  EXPECT_EQ(ExportLane({&f.g, &short_sim, {}, 0, {}, w}).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<NetworkComm> foreign = {{TaskId(1'000)}};
  EXPECT_EQ(ExportLane({&f.g, &*sim, {}, 0, foreign, w}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace reverie::exporter
