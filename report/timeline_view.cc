// File: report/timeline_view.cc
//
// Step views of the report's timeline: the tasks of a step window per lane,
// their decimation levels, the critical path and the launch arrows. The
// JSON document is written by timeline_view_json.cc.
#include "report/timeline_view.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"

namespace reverie::report {
namespace {

using depgraph::Graph;
using depgraph::ResourceId;
using depgraph::TaskId;

// Finest level: 1/32768 of the window, then 4x coarser down to 1/512. The
// page's plot is 500 to 4000 px wide, so at the whole-step zoom it draws a
// level of 1/2048 or 1/512 (a few thousand boxes per lane at most) and it
// reaches the raw tasks only when zoomed in 30x or more.
constexpr int64_t kFinestDivisor = 32768;
constexpr int64_t kCoarsestDivisor = 512;
// A level is kept only when it has at most this share of the boxes of the
// finer level kept before it: a level that merges little saves no drawing.
constexpr double kKeepRatio = 0.5;

TimelineLevel RawLevel(const TimelineLane& lane) {
  TimelineLevel raw;
  const size_t n = lane.start_ns.size();
  raw.start_ns = lane.start_ns;
  raw.end_ns.resize(n);
  for (size_t i = 0; i < n; ++i) raw.end_ns[i] = lane.start_ns[i] + lane.duration_ns[i];
  raw.busy_ns = lane.duration_ns;
  raw.count.assign(n, 1);
  raw.longest.resize(n);
  std::iota(raw.longest.begin(), raw.longest.end(), 0);
  return raw;
}

void AddLevels(int64_t window_ns, TimelineLane* lane) {
  if (lane->tasks.size() < 2) return;
  TimelineLevel finer = RawLevel(*lane);
  size_t kept_size = finer.size();
  for (int64_t div = kFinestDivisor; div >= kCoarsestDivisor; div /= 4) {
    const int64_t resolution = std::max<int64_t>(1, window_ns / div);
    TimelineLevel level = Decimate(finer, lane->duration_ns, resolution);
    if (static_cast<double>(level.size()) <= kKeepRatio * static_cast<double>(kept_size)) {
      kept_size = level.size();
      lane->levels.push_back(level);
    }
    finer = std::move(level);
  }
}

}  // namespace

size_t StepView::task_count() const {
  size_t n = 0;
  for (const TimelineLane& l : lanes) n += l.tasks.size();
  return n;
}

TimelineLevel Decimate(const TimelineLevel& finer, std::span<const int64_t> durations,
                       int64_t resolution_ns) {
  TimelineLevel out;
  out.resolution_ns = resolution_ns;
  for (size_t i = 0; i < finer.size(); ++i) {
    const int64_t s = finer.start_ns[i], e = finer.end_ns[i];
    if (!out.start_ns.empty()) {
      int64_t& box_end = out.end_ns.back();
      const int64_t box_start = out.start_ns.back();
      // Both narrower than a pixel, less than a pixel apart: one box.
      if (s - box_end < resolution_ns && box_end - box_start < resolution_ns &&
          e - s < resolution_ns) {
        box_end = std::max(box_end, e);
        out.busy_ns.back() += finer.busy_ns[i];
        out.count.back() += finer.count[i];
        int32_t& longest = out.longest.back();
        if (durations[finer.longest[i]] > durations[longest]) longest = finer.longest[i];
        continue;
      }
    }
    out.start_ns.push_back(s);
    out.end_ns.push_back(e);
    out.busy_ns.push_back(finer.busy_ns[i]);
    out.count.push_back(finer.count[i]);
    out.longest.push_back(finer.longest[i]);
  }
  return out;
}

int32_t DefaultTimelineStep(const depgraph::SimResult& sim) {
  for (const depgraph::StepTime& it : sim.steps) {
    if (it.counted && it.duration_ns() > 0) return it.step;
  }
  return 0;
}

TimelineIndex::TimelineIndex(const Graph& graph, const depgraph::SimResult& sim)
    : graph_(graph), sim_(sim), by_resource_(graph.resource_count()) {
  for (uint32_t i = 0; i < graph.task_count(); ++i) {
    const TaskId t(i);
    if (graph.removed(t) || graph.is_step_mark(t) || sim.start_ns[i] < 0) continue;
    by_resource_[graph.resource_of(t).value()].tasks.push_back(t);
  }
  for (Lane& lane : by_resource_) {
    std::stable_sort(lane.tasks.begin(), lane.tasks.end(), [&sim](TaskId a, TaskId b) {
      return sim.start_ns[a.value()] < sim.start_ns[b.value()];
    });
    int64_t m = INT64_MIN;
    lane.max_end.reserve(lane.tasks.size());
    for (TaskId t : lane.tasks) lane.max_end.push_back(m = std::max(m, sim.end_ns[t.value()]));
  }
  for (uint32_t r = 0; r < graph.resource_count(); ++r) lane_order_.push_back(ResourceId(r));
  std::stable_sort(lane_order_.begin(), lane_order_.end(), [&graph](ResourceId a, ResourceId b) {
    return graph.resource(a).kind < graph.resource(b).kind;
  });
  paths_ = depgraph::CriticalPaths(graph, sim);
}

StepView TimelineIndex::View(int32_t step) const {
  StepView v;
  v.step = step;
  const depgraph::StepTime& span = sim_.steps[step];
  v.window_start_ns = span.start_ns;
  v.window_ns = span.duration_ns();
  const int64_t lo = span.start_ns, hi = span.end_ns;
  for (ResourceId r : lane_order_) {
    const Lane& src = by_resource_[r.value()];
    // Tasks before `first` all end before the window; from `last` on they
    // start after it.
    const size_t first = static_cast<size_t>(
        std::lower_bound(src.max_end.begin(), src.max_end.end(), lo) - src.max_end.begin());
    TimelineLane lane;
    for (size_t i = first; i < src.tasks.size(); ++i) {
      const TaskId t = src.tasks[i];
      const int64_t s = sim_.start_ns[t.value()], e = sim_.end_ns[t.value()];
      if (s >= hi) break;
      // A task overlaps the window; a zero-length one lies in [lo, hi).
      if (!(e > lo || (e == s && s >= lo))) continue;
      lane.tasks.push_back(t);
      lane.start_ns.push_back(s - lo);
      lane.duration_ns.push_back(e - s);
    }
    if (lane.tasks.empty()) continue;
    const depgraph::Resource& res = graph_.resource(r);
    lane.resource = r;
    lane.kind = res.kind;
    lane.name = res.name.empty() ? std::string(depgraph::ResourceKindName(res.kind)) : res.name;
    AddLevels(v.window_ns, &lane);
    v.lanes.push_back(std::move(lane));
  }
  AddCriticalPath(step, &v);
  AddLaunches(&v);
  return v;
}

void TimelineIndex::AddCriticalPath(int32_t step, StepView* v) const {
  const depgraph::CriticalPath* path = nullptr;
  for (const depgraph::CriticalPath& p : paths_) {
    if (p.step == step) path = &p;
  }
  if (path == nullptr || path->tasks.empty()) return;
  absl::flat_hash_map<uint32_t, LaneTask> where;
  for (const TaskId t : path->tasks) where[t.value()] = LaneTask{};
  for (size_t l = 0; l < v->lanes.size(); ++l) {
    const std::vector<TaskId>& tasks = v->lanes[l].tasks;
    for (size_t i = 0; i < tasks.size(); ++i) {
      auto it = where.find(tasks[i].value());
      if (it != where.end()) it->second = {static_cast<int32_t>(l), static_cast<int32_t>(i)};
    }
  }
  for (const TaskId t : path->tasks) {
    const LaneTask& lt = where.at(t.value());
    if (lt.lane >= 0) v->critical_path.push_back(lt);
  }
}

void TimelineIndex::AddLaunches(StepView* v) const {
  absl::flat_hash_map<uint32_t, LaneTask> gpu;
  for (size_t l = 0; l < v->lanes.size(); ++l) {
    const TimelineLane& lane = v->lanes[l];
    if (lane.kind != depgraph::ResourceKind::kGpuStream) continue;
    for (size_t i = 0; i < lane.tasks.size(); ++i) {
      gpu[lane.tasks[i].value()] = {static_cast<int32_t>(l), static_cast<int32_t>(i)};
    }
  }
  if (gpu.empty()) return;
  const depgraph::Adjacency& adj = graph_.adjacency();
  for (size_t l = 0; l < v->lanes.size(); ++l) {
    const TimelineLane& lane = v->lanes[l];
    if (lane.kind != depgraph::ResourceKind::kCpuThread) continue;
    for (size_t i = 0; i < lane.tasks.size(); ++i) {
      if (graph_.kind(lane.tasks[i]) != depgraph::TaskKind::kCpuApi) continue;
      for (const depgraph::EdgeId id : adj.out(lane.tasks[i])) {
        const depgraph::Edge& e = graph_.edge(id);
        if (e.kind != depgraph::EdgeKind::kLaunch) continue;
        auto it = gpu.find(e.dst.value());
        if (it == gpu.end()) continue;
        v->launches.push_back({{static_cast<int32_t>(l), static_cast<int32_t>(i)}, it->second});
      }
    }
  }
}

}  // namespace reverie::report
