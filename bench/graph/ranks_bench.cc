// graph_ranks_bench: the cost of simulating N ranks of one job together
// (depgraph/ranks.h: CoupleRanks, then Simulate, then AnalyzeJob) against a
// same-run baseline, simulating the same N rank graphs one by one, which is
// what `reverie ranks` does anyway before it couples them.
//
//   graph_ranks_bench [TRACE] [--ranks N,N,...] [--runs R]
//
// TRACE defaults to df_index_resolver.json.gz under the shared traces (2,020
// NCCL all-reduces per rank); every rank is a copy of it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/graph/bench_graph.h"
#include "depgraph/ranks.h"
#include "depgraph/simulator.h"

using reverie::bench::Clock;
using reverie::bench::Seconds;

int main(int argc, char** argv) {
  using namespace reverie::depgraph;
  std::string path = reverie::bench::DefaultTrace();
  std::vector<int> sizes = {2, 8, 32};
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc) {
      sizes.clear();
      for (absl::string_view s : absl::StrSplit(argv[++i], ',')) {
        int n = 0;
        if (absl::SimpleAtoi(s, &n) && n >= 2) sizes.push_back(n);
      }
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      path = a;
    }
  }
  std::optional<Graph> rank = reverie::bench::LoadGraph("graph_ranks_bench", path);
  if (!rank) return 2;
  std::printf("trace: %s (%zu tasks per rank)\n", path.c_str(), rank->live_task_count());
  std::printf("%6s %12s %12s %12s %8s %10s\n", "ranks", "tasks", "alone_s", "job_s", "ratio",
              "job_B/task");
  for (int n : sizes) {
    // As `reverie ranks` does: every rank simulated alone first (the
    // baseline's work), that simulation handed to CoupleRanks for the order.
    absl::StatusOr<SimResult> alone = Simulate(*rank);
    if (!alone.ok()) return 1;
    std::vector<RankInput> inputs(n, RankInput{&*rank, "rank", &*alone});
    double best_alone = 1e30, best_job = 1e30;
    size_t tasks = 0, bytes = 0;
    for (int run = 0; run < runs; ++run) {
      const Clock::time_point t0 = Clock::now();
      for (int r = 0; r < n; ++r) {
        absl::StatusOr<SimResult> sim = Simulate(*rank);
        if (!sim.ok()) return 1;
      }
      const Clock::time_point t1 = Clock::now();
      absl::StatusOr<JobGraph> job = CoupleRanks(inputs);
      if (!job.ok()) {
        std::fprintf(stderr, "graph_ranks_bench: %s\n", std::string(job.status().message()).c_str());
        return 1;
      }
      absl::StatusOr<SimResult> sim = Simulate(job->graph);
      if (!sim.ok()) return 1;
      const std::vector<RankTime> times = AnalyzeJob(*job, *sim);
      const Clock::time_point t2 = Clock::now();
      if (times.size() != static_cast<size_t>(n)) return 1;
      best_alone = std::min(best_alone, Seconds(t0, t1));
      best_job = std::min(best_job, Seconds(t1, t2));
      tasks = job->graph.live_task_count();
      bytes = job->graph.MemoryBytes();
    }
    std::printf("%6d %12zu %12.3f %12.3f %7.2fx %10.1f\n", n, tasks, best_alone, best_job,
                best_job / best_alone, static_cast<double>(bytes) / static_cast<double>(tasks));
  }
  return 0;
}
