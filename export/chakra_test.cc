#include "export/chakra.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/simulator.h"
#include "depgraph/testing/named_graph.h"
#include "gtest/gtest.h"

namespace reverie::exporter {
namespace {

using depgraph::EdgeKind;
using depgraph::ResourceId;
using depgraph::ResourceKind;
using depgraph::TaskId;
using depgraph::TaskKind;

// A CPU thread launching onto a compute stream and an NCCL stream, plus
// script-style comm tasks on an unordered channel. Every task name is unique
// so the test can find its node.
struct Fixture : depgraph::testing::NamedGraph {
  Fixture() {
    const ResourceId cpu = g.AddResource({ResourceKind::kCpuThread, 1, 100, -1, "thread 100", true});
    const ResourceId s7 = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7 (gpu 0)", true});
    const ResourceId s9 = g.AddResource({ResourceKind::kGpuStream, 1, 9, 0, "stream 9 (gpu 0)", true});
    const ResourceId ch =
        g.AddResource({ResourceKind::kCommChannel, 0, 0, -1, "allreduce (NCCL ring)", false});
    const TaskId la = Add(TaskKind::kCpuApi, "cudaLaunchKernel a", cpu, 5000, 2000);
    const TaskId lb = Add(TaskKind::kCpuApi, "cudaLaunchKernel b", cpu, 5000, 300);
    const TaskId doomed = Add(TaskKind::kCpuApi, "removed call", cpu, 1000, 0);
    const TaskId ln = Add(TaskKind::kCpuApi, "cudaLaunchKernel nccl", cpu, 4000, 0);
    const TaskId lm = Add(TaskKind::kCpuApi, "cudaMemcpyAsync", cpu, 3000, 0);
    const TaskId sync = Add(TaskKind::kCpuApi, "cudaStreamSynchronize", cpu, 1000, 0);
    const TaskId gemm = Add(TaskKind::kKernel, "volta_sgemm_128x64_nn", s7, 100'000, 1500);
    const TaskId relu = Add(TaskKind::kKernel, "relu_kernel", s7, 700);
    const TaskId copy = Add(TaskKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", s7, 2400, 0, 4096);
    const TaskId nccl =
        Add(TaskKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", s9, 50'000,
            0, int64_t{1} << 20);
    const TaskId gather = Add(TaskKind::kKernel, "ncclDevKernel_AllGather_RING_LL", s9, 8000);
    const TaskId reduce = Add(TaskKind::kKernel, "ncclKernel_Reduce_RING_LL_Sum_float", s9, 6000);
    const TaskId bucket = Add(TaskKind::kComm, "allreduce bucket 0", ch, 30'000, 500, 8192);
    const TaskId push = Add(TaskKind::kComm, "gradient push", ch, 1000);
    g.AddEdge(la, gemm, EdgeKind::kLaunch, 3000);
    g.AddEdge(lb, relu, EdgeKind::kLaunch);
    g.AddEdge(ln, nccl, EdgeKind::kLaunch);
    g.AddEdge(lm, copy, EdgeKind::kLaunch);
    g.AddEdge(gemm, nccl, EdgeKind::kEvent);
    g.AddEdge(gemm, bucket, EdgeKind::kComm);
    g.AddEdge(bucket, push, EdgeKind::kComm);
    g.AddEdge(push, sync, EdgeKind::kComm);
    g.AddEdge(relu, sync, EdgeKind::kSync);
    g.AddEdge(reduce, sync, EdgeKind::kSync);
    g.AddEdge(doomed, relu, EdgeKind::kUser);
    g.AddEdge(doomed, sync, EdgeKind::kUser);  // a second edge into sync, removed with `doomed`
    g.AddEdge(gather, reduce, EdgeKind::kUser);
    g.AddEdge(gemm, gather, EdgeKind::kUser);
    g.RemoveTask(doomed);
    task.erase("removed call");
  }
};

struct Exported {
  ChakraTrace trace;
  ChakraFile file;
  std::map<std::string, const chakra_et::Node*> by_name;
};

Exported Export(const depgraph::Graph& g) {
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g);
  EXPECT_TRUE(sim.ok()) << sim.status();
  absl::StatusOr<ChakraTrace> trace = ExportChakra(g, *sim);
  EXPECT_TRUE(trace.ok()) << trace.status();
  Exported e;
  e.trace = std::move(*trace);
  absl::StatusOr<ChakraFile> file = ReadChakra(e.trace.bytes);
  EXPECT_TRUE(file.ok()) << file.status();
  e.file = std::move(*file);
  for (const chakra_et::Node& n : e.file.nodes) e.by_name[n.name()] = &n;
  return e;
}

// The gap node written after the node `of`.
const chakra_et::Node* GapAfter(const ChakraFile& file, uint64_t of) {
  for (const chakra_et::Node& x : file.nodes) {
    if (x.name().rfind("[gap] ", 0) == 0 && x.data_deps_size() == 1 && x.data_deps(0) == of) {
      return &x;
    }
  }
  return nullptr;
}

bool HasDep(const chakra_et::Node& child, uint64_t parent) {
  return std::find(child.data_deps().begin(), child.data_deps().end(), parent) !=
         child.data_deps().end();
}

TEST(ChakraExportTest, FramingIsVarintPrefixedMetadataThenNodes) {
  Fixture f;
  Exported e = Export(f.g);
  const std::string& b = e.trace.bytes;
  // Decode the first length by hand (base-128 varint), as Chakra's protolib does.
  uint64_t len = 0;
  size_t pos = 0;
  for (int shift = 0; pos < b.size(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(b[pos++]);
    len |= uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80)) break;
  }
  ASSERT_LE(pos + len, b.size());
  chakra_et::GlobalMetadata meta;
  ASSERT_TRUE(meta.ParseFromString(b.substr(pos, len)));
  EXPECT_EQ(meta.version(), kChakraSchemaVersion);
  EXPECT_EQ(e.file.metadata.version(), "1.0.0");
  EXPECT_EQ(static_cast<int64_t>(e.file.nodes.size()), e.trace.stats.nodes);
}

TEST(ChakraExportTest, NodesTypesAndCounts) {
  Fixture f;
  Exported e = Export(f.g);
  // 13 live tasks + gaps after launch a, launch b and the gemm (each has a
  // successor on its ordered resource); the channel's gap is not expressible.
  EXPECT_EQ(f.g.live_task_count(), 13u);
  ASSERT_EQ(e.file.nodes.size(), 16u);
  const ChakraStats& s = e.trace.stats;
  EXPECT_EQ(s.cpu_nodes, 5);
  EXPECT_EQ(s.gpu_nodes, 3);    // gemm, relu, memcpy
  EXPECT_EQ(s.comm_nodes, 2);   // nccl all-reduce, the bucket all-reduce
  EXPECT_EQ(s.comm_untyped, 2); // ncclKernel_Reduce, "gradient push"
  EXPECT_EQ(s.comm_unsized, 1); // the all-gather kernel, replayed as compute
  EXPECT_EQ(s.gap_nodes, 3);
  EXPECT_EQ(s.channel_gaps, 1);
  EXPECT_EQ(s.delayed_edges, 1);
  EXPECT_EQ(s.dropped_delay_ns, 3000);
  for (uint64_t i = 0; i < e.file.nodes.size(); ++i) EXPECT_EQ(e.file.nodes[i].id(), i);

  auto type_of = [&](const std::string& name) { return e.by_name.at(name)->type(); };
  auto cpu_op = [&](const std::string& name) {
    const chakra_et::AttributeProto* a = FindAttr(*e.by_name.at(name), "is_cpu_op");
    EXPECT_NE(a, nullptr) << name;
    EXPECT_EQ(a->value_case(), chakra_et::AttributeProto::kBoolVal) << name;
    return a->bool_val();
  };
  EXPECT_EQ(type_of("cudaLaunchKernel a"), chakra_et::COMP_NODE);
  EXPECT_TRUE(cpu_op("cudaLaunchKernel a"));
  EXPECT_EQ(type_of("volta_sgemm_128x64_nn"), chakra_et::COMP_NODE);
  EXPECT_FALSE(cpu_op("volta_sgemm_128x64_nn"));
  EXPECT_EQ(type_of("Memcpy HtoD (Pageable -> Device)"), chakra_et::COMP_NODE);
  EXPECT_EQ(type_of("ncclKernel_Reduce_RING_LL_Sum_float"), chakra_et::COMP_NODE);
  EXPECT_EQ(type_of("[gap] thread 100"), chakra_et::COMP_NODE);
  EXPECT_TRUE(cpu_op("[gap] thread 100"));
  EXPECT_FALSE(cpu_op("[gap] stream 7 (gpu 0)"));

  const chakra_et::Node& nccl = *e.by_name.at("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)");
  EXPECT_EQ(nccl.type(), chakra_et::COMM_COLL_NODE);
  EXPECT_FALSE(cpu_op(nccl.name()));
  const chakra_et::AttributeProto* type = FindAttr(nccl, "comm_type");
  const chakra_et::AttributeProto* size = FindAttr(nccl, "comm_size");
  ASSERT_NE(type, nullptr);
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(type->value_case(), chakra_et::AttributeProto::kInt64Val);
  EXPECT_EQ(type->int64_val(), chakra_et::ALL_REDUCE);
  EXPECT_EQ(size->value_case(), chakra_et::AttributeProto::kInt64Val);
  EXPECT_EQ(size->int64_val(), int64_t{1} << 20);
  EXPECT_EQ(nccl.duration_micros(), 50u);

  // No size: ASTRA-sim could not time it (a zero all-gather never ends there).
  const chakra_et::Node& gather = *e.by_name.at("ncclDevKernel_AllGather_RING_LL");
  EXPECT_EQ(gather.type(), chakra_et::COMP_NODE);
  EXPECT_EQ(FindAttr(gather, "comm_size"), nullptr);
  const chakra_et::Node& bucket = *e.by_name.at("allreduce bucket 0");
  EXPECT_EQ(bucket.type(), chakra_et::COMM_COLL_NODE);
  EXPECT_EQ(FindAttr(bucket, "comm_size")->int64_val(), 8192);
  EXPECT_EQ(e.by_name.count("removed call"), 0u);
}

TEST(ChakraExportTest, EveryGraphDependencyIsPresent) {
  Fixture f;
  Exported e = Export(f.g);
  const depgraph::Graph& g = f.g;
  std::map<uint32_t, const chakra_et::Node*> node_of;
  for (const auto& [name, t] : f.task) node_of[t.value()] = e.by_name.at(name);
  // The node that stands for "t is done, gap included": t's gap node if any.
  auto done = [&](TaskId t) -> const chakra_et::Node* {
    const chakra_et::Node* n = node_of.at(t.value());
    const chakra_et::Node* gap = GapAfter(e.file, n->id());
    return gap != nullptr ? gap : n;
  };
  int checked = 0;
  for (const auto& [name, t] : f.task) {
    const TaskId prev = g.prev_on_resource(t);
    if (g.resource(g.resource_of(t)).ordered && prev.valid()) {
      EXPECT_TRUE(HasDep(*node_of.at(t.value()), done(prev)->id())) << name << " after " << g.name(prev);
      ++checked;
    }
  }
  for (const depgraph::Edge& edge : g.edges()) {
    if (edge.removed) continue;
    EXPECT_TRUE(HasDep(*node_of.at(edge.dst.value()), node_of.at(edge.src.value())->id()))
        << g.name(edge.src) << " -> " << g.name(edge.dst);
    ++checked;
  }
  EXPECT_EQ(checked, 8 + 12);  // 8 resource-order pairs, 12 live edges
  // Unordered channel: no order between its two comm tasks beyond the real edge.
  const chakra_et::Node& push = *e.by_name.at("gradient push");
  EXPECT_EQ(push.data_deps_size(), 1);
}

TEST(ChakraExportTest, DepsAreEarlierUniqueAndTimesConsistent) {
  Fixture f;
  Exported e = Export(f.g);
  std::vector<int64_t> asap_end(e.file.nodes.size(), 0);
  int64_t deps = 0;
  for (const chakra_et::Node& n : e.file.nodes) {
    EXPECT_EQ(n.ctrl_deps_size(), 0);
    std::vector<uint64_t> d(n.data_deps().begin(), n.data_deps().end());
    EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
    EXPECT_EQ(std::adjacent_find(d.begin(), d.end()), d.end()) << n.name() << " repeats a dep";
    int64_t asap = 0;
    for (uint64_t p : d) {
      ASSERT_LT(p, n.id()) << n.name() << " depends on a later node: no cycle possible";
      const chakra_et::Node& parent = e.file.nodes[p];
      // The exported timeline itself satisfies every dependency.
      EXPECT_GE(n.start_time_micros(), parent.start_time_micros() + parent.duration_micros())
          << parent.name() << " -> " << n.name();
      asap = std::max(asap, asap_end[p]);
    }
    deps += static_cast<int64_t>(d.size());
    asap_end[n.id()] = asap + static_cast<int64_t>(n.duration_micros());
    // A simulator running the file as fast as it allows never ends a node later
    // than the exported timeline (edge delays are dropped, never added).
    EXPECT_LE(asap_end[n.id()], static_cast<int64_t>(n.start_time_micros() + n.duration_micros()));
  }
  EXPECT_EQ(deps, e.trace.stats.dependencies);
}

TEST(ChakraExportTest, DurationsAreMicrosecondsWithinRounding) {
  Fixture f;
  Exported e = Export(f.g);
  for (const auto& [name, t] : f.task) {
    const int64_t us = static_cast<int64_t>(e.by_name.at(name)->duration_micros());
    EXPECT_LT(std::abs(us * 1000 - f.g.duration_ns(t)), 1000) << name;
  }
  EXPECT_EQ(e.by_name.at("volta_sgemm_128x64_nn")->duration_micros(), 100u);
  EXPECT_EQ(e.by_name.at("cudaLaunchKernel a")->duration_micros(), 5u);
  const chakra_et::Node* gap = GapAfter(e.file, e.by_name.at("cudaLaunchKernel a")->id());
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->duration_micros(), 2u);
  EXPECT_EQ(gap->start_time_micros(), 5u);
  EXPECT_EQ(e.by_name.at("cudaLaunchKernel b")->start_time_micros(), 7u);
  EXPECT_EQ(e.by_name.at("cudaLaunchKernel a")->start_time_micros(), 0u);
}

TEST(ChakraExportTest, CycleAndMismatchedSimulationAreErrors) {
  Fixture f;
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(f.g);
  ASSERT_TRUE(sim.ok());
  depgraph::SimResult short_sim = *sim;
  short_sim.start_ns.pop_back();
  EXPECT_EQ(ExportChakra(f.g, short_sim).status().code(), absl::StatusCode::kInvalidArgument);

  depgraph::Graph g = f.g;
  g.AddEdge(f.task.at("cudaStreamSynchronize"), f.task.at("cudaLaunchKernel a"), EdgeKind::kUser);
  absl::StatusOr<ChakraTrace> cyclic = ExportChakra(g, *sim);  // times are irrelevant to the check
  ASSERT_FALSE(cyclic.ok());
  EXPECT_EQ(cyclic.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(cyclic.status().message().find("cycle"), absl::string_view::npos);
}

TEST(ChakraExportTest, ReaderRejectsTruncatedAndEmptyInput) {
  Fixture f;
  Exported e = Export(f.g);
  EXPECT_EQ(ReadChakra("").status().code(), absl::StatusCode::kInvalidArgument);
  const std::string cut = e.trace.bytes.substr(0, e.trace.bytes.size() - 3);
  EXPECT_EQ(ReadChakra(cut).status().code(), absl::StatusCode::kDataLoss);
}

TEST(ChakraExportTest, CollectiveFromName) {
  EXPECT_EQ(CollectiveFromName("ncclKernel_AllReduce_RING_LL_Sum_float"), chakra_et::ALL_REDUCE);
  EXPECT_EQ(CollectiveFromName("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL"),
            chakra_et::REDUCE_SCATTER);
  EXPECT_EQ(CollectiveFromName("ncclDevKernel_AllGather_RING_LL"), chakra_et::ALL_GATHER);
  EXPECT_EQ(CollectiveFromName("nccl:all_to_all"), chakra_et::ALL_TO_ALL);
  EXPECT_EQ(CollectiveFromName("ncclKernel_Broadcast_RING_LL_Sum_int8_t"), chakra_et::BROADCAST);
  EXPECT_EQ(CollectiveFromName("all-reduce bucket 3"), chakra_et::ALL_REDUCE);
  EXPECT_FALSE(CollectiveFromName("ncclKernel_Reduce_RING_LL_Sum_float").has_value());
  EXPECT_FALSE(CollectiveFromName("ncclDevKernel_SendRecv").has_value());
  EXPECT_FALSE(CollectiveFromName("ncclDevKernel_Generic_4").has_value());
}

TEST(ChakraExportTest, WritesOneIdenticalFilePerRank) {
  Fixture f;
  Exported e = Export(f.g);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("reverie_chakra_unit_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string prefix = (dir / "tiny").string();
  absl::StatusOr<std::vector<std::string>> paths = WriteChakraRanks(e.trace, prefix, 3);
  ASSERT_TRUE(paths.ok()) << paths.status();
  ASSERT_EQ(paths->size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ((*paths)[r], prefix + "." + std::to_string(r) + ".et");
    std::ifstream in((*paths)[r], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), e.trace.bytes);
  }
  EXPECT_FALSE(WriteChakraRanks(e.trace, prefix, 0).ok());
  absl::StatusOr<std::vector<std::string>> bad =
      WriteChakraRanks(e.trace, (dir / "missing" / "x").string(), 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("missing/x.0.et"), absl::string_view::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reverie::exporter
