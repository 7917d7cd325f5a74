// File: tests/lua/real_graph.h
//
// A real trace loaded, built and simulated once per test binary, and a
// helper that predicts the effect of scripts on it the way `reverie predict`
// does: both through the pipeline library (whatif/pipeline.h).
#ifndef REVERIE_TESTS_LUA_REAL_GRAPH_H_
#define REVERIE_TESTS_LUA_REAL_GRAPH_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "depgraph/simulator.h"
#include "gtest/gtest.h"
#include "tests/common/real_traces.h"
#include "whatif/pipeline.h"

namespace reverie::testing {

// A shared trace through the pipeline (whatif/pipeline.h).
using RealGraph = whatif::LoadedTrace;

// Loaded once per path; nullptr (with `error`) when it cannot be built.
inline const RealGraph* LoadRealGraph(const std::string& path, std::string* error) {
  static auto* cache = new std::map<std::string, std::unique_ptr<RealGraph>>();
  if (auto it = cache->find(path); it != cache->end()) return it->second.get();
  absl::StatusOr<std::unique_ptr<RealGraph>> g = whatif::LoadAndSimulate(path);
  if (!g.ok()) {
    *error = std::string(g.status().message());
    return nullptr;
  }
  const RealGraph* raw = g->get();
  (*cache)[path] = std::move(*g);
  return raw;
}

// LoadRealGraph, failing the calling test (with the reason) when it cannot.
inline const RealGraph* LoadOrFail(const std::string& path) {
  std::string error;
  const RealGraph* g = LoadRealGraph(path, &error);
  EXPECT_NE(g, nullptr) << error;
  return g;
}

// The step time as every command reports it (depgraph/step_time.h).
inline double PeriodUs(const depgraph::SimResult& r) { return r.mean_step_ns() / 1e3; }

// A prediction as `reverie predict` makes it (whatif::Predict), with the
// baseline and predicted step times.
struct Prediction : whatif::Prediction {
  absl::Status status;
  double base_us = 0, pred_us = 0;
  double speedup() const { return pred_us > 0 ? base_us / pred_us : 0; }
};

inline Prediction Predict(const RealGraph& rg, const std::vector<std::string>& scripts,
                          std::vector<std::pair<std::string, std::string>> sets = {}) {
  Prediction p;
  whatif::ScriptSpec spec;
  spec.scripts = scripts;
  spec.settings = std::move(sets);
  spec.script_dirs = {REVERIE_SOURCE_DIR "/scripts"};
  absl::StatusOr<whatif::Prediction> r = whatif::Predict(rg, spec);
  if (!r.ok()) {
    p.status = r.status();
    return p;
  }
  static_cast<whatif::Prediction&>(p) = *std::move(r);
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
