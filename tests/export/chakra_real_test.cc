// Chakra export of real multi-GPU traces: HTA's df_index_resolver (V100 DDP,
// rank 1 of 2, NCCL all-reduce kernels on their own stream, Collective
// records without sizes) and HTA's nccl_data (A100, rank 0 of 2, sized
// record_param_comms records beside its all-reduce and broadcast kernels).
// Label real_traces: skips when ../shared/traces is absent.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/testing/cli_runner.h"
#include "depgraph/builder.h"
#include "depgraph/kernel_class.h"
#include "depgraph/model_info.h"
#include "depgraph/simulator.h"
#include "export/chakra.h"
#include "export/chakra_check.h"
#include "export/comm_typing.h"
#include "frameworks/trace_loader.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"
#include "whatif/pipeline.h"

namespace reverie::testing {
namespace {

using depgraph::Graph;
using depgraph::TaskId;

bool HasDep(const chakra_et::Node& n, int64_t parent) {
  return parent >= 0 && std::binary_search(n.data_deps().begin(), n.data_deps().end(),
                                           static_cast<uint64_t>(parent));
}

// A real trace built, simulated and exported with its collective records,
// and the export read back.
struct Exported {
  Graph g;
  depgraph::SimResult sim;
  depgraph::ModelInfo model;
  exporter::ChakraTrace out;
  exporter::ChakraFile file;
};

// Null (with the failure reported) when any stage fails.
std::unique_ptr<Exported> ExportReal(const std::string& path) {
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> run = whatif::LoadAndSimulate(path);
  EXPECT_TRUE(run.ok()) << run.status();
  if (!run.ok()) return nullptr;
  auto e = std::make_unique<Exported>();
  e->g = std::move((*run)->graph);
  e->sim = std::move((*run)->baseline);
  e->model = std::move((*run)->model);
  absl::StatusOr<exporter::ChakraTrace> out = exporter::ExportChakra(
      e->g, e->sim, {.collectives = exporter::CollectiveRecordsOf((*run)->trace)});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return nullptr;
  e->out = *std::move(out);
  absl::StatusOr<exporter::ChakraFile> file = exporter::ReadChakra(e->out.bytes);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return nullptr;
  e->file = *std::move(file);
  return e;
}

TEST(ChakraRealTest, DdpTraceKeepsEveryNcclKernelAndDependency) {
  REVERIE_REQUIRE_TRACE(path, testing::kDfIndexResolverTrace);
  const std::unique_ptr<Exported> e = ExportReal(path);
  ASSERT_NE(e, nullptr);
  const std::vector<chakra_et::Node>& nodes = e->file.nodes;

  int64_t nccl = 0, live = 0;
  for (uint32_t t = 0; t < e->g.task_count(); ++t) {
    const TaskId id(t);
    if (e->g.removed(id)) continue;
    ++live;
    if (e->g.kind(id) == depgraph::TaskKind::kKernel &&
        depgraph::ClassifyKernelName(e->g.name(id)) == depgraph::KernelClass::kCommunication) {
      ++nccl;
    }
  }
  int64_t coll = 0;
  for (const chakra_et::Node& n : nodes) coll += n.type() == chakra_et::COMM_COLL_NODE;
  EXPECT_GT(nccl, 0);
  // Kineto records no payload for these kernels and the trace's Collective
  // records carry none either: every size is unknown, and that is no
  // mismatch. ASTRA-sim cannot time a collective of unknown size: each is
  // replayed as a compute node of its simulated duration.
  EXPECT_EQ(coll, 0);
  EXPECT_EQ(e->out.stats.comm_untyped, 0);
  EXPECT_GT(e->model.collectives.size(), 0u);
  EXPECT_EQ(e->out.stats.comm_unsized, nccl);
  EXPECT_EQ(e->out.stats.comm_record_sized, 0);
  EXPECT_EQ(e->out.stats.comm_count_mismatch, 0);
  EXPECT_EQ(static_cast<int64_t>(nodes.size()), live + e->out.stats.gap_nodes);

  // Every edge and every resource-order pair of the graph is a data_dep.
  int64_t missing = 0, checked = 0;
  for (uint32_t t = 0; t < e->g.task_count(); ++t) {
    const TaskId id(t);
    if (e->g.removed(id)) continue;
    const chakra_et::Node& n = nodes[e->out.node_of_task[t]];
    EXPECT_EQ(n.id(), static_cast<uint64_t>(e->out.node_of_task[t]));
    const TaskId prev = e->g.prev_on_resource(id);
    if (prev.valid() && e->g.resource(e->g.resource_of(id)).ordered) {
      const int64_t gap = e->out.gap_node_of_task[prev.value()];
      missing += !HasDep(n, gap >= 0 ? gap : e->out.node_of_task[prev.value()]);
      ++checked;
    }
  }
  for (const depgraph::Edge& edge : e->g.edges()) {
    if (edge.removed) continue;
    missing += !HasDep(nodes[e->out.node_of_task[edge.dst.value()]],
                       e->out.node_of_task[edge.src.value()]);
    ++checked;
  }
  EXPECT_EQ(missing, 0) << "of " << checked;

  // Ids are a topological order; running the file as fast as its
  // dependencies allow never ends later than the exported (simulated) timeline.
  std::vector<int64_t> asap_end(nodes.size(), 0);
  int64_t asap_makespan = 0, exported_makespan = 0;
  for (const chakra_et::Node& n : nodes) {
    int64_t start = 0;
    for (uint64_t p : n.data_deps()) {
      ASSERT_LT(p, n.id());
      start = std::max(start, asap_end[p]);
    }
    asap_end[n.id()] = start + static_cast<int64_t>(n.duration_micros());
    asap_makespan = std::max(asap_makespan, asap_end[n.id()]);
    exported_makespan = std::max<int64_t>(exported_makespan, n.start_time_micros() + n.duration_micros());
  }
  EXPECT_LE(asap_makespan, exported_makespan);
  const int64_t sim_us = (e->sim.makespan_ns + 500) / 1000;
  EXPECT_LE(std::abs(exported_makespan - sim_us), 1) << "simulated " << e->sim.makespan_ns << " ns";
  // What dropping edge delays (launch latency, window offsets) costs, for the report.
  std::printf(
      "df_index_resolver: %zu nodes, %lld deps, %lld delayed edges dropped; makespan "
      "simulated %lld us, file as fast as deps allow %lld us (%.3fx)\n",
      nodes.size(), static_cast<long long>(e->out.stats.dependencies),
      static_cast<long long>(e->out.stats.delayed_edges), static_cast<long long>(sim_us),
      static_cast<long long>(asap_makespan),
      static_cast<double>(asap_makespan) / static_cast<double>(sim_us));
}

int64_t CommSize(const chakra_et::Node& n) {
  for (const chakra_et::AttributeProto& a : n.attr()) {
    if (a.name() == "comm_size") return a.int64_val();
  }
  return -1;
}

int64_t CommType(const chakra_et::Node& n) {
  for (const chakra_et::AttributeProto& a : n.attr()) {
    if (a.name() == "comm_type") return a.int64_val();
  }
  return -1;
}

// The sized records of one collective type, in the trace's measured order.
std::vector<int64_t> SizedRecords(const depgraph::ModelInfo& model,
                                  chakra_et::CollectiveCommType type) {
  std::vector<int64_t> out;
  for (const depgraph::CollectiveInfo& c : model.collectives) {
    if (c.bytes > 0 && exporter::CollectiveFromName(c.name) == type) out.push_back(c.bytes);
  }
  return out;
}

TEST(ChakraRealTest, SizedCollectiveRecordsGiveEveryAllReduceItsBytes) {
  REVERIE_REQUIRE_TRACE(path, testing::kNcclTrace);
  const std::unique_ptr<Exported> e = ExportReal(path);
  ASSERT_NE(e, nullptr);

  // Node ids follow the simulated timeline, in which one NCCL stream runs
  // its kernels in trace order: the sizes in id order are the records'.
  std::vector<int64_t> all_reduce, broadcast;
  for (const chakra_et::Node& n : e->file.nodes) {
    if (n.type() != chakra_et::COMM_COLL_NODE) continue;
    if (CommType(n) == chakra_et::ALL_REDUCE) all_reduce.push_back(CommSize(n));
    if (CommType(n) == chakra_et::BROADCAST) broadcast.push_back(CommSize(n));
  }
  const std::vector<int64_t> sized = SizedRecords(e->model, chakra_et::ALL_REDUCE);
  ASSERT_FALSE(all_reduce.empty());
  for (int64_t size : all_reduce) EXPECT_GT(size, 0);
  EXPECT_EQ(all_reduce, sized);
  EXPECT_EQ(broadcast, SizedRecords(e->model, chakra_et::BROADCAST));
  EXPECT_EQ(e->out.stats.comm_record_sized, e->out.stats.comm_nodes);
  EXPECT_EQ(e->out.stats.comm_unsized, 0);
  EXPECT_EQ(e->out.stats.comm_count_mismatch, 0);
  for (const exporter::CollectiveTypeMatch& m : e->out.collective_types) {
    EXPECT_TRUE(m.matched()) << m.type << ": " << m.kernels << " kernels, " << m.records;
  }
  const auto [lo, hi] = std::minmax_element(all_reduce.begin(), all_reduce.end());
  std::printf(
      "nccl_data: %lld of %lld collectives sized from records (%zu all-reduce, %lld..%lld "
      "bytes; %zu broadcast)\n",
      static_cast<long long>(e->out.stats.comm_record_sized),
      static_cast<long long>(e->out.stats.comm_nodes), all_reduce.size(),
      static_cast<long long>(*lo), static_cast<long long>(*hi), broadcast.size());
}

#ifdef REVERIE_CLI
TEST(ChakraRealTest, CliSizesRecordedCollectivesAfterAScript) {
  REVERIE_REQUIRE_TRACE(path, testing::kNcclTrace);
  const std::string dir = TempDir("export_real_sized");
  // ddp.lua re-times the recorded all-reduces: they keep their task ids and
  // so their records.
  CliResult r = RunCli(REVERIE_CLI,
                       {"export", path, "--chakra", dir + "/ddp", "--script", "ddp.lua", "--set",
                        "workers=4", "--set", "bandwidth_gbps=100"},
                       dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("sized from the trace's Collective records"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("unknown size"), std::string::npos) << r.err;
  absl::StatusOr<exporter::ChakraFile> f = exporter::ReadChakra(ReadFile(dir + "/ddp.0.et"));
  ASSERT_TRUE(f.ok()) << f.status();
  int64_t coll = 0;
  for (const chakra_et::Node& n : f->nodes) {
    if (n.type() != chakra_et::COMM_COLL_NODE) continue;
    ++coll;
    EXPECT_GT(CommSize(n), 0) << n.name();
  }
  EXPECT_GT(coll, 0);
  std::filesystem::remove_all(dir);
}

TEST(ChakraRealTest, CliDdpWhatIfWritesEveryRank) {
  REVERIE_REQUIRE_TRACE(path, testing::kDfIndexResolverTrace);
  const std::string dir = TempDir("export_real_ddp");
  const std::string prefix = dir + "/df";
  CliResult r = RunCli(REVERIE_CLI,
                       {"export", path, "--chakra", prefix, "--ranks", "4", "--script", "ddp.lua",
                        "--set", "workers=4"},
                       dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int wrote = 0;
  for (size_t at = r.out.find("wrote "); at != std::string::npos; at = r.out.find("wrote ", at + 1)) {
    ++wrote;
  }
  EXPECT_EQ(wrote, 4) << r.out;
  EXPECT_NE(r.out.find("\nreverie: "), std::string::npos) << r.out;
  // No Collective record sizes these all-reduces: ASTRA-sim cannot time
  // them, so every one stays on the lane at ddp.lua's time, and says so.
  EXPECT_NE(r.err.find("collectives of unknown size 2020"), std::string::npos) << r.err;
  const std::string rank0 = ReadFile(prefix + ".0.et");
  EXPECT_EQ(ReadFile(prefix + ".3.et"), rank0);
  absl::StatusOr<exporter::ChakraFile> f = exporter::ReadChakra(rank0);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(exporter::ValidateChakra(*f, true).ok()) << exporter::ValidateChakra(*f, true);
  EXPECT_NE(r.out.find(absl::StrCat(f->nodes.size(), " nodes")), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace reverie::testing
