// Sizes of exported collectives from the trace's Collective records: the
// pairing rule of export/collective_sizes.h and what ExportChakra writes and
// counts with it.
#include "export/collective_sizes.h"

#include <map>
#include <string>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "export/chakra.h"
#include "gtest/gtest.h"

namespace reverie::exporter {
namespace {

using depgraph::Graph;
using depgraph::ResourceId;
using depgraph::ResourceKind;
using depgraph::TaskId;
using depgraph::TaskKind;
using depgraph::TaskSpec;
using CollectiveInfo = CollectiveRecord;  // the records of a trace, resolved

// A record issued at `start` on thread 0 of process 0.
CollectiveRecord Rec(const char* name, int64_t bytes, int32_t group_size, int64_t start) {
  return {name, bytes, group_size, 0, 0, start, start};
}

constexpr char kAllReduce[] = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long)";
constexpr char kBroadcast[] = "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*)";

// One rank's NCCL stream: three all-reduces appended out of measured order
// (TaskId order is not time order), one broadcast, a compute kernel, and a
// script's all-reduce on a channel that carries its own bytes.
struct Fixture {
  Graph g;
  std::map<std::string, TaskId> task;

  TaskId Add(TaskKind kind, const std::string& label, const std::string& name, ResourceId r,
             int64_t measured_start, int64_t bytes = 0) {
    TaskSpec s{
        .kind = kind, .name = name, .resource = r, .duration_ns = 10'000,
        .measured_start_ns = measured_start, .bytes = bytes};
    const TaskId t = g.AppendTask(s);
    task[label] = t;
    return t;
  }

  Fixture() {
    const ResourceId nccl = g.AddResource({ResourceKind::kGpuStream, 1, 9, 0, "stream 9", true});
    const ResourceId comp = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
    const ResourceId ch = g.AddResource({ResourceKind::kCommChannel, 0, 0, -1, "ring", false});
    Add(TaskKind::kKernel, "bcast", kBroadcast, nccl, 1000);
    Add(TaskKind::kKernel, "ar_first", kAllReduce, nccl, 2000);
    Add(TaskKind::kKernel, "ar_third", kAllReduce, nccl, 9000);
    Add(TaskKind::kKernel, "ar_second", kAllReduce, nccl, 5000);
    Add(TaskKind::kKernel, "gemm", "volta_sgemm_128x64_nn", comp, 3000);
    Add(TaskKind::kComm, "bucket", "allreduce bucket 0", ch, -1, 4096);
  }

  // The records the framework wrote beside those calls, in measured order:
  // sized calls, their unsized "nccl:all_reduce" annotations, and a wait.
  static std::vector<CollectiveInfo> Records() {
    return {Rec("broadcast", 424, 2, 900),      Rec("broadcast", 0, 0, 901),
            Rec("wait", 0, 1, 950),             Rec("allreduce", 100, 2, 1900),
            Rec("all_reduce", 0, 0, 1901),      Rec("allreduce", 200, 2, 4900),
            Rec("all_reduce", 0, 0, 4901),      Rec("allreduce", 300, 2, 8900),
            Rec("all_reduce", 0, 0, 8901)};
  }
};

struct Exported {
  ChakraTrace trace;
  // Collective node name -> comm_size; 0 for one written as compute (no size).
  std::map<std::string, int64_t> size;
};

Exported Export(const Graph& g, const std::vector<CollectiveInfo>& records) {
  Exported e;
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g);
  EXPECT_TRUE(sim.ok()) << sim.status();
  absl::StatusOr<ChakraTrace> trace = ExportChakra(g, *sim, {.collectives = records});
  EXPECT_TRUE(trace.ok()) << trace.status();
  e.trace = std::move(*trace);
  absl::StatusOr<ChakraFile> file = ReadChakra(e.trace.bytes);
  EXPECT_TRUE(file.ok()) << file.status();
  for (const chakra_et::Node& n : file->nodes) {
    if (n.type() != chakra_et::COMM_COLL_NODE) {
      // A collective of unknown size is replayed as compute.
      if (CollectiveFromName(n.name()).has_value()) e.size[n.name()] = 0;
      continue;
    }
    for (const chakra_et::AttributeProto& a : n.attr()) {
      if (a.name() == "comm_size") e.size[n.name()] = a.int64_val();
    }
  }
  return e;
}

TEST(ChakraCollectiveSizesTest, PairsSizedRecordsByMeasuredOrderPerType) {
  Fixture f;
  const Exported e = Export(f.g, Fixture::Records());
  const RecordedCollectiveSizes m = MatchCollectiveRecords(f.g, Fixture::Records());
  EXPECT_EQ(m.bytes_of_task[f.task["ar_first"].value()], 100);
  EXPECT_EQ(m.bytes_of_task[f.task["ar_second"].value()], 200);
  EXPECT_EQ(m.bytes_of_task[f.task["ar_third"].value()], 300);
  EXPECT_EQ(m.bytes_of_task[f.task["bcast"].value()], 424);
  EXPECT_EQ(m.bytes_of_task[f.task["gemm"].value()], 0);
  EXPECT_EQ(m.bytes_of_task[f.task["bucket"].value()], 0);  // inserted: never paired
  ASSERT_EQ(m.types.size(), 2u);
  EXPECT_EQ(m.types[0].type, chakra_et::ALL_REDUCE);
  EXPECT_EQ(m.types[0].kernels, 3);
  EXPECT_EQ(m.types[0].records, 3);
  EXPECT_EQ(m.types[1].type, chakra_et::BROADCAST);
  EXPECT_TRUE(m.types[1].matched());

  EXPECT_EQ(e.size.at(kBroadcast), 424);
  EXPECT_EQ(e.size.at("allreduce bucket 0"), 4096);  // the script's bytes stay
  EXPECT_EQ(e.trace.stats.comm_nodes, 5);
  EXPECT_EQ(e.trace.stats.comm_record_sized, 4);
  EXPECT_EQ(e.trace.stats.comm_unsized, 0);
  EXPECT_EQ(e.trace.stats.comm_count_mismatch, 0);
  EXPECT_EQ(e.trace.collective_types.size(), 2u);
}

