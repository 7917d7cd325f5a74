// File: bench/graph/bench_graph.h
//
// What the graph benchmarks share: a steady clock in seconds, the default
// trace (df_index_resolver, the largest shared DDP trace) and loading a
// trace into a graph with a one-line error.
#ifndef REVERIE_BENCH_GRAPH_BENCH_GRAPH_H_
#define REVERIE_BENCH_GRAPH_BENCH_GRAPH_H_

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "whatif/pipeline.h"

namespace reverie::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

inline std::string DefaultTrace() {
  return std::string(REVERIE_DEFAULT_TRACES) +
         "/facebookresearch__HolisticTraceAnalysis/tests/data/df_index_resolver/"
         "df_index_resolver.json.gz";
}

// The trace's graph (through the pipeline, whatif/pipeline.h), or nullopt
// after printing "<bench>: <error>" to stderr.
inline std::optional<depgraph::Graph> LoadGraph(const char* bench, const std::string& path) {
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> t = whatif::LoadAndSimulate(path);
  if (!t.ok()) {
    std::fprintf(stderr, "%s: %s\n", bench, std::string(t.status().message()).c_str());
    return std::nullopt;
  }
  return std::move((*t)->graph);
}

}  // namespace reverie::bench

#endif  // REVERIE_BENCH_GRAPH_BENCH_GRAPH_H_
