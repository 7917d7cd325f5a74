// File: report/timeline_view.h
//
// The data of the report's interactive timeline (report/timeline_view.js
// draws it): one step of the baseline and of each predicted run, one lane
// per thread / stream / channel, the step's critical path and its launch
// arrows, in a compact JSON document the page embeds.
//
// A view is one run (baseline or a prediction) in one step. Its window is
// the step's span under that run's simulated times (SimResult::steps,
// the one step-time definition of depgraph/step_time.h); it holds every live
// task that overlaps the window, except the zero-length step markers, with
// times relative to the window's start. Steps are numbered as the graph's
// steps (0-based, trace order).
//
// Decimation: a canvas cannot draw 100k rectangles a frame smoothly, and
// most of them would be narrower than a pixel anyway. Each lane carries
// coarser levels in which runs of consecutive tasks narrower than the
// level's resolution, separated by less than it, are merged into one box
// that keeps their count, their busy time (sum of durations) and its
// longest task. The page draws the coarsest level whose resolution is still
// under a pixel, so a frame draws a bounded number of boxes at any zoom.
//
// Invariants:
// - A lane's tasks are sorted by start; every level keeps the lane's total
//   busy time and task count, and its boxes are sorted and disjoint in
//   membership (each task in exactly one box).
// - The critical path entries point at tasks of the view, in path order;
//   path tasks outside the view (step markers) are left out.
#ifndef REVERIE_REPORT_TIMELINE_VIEW_H_
#define REVERIE_REPORT_TIMELINE_VIEW_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/critical_path.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"

namespace reverie::report {

// One decimation level of a lane: boxes sorted by start.
struct TimelineLevel {
  int64_t resolution_ns = 0;      // 0: the raw tasks
  std::vector<int64_t> start_ns;  // relative to the view's window
  std::vector<int64_t> end_ns;
  std::vector<int64_t> busy_ns;  // sum of the member tasks' durations
  std::vector<int32_t> count;    // member tasks
  std::vector<int32_t> longest;  // index (in the lane) of the longest member
  size_t size() const { return start_ns.size(); }
};

struct TimelineLane {
  depgraph::ResourceId resource;
  std::string name;
  depgraph::ResourceKind kind = depgraph::ResourceKind::kCpuThread;
  std::vector<depgraph::TaskId> tasks;  // sorted by start
  std::vector<int64_t> start_ns;        // relative to the window's start
  std::vector<int64_t> duration_ns;
  std::vector<TimelineLevel> levels;  // coarser and coarser; none when merging saves little
};

// A task of a view: its lane and its index in the lane.
struct LaneTask {
  int32_t lane = -1;
  int32_t index = -1;
  friend bool operator==(const LaneTask&, const LaneTask&) = default;
};

struct TimelineLaunch {
  LaneTask call;  // the CPU API call
  LaneTask task;  // the GPU task it launched
};

struct StepView {
  int32_t step = 0;
  int64_t window_start_ns = 0;  // the run's step span (simulated times)
  int64_t window_ns = 0;
  std::vector<TimelineLane> lanes;  // CPU threads, then streams, then channels
  std::vector<LaneTask> critical_path;
  std::vector<TimelineLaunch> launches;  // kLaunch edges with both ends in the view
  size_t task_count() const;
};

// Merges runs of consecutive boxes of `finer` (sorted by start) that are
// narrower than `resolution_ns` and separated by less than it. `durations`
// are the lane's raw task durations (to pick each box's longest task).
TimelineLevel Decimate(const TimelineLevel& finer, std::span<const int64_t> durations,
                       int64_t resolution_ns);

// A run's tasks sorted by simulated start per resource, and its critical
// paths, computed once so that each step's view costs only its own tasks.
// Holds references: the graph and result must outlive it.
class TimelineIndex {
 public:
  TimelineIndex(const depgraph::Graph& graph, const depgraph::SimResult& sim);
  // The view of `step` (an index of sim.steps, which must exist).
  StepView View(int32_t step) const;
  size_t step_count() const { return sim_.steps.size(); }

 private:
  struct Lane {
    std::vector<depgraph::TaskId> tasks;  // live, not step markers, by start
    std::vector<int64_t> max_end;         // running maximum of their ends
  };
  void AddCriticalPath(int32_t step, StepView* view) const;
  void AddLaunches(StepView* view) const;

  const depgraph::Graph& graph_;
  const depgraph::SimResult& sim_;
  std::vector<Lane> by_resource_;
  std::vector<depgraph::ResourceId> lane_order_;  // threads, streams, channels
  std::vector<depgraph::CriticalPath> paths_;
};

// The step the page opens on: the first counted step with a non-empty span,
// else the first step.
int32_t DefaultTimelineStep(const depgraph::SimResult& sim);

struct TimelineViewRun {
  std::string label;  // "baseline (simulated)", "amp.lua"
  const depgraph::Graph* graph = nullptr;
  const depgraph::SimResult* sim = nullptr;
};

struct TimelineViewOptions {
  int32_t step = -1;  // the step the page opens on; -1: DefaultTimelineStep
  // Other steps are embedded (selectable in the page) while the document
  // holds at most this many tasks; the opening step is always embedded.
  // About 30 bytes of page per task: 200k tasks are ~6 MB.
  int64_t task_budget = 200'000;
};

// The JSON document the page reads (runs[0] is the baseline; every run must
// have the same steps). kInvalidArgument for a step that does not exist or a
// run without a graph or simulation. Every '<' is written as \u003c so that
// the document can sit inside a <script> element.
absl::StatusOr<std::string> RenderTimelineViewJson(const std::vector<TimelineViewRun>& runs,
                                                   const TimelineViewOptions& options);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_TIMELINE_VIEW_H_
