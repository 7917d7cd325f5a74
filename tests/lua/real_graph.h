// File: tests/lua/real_graph.h
//
// A real trace loaded, built and simulated once per test binary, and a
// helper that predicts the effect of scripts on it the way `reverie predict`
// does (ScriptRunner, then a simulation with the chosen policy).
#ifndef REVERIE_TESTS_LUA_REAL_GRAPH_H_
#define REVERIE_TESTS_LUA_REAL_GRAPH_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "depgraph/builder.h"
#include "depgraph/simulator.h"
#include "frameworks/trace_loader.h"
#include "scripts/script_runner.h"
#include "tests/common/real_traces.h"
#include "transforms/model_info.h"

namespace reverie::testing {

struct RealGraph {
  Trace trace;
  depgraph::Graph graph;
  depgraph::SimResult baseline;
  transforms::ModelInfo model;
};

// Loaded once per path; nullptr (with `error`) when it cannot be built.
inline const RealGraph* LoadRealGraph(const std::string& path, std::string* error) {
  static auto* cache = new std::map<std::string, std::unique_ptr<RealGraph>>();
  if (auto it = cache->find(path); it != cache->end()) return it->second.get();
  auto g = std::make_unique<RealGraph>();
  absl::StatusOr<Trace> t = LoadTraceFile(path);
  if (!t.ok()) {
    *error = std::string(t.status().message());
    return nullptr;
  }
  g->trace = *std::move(t);
  depgraph::BuildStats stats;
  absl::StatusOr<depgraph::Graph> graph = depgraph::BuildGraph(g->trace, {}, &stats);
  if (!graph.ok()) {
    *error = std::string(graph.status().message());
    return nullptr;
  }
  g->graph = *std::move(graph);
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(g->graph);
  if (!sim.ok()) {
    *error = std::string(sim.status().message());
    return nullptr;
  }
  g->baseline = *std::move(sim);
  g->model = transforms::ModelInfoFromTrace(g->trace);
  const RealGraph* raw = g.get();
  (*cache)[path] = std::move(g);
  return raw;
}

// The step time as every command reports it (depgraph/step_time.h).
inline double PeriodUs(const depgraph::SimResult& r) { return r.mean_iteration_ns() / 1e3; }

struct Prediction {
  absl::Status status;
  depgraph::Graph graph;
  depgraph::SimResult sim;
  std::unique_ptr<lua::ScriptRunner> runner;
  double base_us = 0, pred_us = 0;
  double speedup() const { return pred_us > 0 ? base_us / pred_us : 0; }
};

inline Prediction Predict(const RealGraph& rg, const std::vector<std::string>& scripts,
                          std::vector<std::pair<std::string, std::string>> sets = {}) {
  Prediction p;
  lua::RunnerOptions o;
  o.script_dirs = {REVERIE_SOURCE_DIR "/scripts"};
  o.settings = std::move(sets);
  p.runner = std::make_unique<lua::ScriptRunner>(std::move(o));
  p.graph = rg.graph;
  p.status = p.runner->Run(scripts, rg.model, &p.graph);
  if (!p.status.ok()) return p;
  depgraph::SimOptions so;
  so.policy = p.runner->schedule().policy();
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(p.graph, so);
  if (!sim.ok()) {
    p.status = sim.status();
    return p;
  }
  p.sim = *std::move(sim);
  if (absl::Status s = p.runner->policy_status(); !s.ok()) p.status = s;
  p.base_us = PeriodUs(rg.baseline);
  p.pred_us = PeriodUs(p.sim);
  return p;
}

}  // namespace reverie::testing

#define REVERIE_REQUIRE_GRAPH(var, relative)                                 \
  REVERIE_REQUIRE_TRACE(var##_path, relative);                               \
  std::string var##_error;                                                   \
  const ::reverie::testing::RealGraph* var =                                 \
      ::reverie::testing::LoadRealGraph(var##_path, &var##_error);           \
  ASSERT_NE(var, nullptr) << var##_path << ": " << var##_error;

#endif  // REVERIE_TESTS_LUA_REAL_GRAPH_H_
