// Chakra export of a real multi-GPU trace: HTA's df_index_resolver (V100 DDP,
// rank 1 of 2, NCCL all-reduce kernels on their own stream). Label
// real_traces: skips when ../shared/traces is absent.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "depgraph/builder.h"
#include "depgraph/kernel_class.h"
#include "depgraph/simulator.h"
#include "export/chakra.h"
#include "frameworks/trace_loader.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"
#include "tests/report/cli_runner.h"

namespace reverie::testing {
namespace {

using depgraph::Graph;
using depgraph::TaskId;

constexpr char kDdpTrace[] =
    "facebookresearch__HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz";

bool HasDep(const chakra_et::Node& n, int64_t parent) {
  return parent >= 0 && std::binary_search(n.data_deps().begin(), n.data_deps().end(),
                                           static_cast<uint64_t>(parent));
}

TEST(ChakraRealTest, DdpTraceKeepsEveryNcclKernelAndDependency) {
  REVERIE_REQUIRE_TRACE(path, kDdpTrace);
  absl::StatusOr<Trace> trace = LoadTraceFile(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<Graph> g = depgraph::BuildGraph(*trace);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(*g);
  ASSERT_TRUE(sim.ok()) << sim.status();
  absl::StatusOr<exporter::ChakraTrace> out = exporter::ExportChakra(*g, *sim);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<exporter::ChakraFile> file = exporter::ReadChakra(out->bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  const std::vector<chakra_et::Node>& nodes = file->nodes;

  int64_t nccl = 0, live = 0;
  for (uint32_t t = 0; t < g->task_count(); ++t) {
    const TaskId id(t);
    if (g->removed(id)) continue;
    ++live;
    if (g->kind(id) == depgraph::TaskKind::kKernel &&
        depgraph::ClassifyKernelName(g->name(id)) == depgraph::KernelClass::kCommunication) {
      ++nccl;
    }
  }
  int64_t coll = 0;
  for (const chakra_et::Node& n : nodes) coll += n.type() == chakra_et::COMM_COLL_NODE;
  EXPECT_GT(nccl, 0);
  EXPECT_EQ(coll, nccl);
  EXPECT_EQ(out->stats.comm_untyped, 0);
  // Kineto records no payload for these kernels: every size is unknown.
  EXPECT_EQ(out->stats.comm_unsized, nccl);
  EXPECT_EQ(static_cast<int64_t>(nodes.size()), live + out->stats.gap_nodes);

  // Every edge and every resource-order pair of the graph is a data_dep.
  int64_t missing = 0, checked = 0;
  for (uint32_t t = 0; t < g->task_count(); ++t) {
    const TaskId id(t);
    if (g->removed(id)) continue;
    const chakra_et::Node& n = nodes[out->node_of_task[t]];
    EXPECT_EQ(n.id(), static_cast<uint64_t>(out->node_of_task[t]));
    const TaskId prev = g->prev_on_resource(id);
    if (prev.valid() && g->resource(g->resource_of(id)).ordered) {
      const int64_t gap = out->gap_node_of_task[prev.value()];
      missing += !HasDep(n, gap >= 0 ? gap : out->node_of_task[prev.value()]);
      ++checked;
    }
  }
  for (const depgraph::Edge& e : g->edges()) {
    if (e.removed) continue;
    missing += !HasDep(nodes[out->node_of_task[e.dst.value()]], out->node_of_task[e.src.value()]);
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
  const int64_t sim_us = (sim->makespan_ns + 500) / 1000;
  EXPECT_LE(std::abs(exported_makespan - sim_us), 1) << "simulated " << sim->makespan_ns << " ns";
  // What dropping edge delays (launch latency, window offsets) costs, for the report.
  std::printf("df_index_resolver: %zu nodes, %lld deps, %lld delayed edges dropped; makespan "
              "simulated %lld us, file as fast as deps allow %lld us (%.3fx)\n",
              nodes.size(), static_cast<long long>(out->stats.dependencies),
              static_cast<long long>(out->stats.delayed_edges), static_cast<long long>(sim_us),
              static_cast<long long>(asap_makespan),
              static_cast<double>(asap_makespan) / static_cast<double>(sim_us));
}

#ifdef REVERIE_CLI
TEST(ChakraRealTest, CliDdpWhatIfWritesEveryRank) {
  REVERIE_REQUIRE_TRACE(path, kDdpTrace);
  const std::string dir = TempDir("export_real_ddp");
  const std::string prefix = dir + "/df";
  CliResult r = RunCli(REVERIE_CLI,
                       {"export", path, "--chakra", prefix, "--ranks", "4", "--script", "ddp.lua",
                        "--set", "workers=4"},
                       dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  EXPECT_EQ(lines, 4) << r.out;
  EXPECT_NE(r.err.find("comm_size 0"), std::string::npos) << r.err;  // the unsized note
  const std::string rank0 = ReadFile(prefix + ".0.et");
  EXPECT_EQ(ReadFile(prefix + ".3.et"), rank0);
  absl::StatusOr<exporter::ChakraFile> f = exporter::ReadChakra(rank0);
  ASSERT_TRUE(f.ok()) << f.status();
  int64_t coll = 0;
  for (const chakra_et::Node& n : f->nodes) coll += n.type() == chakra_et::COMM_COLL_NODE;
  // ddp.lua re-times the recorded all-reduces and adds none: as many as the baseline has.
  CliResult base = RunCli(REVERIE_CLI, {"export", path, "--chakra", dir + "/base"}, dir);
  ASSERT_EQ(base.exit_code, 0) << base.err;
  absl::StatusOr<exporter::ChakraFile> b = exporter::ReadChakra(ReadFile(dir + "/base.0.et"));
  ASSERT_TRUE(b.ok()) << b.status();
  int64_t base_coll = 0;
  for (const chakra_et::Node& n : b->nodes) base_coll += n.type() == chakra_et::COMM_COLL_NODE;
  EXPECT_GT(coll, 0);
  EXPECT_EQ(coll, base_coll);
  EXPECT_NE(r.out.find(absl::StrCat(f->nodes.size(), " nodes")), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace reverie::testing
