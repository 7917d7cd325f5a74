// transforms_bench: what a transformation costs next to a simulation of the
// same graph. The graph (transforms/test_graphs.h MakeLargeGraph) has
// `--tasks` tasks (default one million: launch call + kernel pairs on one
// thread and one stream, six kernel names, 100 steps).
//
//   build/release/bench/transforms/transforms_bench [--tasks=N] [benchmark flags]
//
// BM_Simulate is the baseline; BM_AmpScript is the whole `--script amp.lua`
// path (ScriptRunner: graph copies, Lua, selection by name, scaling,
// validation shortcut, diff, commit). The ratio goes to docs/PERFORMANCE.md.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "depgraph/simulator.h"
#include "lua/script_runner.h"
#include "transforms/edit.h"
#include "transforms/remove.h"
#include "transforms/select.h"
#include "transforms/session.h"
#include "transforms/structure.h"
#include "transforms/test_graphs.h"

namespace {

using reverie::depgraph::Graph;
namespace tf = reverie::transforms;

int64_t g_tasks = 1'000'000;

const Graph& BigGraph() {
  static const Graph* g = new Graph(tf::testing::MakeLargeGraph(g_tasks));
  return *g;
}

void BM_Simulate(benchmark::State& state) {
  const Graph& g = BigGraph();
  reverie::depgraph::SimResult r;
  for (auto _ : state) {
    if (!reverie::depgraph::SimulateInto(g, {}, &r).ok()) state.SkipWithError("simulate failed");
    benchmark::DoNotOptimize(r.makespan_ns);
  }
  state.counters["tasks"] = static_cast<double>(g.live_task_count());
}

void BM_GraphCopy(benchmark::State& state) {
  const Graph& g = BigGraph();
  for (auto _ : state) {
    Graph copy = g;
    benchmark::DoNotOptimize(copy.task_count());
  }
}

void BM_SelectByName(benchmark::State& state) {
  const Graph& g = BigGraph();
  tf::TaskQuery q;
  q.kinds = tf::KindBit(reverie::depgraph::TaskKind::kKernel);
  q.names = {"gemm", "scudnn", "conv", "winograd"};
  for (auto _ : state) {
    absl::StatusOr<tf::Selection> s = tf::Select(g, q);
    benchmark::DoNotOptimize(s->size());
  }
}

void BM_ScaleHalf(benchmark::State& state) {
  Graph g = BigGraph();
  const tf::Selection all = tf::SelectAll(g);
  for (auto _ : state) {
    benchmark::DoNotOptimize(tf::ScaleDuration(g, all, 1.0).ok());
  }
}

void BM_RemoveUpdatePhase(benchmark::State& state) {
  const Graph& base = BigGraph();
  tf::TaskQuery q;
  q.kinds = tf::KindBit(reverie::depgraph::TaskKind::kKernel);
  q.phases = tf::PhaseBit(reverie::depgraph::Phase::kUpdate);
  const tf::Selection k = *tf::Select(base, q);
  const tf::Selection victims = k.Union(tf::LaunchesOf(base, k));
  for (auto _ : state) {
    state.PauseTiming();
    Graph g = base;
    state.ResumeTiming();
    absl::StatusOr<tf::RemoveResult> r = tf::RemoveTasks(g, victims);
    benchmark::DoNotOptimize(r->removed);
  }
  state.counters["removed"] = static_cast<double>(victims.size());
}

// 1,000 dependencies added one at a time, each cycle-checked
// (Graph::Reaches), from a kernel's launch call to the kernel 100 pairs
// later: what a script adding dependencies in a loop pays. Each check used
// to search everything after its destination (a pass over the graph).
void BM_CheckedDependencies(benchmark::State& state) {
  const Graph& base = BigGraph();
  tf::TaskQuery q;
  q.kinds = tf::KindBit(reverie::depgraph::TaskKind::kKernel);
  const tf::Selection kernels = *tf::Select(base, q);
  const std::vector<reverie::depgraph::TaskId> k(kernels.begin(), kernels.end());
  const size_t stride = k.size() / 1000;
  for (auto _ : state) {
    state.PauseTiming();
    Graph g = base;
    state.ResumeTiming();
    for (size_t i = 0; i + 100 < k.size(); i += stride) {
      const auto r = tf::AddDependency(g, tf::LauncherOf(g, k[i]), k[i + 100]);
      if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    }
    benchmark::DoNotOptimize(g.live_edge_count());
  }
}

void BM_AmpScript(benchmark::State& state) {
  const Graph& base = BigGraph();
  for (auto _ : state) {
    state.PauseTiming();
    Graph g = base;  // the caller's graph; the runner copies it again
    reverie::lua::RunnerOptions o;
    o.script_dirs = {REVERIE_SOURCE_DIR "/scripts"};
    reverie::lua::ScriptRunner runner(std::move(o));
    state.ResumeTiming();
    const absl::Status s = runner.Run({"amp.lua"}, {}, &g);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
    benchmark::DoNotOptimize(g.task_count());
  }
}

// retarget_gpu.lua end to end: per-kernel math classification in Lua plus
// wave scaling in C++ (this graph records no launch geometry).
void BM_RetargetScript(benchmark::State& state) {
  const Graph& base = BigGraph();
  for (auto _ : state) {
    state.PauseTiming();
    Graph g = base;
    reverie::lua::RunnerOptions o;
    o.script_dirs = {REVERIE_SOURCE_DIR "/scripts"};
    o.settings = {{"from", "V100-SXM2"}, {"to", "H100-SXM"}};
    reverie::lua::ScriptRunner runner(std::move(o));
    state.ResumeTiming();
    const absl::Status s = runner.Run({"retarget_gpu.lua"}, {}, &g);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
    benchmark::DoNotOptimize(g.task_count());
  }
}

BENCHMARK(BM_Simulate)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_GraphCopy)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_SelectByName)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ScaleHalf)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_RemoveUpdatePhase)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_CheckedDependencies)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_AmpScript)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_RetargetScript)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--tasks=", 8) == 0) {
      g_tasks = std::atoll(argv[i] + 8);
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      --i;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
