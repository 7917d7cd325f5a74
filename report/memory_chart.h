// File: report/memory_chart.h
//
// The report's memory section: the allocated level of one GPU over the
// simulated run, for the baseline and each prediction (the trace's
// allocations replayed in simulated order, depgraph/memory_replay.h), as a
// line chart with each run's peak. Empty when the trace recorded no GPU
// memory (profile_memory=True).
#ifndef REVERIE_REPORT_MEMORY_CHART_H_
#define REVERIE_REPORT_MEMORY_CHART_H_

#include <string>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/simulator.h"

namespace reverie::report {

struct MemoryRun {
  std::string name;  // "baseline (simulated)", "batch_size.lua"
  const depgraph::Graph* graph = nullptr;
  const depgraph::SimResult* sim = nullptr;
};

struct MemorySection {
  std::string svg;                  // the chart, inline; empty: no section
  std::vector<std::string> peaks;   // "baseline (simulated): peak 27.05 MiB on GPU 0"
  bool absolute = true;             // levels include what was allocated before the trace
};

// The first run is the baseline; the GPU charted is the baseline's with the
// largest peak. At most `points` samples per run (a step function sampled
// at the run's own times).
MemorySection RenderMemorySection(const std::vector<MemoryRun>& runs, int points = 400);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_MEMORY_CHART_H_
