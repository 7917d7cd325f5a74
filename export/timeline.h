// File: export/timeline.h
//
// Timeline export: writes one or more runs of a graph (the measured run, the
// simulated baseline, a predicted run) as Chrome-trace JSON that Perfetto and
// chrome://tracing open, laid out as a PyTorch-profiler (Kineto) trace so
// that `reverie info` / LoadTraceFile re-import it:
// - run k is process pid k+1, named by a process_name metadata event;
// - CPU API calls are `cuda_runtime` events, kernels `kernel`, copies
//   `gpu_memcpy`, sets `gpu_memset`, other CPU work `cpu_op`, modelled
//   communication `comm` (not a Kineto category: importers skip it);
//   GPU events carry args correlation / stream / device;
// - each launch edge is an `ac2g` flow (ph s at the call, ph f with bp e at
//   the GPU task), id = the correlation id (unique in the file);
// - layer ranges are `python_function` "nn.Module: <last path step>"
//   (forward; nested like the layers, which is how the Kineto importer
//   rebuilds dotted paths) or `user_annotation` "<path> [backward]" etc., on
//   the thread that ran them, with args "Module Hierarchy" = the full path,
//   and steps `user_annotation` "ProfilerStep#N".
// Each run's times are shifted so that it starts at 0 us: runs line up for
// visual comparison.
//
// Invariants: a task without a time (removed, or inserted and shown as
// measured) is skipped and counted in TimelineStats, never written with a
// made-up time.
#ifndef REVERIE_EXPORT_TIMELINE_H_
#define REVERIE_EXPORT_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"

namespace reverie::exporter {

struct TimelineRun {
  std::string label;  // "measured", "baseline (simulated)"
  const depgraph::Graph* graph = nullptr;
  const depgraph::SimResult* sim = nullptr;  // nullptr: measured_start_ns times
  // The steps to record and draw when they are not sim->steps: a job's are
  // its slowest rank's, each rank read in its baseline's frame
  // (whatif::SlowestRankSteps); nullptr: sim->steps.
  const std::vector<depgraph::StepTime>* steps = nullptr;
};

struct TimelineStats {
  int64_t events = 0;  // every JSON event, metadata included
  int64_t tasks = 0;   // task slices written
  int64_t flows = 0;   // launch arrows (pairs)
  int64_t layer_ranges = 0;
  int64_t step_ranges = 0;
  int64_t skipped_untimed = 0;  // live tasks with no time in their run
};

// Renders the whole document to a string.
std::string RenderTimeline(const std::vector<TimelineRun>& runs, TimelineStats* stats = nullptr);

// Writes the timeline to `path` (overwriting it). kInvalidArgument for a run
// without a graph or a SimResult of the wrong size; kPermissionDenied /
// kNotFound style errors name the path when it cannot be written.
absl::Status WriteTimeline(const std::string& path, const std::vector<TimelineRun>& runs,
                           TimelineStats* stats = nullptr);

// Checks the runs without writing (what WriteTimeline validates first).
absl::Status ValidateRuns(const std::vector<TimelineRun>& runs);

// One call for a command: when `path` is non-empty writes measured (from
// `graph`'s measured times), baseline (`baseline` simulated on `graph`) and,
// when given, the predicted run (`predicted_sim` of `predicted`), then prints
// "timeline: PATH (N events)" to stderr. OK and nothing written when `path`
// is empty.
absl::Status MaybeWriteTimeline(const std::string& path, const depgraph::Graph& graph,
                                const depgraph::SimResult& baseline,
                                const depgraph::Graph* predicted = nullptr,
                                const depgraph::SimResult* predicted_sim = nullptr);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_TIMELINE_H_
