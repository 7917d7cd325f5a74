// graph_sim_bench: simulation speed and memory on a large graph built from a
// real trace (replicated back to back until it has --tasks tasks), with a
// same-run baseline: a plain topological traversal of the same graph
// (Graph::Validate(), Kahn's algorithm over edges + resource order), which
// is the least work any dependency-respecting replay must do.
//
//   graph_sim_bench [TRACE] [--tasks N] [--runs R]
//
// TRACE defaults to df_index_resolver.json.gz under the shared traces.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "bench/graph/bench_graph.h"
#include "depgraph/replicate.h"
#include "depgraph/simulator.h"

using reverie::bench::Clock;
using reverie::bench::Seconds;

int main(int argc, char** argv) {
  using namespace reverie::depgraph;
  std::string path = reverie::bench::DefaultTrace();
  size_t target = 2'000'000;
  int runs = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tasks" && i + 1 < argc) {
      target = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else {
      path = a;
    }
  }
  std::optional<Graph> base = reverie::bench::LoadGraph("graph_sim_bench", path);
  if (!base) return 2;
  const int copies = static_cast<int>((target + base->live_task_count() - 1) / base->live_task_count());
  const Graph g = ReplicateGraph(*base, copies);
  const size_t n = g.live_task_count();
  std::printf("trace: %s\n", path.c_str());
  std::printf("graph: %zu tasks (%d copies of %zu), %zu edges, %zu resources\n", n, copies,
              base->live_task_count(), g.live_edge_count(), g.resource_count());

  auto t0 = Clock::now();
  g.adjacency();
  const double adj_s = Seconds(t0, Clock::now());

  // Medians (docs/PERFORMANCE.md quotes medians), and the median of the
  // per-run ratios: each run times both on the same graph back to back.
  std::vector<double> topo, sim, ratio;
  SimResult result;
  for (int r = 0; r < runs; ++r) {
    t0 = Clock::now();
    const absl::Status v = g.Validate();
    topo.push_back(Seconds(t0, Clock::now()));
    if (!v.ok()) {
      std::fprintf(stderr, "graph_sim_bench: %s\n", std::string(v.message()).c_str());
      return 1;
    }
    t0 = Clock::now();
    const absl::Status s = SimulateInto(g, {}, &result);
    sim.push_back(Seconds(t0, Clock::now()));
    if (!s.ok()) return 1;
    ratio.push_back(sim.back() / topo.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const double med_topo = median(topo), med_sim = median(sim);
  const double graph_bytes = static_cast<double>(g.MemoryBytes());
  const double sim_bytes =
      static_cast<double>((result.start_ns.capacity() + result.end_ns.capacity()) * sizeof(int64_t));
  std::printf("adjacency build: %.1f ms\n", adj_s * 1e3);
  std::printf("baseline topological traversal (Validate, median of %d): %.1f ms = %.2f M tasks/s\n",
              runs, med_topo * 1e3, n / med_topo / 1e6);
  std::printf("simulate (median of %d): %.1f ms = %.2f M tasks/s (median ratio %.2fx the "
              "baseline's time)\n",
              runs, med_sim * 1e3, n / med_sim / 1e6, median(ratio));
  std::printf("memory: graph %.1f B/task + simulator result %.1f B/task = %.1f B/task\n",
              graph_bytes / n, sim_bytes / n, (graph_bytes + sim_bytes) / n);
  std::printf("mean simulated step: %.1f us over %zu steps\n",
              result.mean_step_ns() / 1e3, result.steps.size());
  return 0;
}
