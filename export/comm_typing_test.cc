// Communication typed for ASTRA-sim (comm_typing.h) and a multi-rank job
// exported per rank (chakra_job.h): SendRecv kernels typed by the record
// around their launch, point-to-point pairs, a straggler kept, and ranks
// whose collectives disagree refused.
#include "export/comm_typing.h"

#include <string>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/ranks.h"
#include "depgraph/simulator.h"
#include "export/astra_model.h"
#include "export/chakra_check.h"
#include "export/chakra_job.h"
#include "export/chakra_lane.h"
#include "gtest/gtest.h"

namespace reverie::exporter {
namespace {

using depgraph::EdgeKind;
using depgraph::ResourceId;
using depgraph::ResourceKind;
using depgraph::SimResult;
using depgraph::TaskId;
using depgraph::TaskKind;

constexpr char kSendRecv[] = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)";

// One rank: compute, then a NCCL kernel launched at `launch_ns` (measured)
// by thread (pid 1, tid 5), then compute that needs it. `compute_ns` makes a
// rank slower.
struct Rank {
  depgraph::Graph g;
  TaskId nccl;

  Rank(const char* nccl_name, int64_t compute_ns, int64_t launch_ns = 50'000) {
    const ResourceId cpu = g.AddResource({ResourceKind::kCpuThread, 1, 5, -1, "thread 5", true});
    const ResourceId s = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
    const ResourceId comm = g.AddResource({ResourceKind::kGpuStream, 1, 9, 0, "stream 9", true});
    auto add = [&](TaskKind kind, const char* name, ResourceId r, int64_t dur, int64_t measured) {
      depgraph::TaskSpec spec{.kind = kind,
                              .name = name,
                              .resource = r,
                              .duration_ns = dur,
                              .measured_start_ns = measured};
      return g.AppendTask(spec);
    };
    const TaskId lk = add(TaskKind::kCpuApi, "cudaLaunchKernel", cpu, 4'000, 1'000);
    const TaskId ln = add(TaskKind::kCpuApi, "cudaLaunchKernel", cpu, 4'000, launch_ns);
    const TaskId lo = add(TaskKind::kCpuApi, "cudaLaunchKernel", cpu, 4'000, launch_ns + 5'000);
    const TaskId k = add(TaskKind::kKernel, "backward", s, compute_ns, 6'000);
    nccl = add(TaskKind::kKernel, nccl_name, comm, 30'000, launch_ns + 60'000);
    const TaskId opt = add(TaskKind::kKernel, "optimizer", s, 10'000, launch_ns + 100'000);
    g.AddEdge(lk, k, EdgeKind::kLaunch);
    g.AddEdge(ln, nccl, EdgeKind::kLaunch);
    g.AddEdge(lo, opt, EdgeKind::kLaunch);
    g.AddEdge(k, nccl, EdgeKind::kEvent);
    g.AddEdge(nccl, opt, EdgeKind::kEvent);
  }
};

// A record on thread (1, 5) spanning [start, end].
CollectiveRecord Around(const char* name, int64_t bytes, int64_t start, int64_t end) {
  return {name, bytes, 2, 1, 5, start, end};
}

TEST(CommTypingTest, SendRecvKernelTakesTheTypeAndSizeOfTheRecordAroundItsLaunch) {
  Rank r(kSendRecv, 100'000);
  const std::vector<CollectiveRecord> records = {
      Around("nccl:all_to_all", 0, 49'000, 56'000),  // the unsized annotation inside
      Around("record_param_comms all_to_all", 12'582'912, 48'000, 57'000),
      Around("allreduce", 64, 1'000, 2'000)};        // another call, elsewhere
  const CommTyping t = TypeCommunication(r.g, records);
  EXPECT_EQ(t.role[r.nccl.value()], CommRole::kCollective);
  EXPECT_EQ(t.type[r.nccl.value()], chakra_et::ALL_TO_ALL);
  EXPECT_EQ(t.bytes[r.nccl.value()], 12'582'912);  // the sized one wins
  EXPECT_EQ(t.typed_by_record, 1);
  EXPECT_EQ(t.sized_by_record, 1);
  EXPECT_EQ(t.role[0], CommRole::kNone);
}

TEST(CommTypingTest, WithoutARecordASendRecvKernelIsOtherAndNamesMayBePointToPoint) {
  Rank r(kSendRecv, 100'000);
  const CommTyping none = TypeCommunication(r.g, {});
  EXPECT_EQ(none.role[r.nccl.value()], CommRole::kOther);
  EXPECT_EQ(none.other, 1);
  // A record on another thread is not around the launch.
  const CollectiveRecord elsewhere = {"all_to_all", 8, 2, 1, 6, 0, 1'000'000};
  EXPECT_EQ(TypeCommunication(r.g, {&elsewhere, 1}).role[r.nccl.value()], CommRole::kOther);
  const std::vector<CollectiveRecord> send = {Around("nccl:send", 4096, 49'000, 56'000)};
  const CommTyping p2p = TypeCommunication(r.g, send);
  EXPECT_EQ(p2p.role[r.nccl.value()], CommRole::kSend);
  EXPECT_EQ(p2p.bytes[r.nccl.value()], 4096);
  EXPECT_EQ(P2pOfName("irecv"), P2p::kRecv);
  EXPECT_EQ(P2pOfName("ncclDevKernel_SendRecv"), P2p::kNone);
  EXPECT_EQ(P2pOfName("ncclKernel_Send_RING"), P2p::kSend);
  EXPECT_EQ(P2pOfName("all_reduce"), P2p::kNone);
}

TEST(CommTypingTest, AKernelNameThatNamesACollectiveWins) {
  Rank r("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 100'000);
  const std::vector<CollectiveRecord> records = {Around("allreduce", 4'000'000, 48'000, 57'000)};
  const CommTyping t = TypeCommunication(r.g, records);
  EXPECT_EQ(t.type[r.nccl.value()], chakra_et::ALL_REDUCE);
  EXPECT_EQ(t.bytes[r.nccl.value()], 4'000'000);
  EXPECT_EQ(t.typed_by_record, 0);
}

// Rank traces, typed by their own records, coupled and exported per rank.
struct Job {
  std::vector<Rank> ranks;
  std::vector<CommTyping> typing;
  std::vector<std::string> labels;
  depgraph::JobGraph job;
  SimResult sim;

  absl::StatusOr<JobPlan> Plan(const std::vector<std::vector<CollectiveRecord>>& records) {
    std::vector<depgraph::RankInput> inputs;
    for (size_t r = 0; r < ranks.size(); ++r) {
      typing.push_back(TypeCommunication(ranks[r].g, records[r]));
      labels.push_back("rank" + std::to_string(r) + ".json");
      inputs.push_back({&ranks[r].g, labels.back(), nullptr});
    }
    absl::StatusOr<depgraph::JobGraph> j = depgraph::CoupleRanks(inputs);
    if (!j.ok()) return j.status();
    job = std::move(*j);
    absl::StatusOr<SimResult> s = depgraph::Simulate(job.graph);
    if (!s.ok()) return s.status();
    sim = std::move(*s);
    return PlanJob(job, sim, typing, labels, CommMode::kNetwork, SimulatedWindow(job.graph, sim));
  }

  std::vector<ChakraFile> Files(const JobPlan& plan, std::vector<int64_t>* ends) {
    std::vector<ChakraFile> files;
    for (int r = 0; r < job.ranks; ++r) {
      absl::StatusOr<LaneTrace> lane = ExportLane(
          {&job.graph, &sim, job.rank_of_resource, r, plan.network[r], SimulatedWindow(job.graph, sim)});
      EXPECT_TRUE(lane.ok()) << lane.status();
      ends->push_back(lane->stats.rank_end_ns);
      absl::StatusOr<ChakraFile> f = ReadChakra(lane->bytes);
      EXPECT_TRUE(f.ok());
      EXPECT_TRUE(ValidateChakra(*f, true).ok()) << ValidateChakra(*f, true);
      files.push_back(std::move(*f));
    }
    return files;
  }
};

TEST(ChakraJobTest, AStragglerStaysOneAndEveryRankEndsWhenReverieSays) {
  Job j;
  j.ranks.emplace_back(kSendRecv, 100'000);
  j.ranks.emplace_back(kSendRecv, 160'000);  // rank 1 computes 60% longer
  const std::vector<CollectiveRecord> a2a = {Around("all_to_all", 1 << 20, 48'000, 57'000)};
  absl::StatusOr<JobPlan> plan = j.Plan({a2a, a2a});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives, 1);
  ASSERT_EQ(plan->network[0].size(), 1u);
  EXPECT_EQ(plan->network[1][0].type, chakra_et::ALL_TO_ALL);
  std::vector<int64_t> ends;
  const std::vector<ChakraFile> files = j.Files(*plan, &ends);
  EXPECT_NE(files[0].nodes[0].duration_micros(), files[1].nodes[0].duration_micros());
  absl::StatusOr<std::vector<AstraModelResult>> replay = ReplayLikeAstraSim(files);
  ASSERT_TRUE(replay.ok()) << replay.status();
  for (int r = 0; r < 2; ++r) EXPECT_NEAR((*replay)[r].finish_ns, ends[r], 1'000) << "rank " << r;
  // Rank 0 waited for rank 1 at the all-to-all: both end together after it.
  EXPECT_NEAR((*replay)[0].finish_ns, (*replay)[1].finish_ns, 1'000);
}

TEST(ChakraJobTest, SendAndReceiveBecomeAPointToPointPair) {
  Job j;
  j.ranks.emplace_back(kSendRecv, 100'000);
  j.ranks.emplace_back(kSendRecv, 100'000);
  absl::StatusOr<JobPlan> plan = j.Plan({{Around("nccl:send", 4096, 48'000, 57'000)},
                                         {Around("nccl:recv", 4096, 48'000, 57'000)}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->p2p, 1);
  EXPECT_EQ(plan->network[0][0].node_type, chakra_et::COMM_SEND_NODE);
  EXPECT_EQ(plan->network[1][0].node_type, chakra_et::COMM_RECV_NODE);
  EXPECT_EQ(plan->network[1][0].src, 0);
  EXPECT_EQ(plan->network[1][0].dst, 1);
  std::vector<int64_t> ends;
  const std::vector<ChakraFile> files = j.Files(*plan, &ends);
  absl::StatusOr<std::vector<AstraModelResult>> replay = ReplayLikeAstraSim(files);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_NEAR((*replay)[1].finish_ns, ends[1], 1'000);
}

TEST(ChakraJobTest, RanksWhoseCollectivesDisagreeAreRefused) {
  Job j;
  j.ranks.emplace_back(kSendRecv, 100'000);
  j.ranks.emplace_back(kSendRecv, 100'000);
  absl::StatusOr<JobPlan> plan = j.Plan({{Around("all_to_all", 64, 48'000, 57'000)},
                                         {Around("allreduce", 64, 48'000, 57'000)}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find("rank0.json"), std::string::npos) << plan.status();
  EXPECT_NE(plan.status().message().find("rank1.json"), std::string::npos) << plan.status();
}

TEST(ChakraJobTest, UntypedOrUnsizedCollectivesAreReplayedOnEveryLane) {
  Job j;
  j.ranks.emplace_back(kSendRecv, 100'000);
  j.ranks.emplace_back(kSendRecv, 130'000);
  absl::StatusOr<JobPlan> plan = j.Plan({{}, {Around("all_to_all", 0, 48'000, 57'000)}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->collectives, 0);
  EXPECT_EQ(plan->replayed, 2);
  std::vector<int64_t> ends;
  const std::vector<ChakraFile> files = j.Files(*plan, &ends);
  absl::StatusOr<std::vector<AstraModelResult>> replay = ReplayLikeAstraSim(files);
  ASSERT_TRUE(replay.ok());
  for (int r = 0; r < 2; ++r) EXPECT_NEAR((*replay)[r].finish_ns, ends[r], 1'000);
}

}  // namespace
}  // namespace reverie::exporter