// The three all-reduce nodes share a name: look each up by its task.
TEST(ChakraCollectiveSizesTest, WrittenSizesFollowTheStreamOrder) {
  Fixture f;
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(f.g);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const std::vector<CollectiveInfo> records = Fixture::Records();
  absl::StatusOr<ChakraTrace> trace = ExportChakra(f.g, *sim, {.collectives = records});
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<ChakraFile> file = ReadChakra(trace->bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  auto size_of = [&](const char* label) -> int64_t {
    const chakra_et::Node& n = file->nodes[trace->node_of_task[f.task[label].value()]];
    for (const chakra_et::AttributeProto& a : n.attr()) {
      if (a.name() == "comm_size") return a.int64_val();
    }
    return -1;
  };
  EXPECT_EQ(size_of("ar_first"), 100);
  EXPECT_EQ(size_of("ar_second"), 200);
  EXPECT_EQ(size_of("ar_third"), 300);
}

TEST(ChakraCollectiveSizesTest, CountMismatchLeavesTheTypeUnsizedAndCounts) {
  Fixture f;
  std::vector<CollectiveInfo> records = Fixture::Records();
  records.erase(records.begin() + 5);  // the second sized all-reduce: 3 kernels, 2 records
  const Exported e = Export(f.g, records);
  const RecordedCollectiveSizes m = MatchCollectiveRecords(f.g, records);
  for (const char* ar : {"ar_first", "ar_second", "ar_third"}) {
    EXPECT_EQ(m.bytes_of_task[f.task[ar].value()], 0) << ar;
  }
  ASSERT_EQ(e.trace.collective_types.size(), 2u);
  EXPECT_FALSE(e.trace.collective_types[0].matched());
  EXPECT_EQ(e.trace.collective_types[0].kernels, 3);
  EXPECT_EQ(e.trace.collective_types[0].records, 2);
  EXPECT_EQ(e.size.at(kAllReduce), 0);
  EXPECT_EQ(e.size.at(kBroadcast), 424);  // another type pairs on its own
  EXPECT_EQ(e.trace.stats.comm_record_sized, 1);
  EXPECT_EQ(e.trace.stats.comm_unsized, 3);
  EXPECT_EQ(e.trace.stats.comm_count_mismatch, 3);
}

TEST(ChakraCollectiveSizesTest, NoRecordsIsUnsizedNotAMismatch) {
  Fixture f;
  const Exported e = Export(f.g, {});
  EXPECT_EQ(e.size.at(kAllReduce), 0);
  EXPECT_EQ(e.size.at(kBroadcast), 0);
  EXPECT_EQ(e.trace.stats.comm_record_sized, 0);
  EXPECT_EQ(e.trace.stats.comm_unsized, 4);
  EXPECT_EQ(e.trace.stats.comm_count_mismatch, 0);
  ASSERT_EQ(e.trace.collective_types.size(), 2u);
  EXPECT_EQ(e.trace.collective_types[0].records, 0);
  // Only unsized annotations: the same.
  const Exported a = Export(f.g, {Rec("all_reduce", 0, 0, 1), Rec("broadcast", 0, 0, 2)});
  EXPECT_EQ(a.trace.stats.comm_unsized, 4);
  EXPECT_EQ(a.trace.stats.comm_count_mismatch, 0);
}

TEST(ChakraCollectiveSizesTest, RemovedKernelsKeepTheirPlaceAndGraphBytesWin) {
  Fixture f;
  f.g.RemoveTask(f.task["ar_second"]);     // a script dropped it: the others do not shift
  f.g.set_bytes(f.task["ar_third"], 777);  // a size the graph knows wins
  const Exported e = Export(f.g, Fixture::Records());
  const RecordedCollectiveSizes m = MatchCollectiveRecords(f.g, Fixture::Records());
  EXPECT_EQ(m.types[0].kernels, 3);
  EXPECT_EQ(m.bytes_of_task[f.task["ar_first"].value()], 100);
  EXPECT_EQ(m.bytes_of_task[f.task["ar_third"].value()], 300);
  EXPECT_EQ(e.trace.stats.comm_nodes, 4);
  EXPECT_EQ(e.trace.stats.comm_record_sized, 2);  // ar_first, broadcast
  EXPECT_EQ(e.trace.stats.comm_unsized, 0);
}

TEST(ChakraCollectiveSizesTest, InsertedKernelsAreNotRecordedCollectives) {
  Fixture f;
  const ResourceId s = f.g.AddResource({ResourceKind::kGpuStream, 1, 11, 0, "stream 11", true});
  f.Add(TaskKind::kKernel, "inserted", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", s, depgraph::kNotMeasured);
  const Exported e = Export(f.g, Fixture::Records());
  EXPECT_TRUE(e.trace.collective_types[0].matched());
  EXPECT_EQ(e.size.at("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), 0);
  EXPECT_EQ(e.trace.stats.comm_record_sized, 4);
  EXPECT_EQ(e.trace.stats.comm_unsized, 1);
  EXPECT_EQ(e.trace.stats.comm_count_mismatch, 0);
}

}  // namespace
}  // namespace reverie::exporter
