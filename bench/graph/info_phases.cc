// info_phases: where `reverie info`'s time after the import goes, on one
// trace (default: df_index_resolver.json.gz from the shared traces). The
// trace is loaded once; then each phase of whatif::AnalyzeGraph runs in this
// process: building the dependency graph, simulating it, and each analysis
// of whatif::ViewOf, alone and all together. Figures are best-of-N wall
// times (the analyses may use several threads) and the minor page faults of
// the best run, next to a same-run baseline: the import itself.
//
//   info_phases [TRACE] [--runs N]
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/graph/bench_graph.h"
#include "depgraph/breakdown.h"
#include "depgraph/builder.h"
#include "depgraph/cpu_time.h"
#include "depgraph/facts.h"
#include "depgraph/memory.h"
#include "depgraph/model_info.h"
#include "depgraph/simulator.h"
#include "depgraph/step_time.h"
#include "frameworks/trace_loader.h"
#include "whatif/hardware_view.h"
#include "whatif/info.h"

namespace {

using reverie::bench::Clock;
using reverie::bench::Seconds;

long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Best of `runs` calls of `fn`: its wall time in ms and its minor faults.
template <typename Fn>
void Row(const char* label, int runs, Fn&& fn) {
  double best = 1e30;
  long faults = 0;
  for (int i = 0; i < runs; ++i) {
    const long f0 = MinorFaults();
    const Clock::time_point t0 = Clock::now();
    fn();
    const double ms = Seconds(t0, Clock::now()) * 1e3;
    if (ms < best) best = ms, faults = MinorFaults() - f0;
  }
  std::printf("%-46s %9.1f %12ld\n", label, best, faults);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace reverie;
  std::string path = bench::DefaultTrace();
  int runs = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      path = a;
    }
  }
  absl::StatusOr<Trace> trace = LoadTraceFile(path);
  if (!trace.ok()) {
    std::fprintf(stderr, "info_phases: %s\n", std::string(trace.status().message()).c_str());
    return 2;
  }
  depgraph::BuildStats stats;
  absl::StatusOr<depgraph::Graph> graph = depgraph::BuildGraph(*trace, {}, &stats);
  absl::StatusOr<depgraph::SimResult> sim =
      graph.ok() ? depgraph::Simulate(*graph) : absl::StatusOr<depgraph::SimResult>(graph.status());
  if (!sim.ok()) {
    std::fprintf(stderr, "info_phases: %s\n", std::string(sim.status().message()).c_str());
    return 2;
  }
  const depgraph::Graph& g = *graph;
  const std::vector<depgraph::StepTime> steps = depgraph::MeasuredSteps(g);
  std::printf("trace: %s (%zu tasks), best of %d\n", path.c_str(), g.live_task_count(), runs);
  std::printf("%-46s %9s %12s\n", "phase", "wall ms", "minor faults");
  Row("baseline: the import (LoadTraceFile)", runs, [&] { (void)LoadTraceFile(path); });
  Row("AnalyzeGraph (all below, info after import)", runs,
      [&] { (void)whatif::AnalyzeGraph(*trace); });
  Row("  BuildGraph", runs, [&] { (void)depgraph::BuildGraph(*trace, {}, nullptr); });
  Row("  Simulate", runs, [&] { (void)depgraph::Simulate(g); });
  Row("  ViewOf (the analyses below)", runs, [&] { (void)whatif::ViewOf(*trace, g, *sim, stats); });
  Row("    DetectFacts", runs, [&] { (void)depgraph::DetectFacts(*trace, g); });
  Row("    ComputeBreakdown", runs, [&] { (void)depgraph::ComputeBreakdown(g, *sim); });
  Row("    MeasuredSteps", runs, [&] { (void)depgraph::MeasuredSteps(g); });
  Row("    ComputeCpuTime", runs, [&] {
    const depgraph::TaskTimes m = depgraph::MeasuredTimes(g);
    (void)depgraph::ComputeCpuTime(g, m.start, m.end);
  });
  Row("    AnalyzeHardware", runs,
      [&] { (void)whatif::AnalyzeHardware(g, depgraph::ModelInfoFromTrace(*trace).devices); });
  Row("    ComputeMemory", runs, [&] { (void)depgraph::ComputeMemory(g, steps); });
  return 0;
}
