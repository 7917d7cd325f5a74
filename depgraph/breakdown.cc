#include "depgraph/breakdown.h"

#include <algorithm>
#include <utility>

#include "base/intervals.h"

namespace reverie::depgraph {
namespace {

// Union of intervals as sorted disjoint intervals with prefix lengths, so the
// busy time inside any window costs two binary searches.
class Union {
 public:
  explicit Union(std::vector<Interval> v) : merged_(MergeIntervals(std::move(v))) {
    prefix_.resize(merged_.size() + 1, 0);
    for (size_t i = 0; i < merged_.size(); ++i) {
      prefix_[i + 1] = prefix_[i] + merged_[i].second - merged_[i].first;
    }
  }
  const std::vector<Interval>& intervals() const { return merged_; }

  // Busy time within [lo, hi].
  int64_t Within(int64_t lo, int64_t hi) const {
    if (hi <= lo) return 0;
    return Before(hi) - Before(lo);
  }

 private:
  // Busy time before t.
  int64_t Before(int64_t t) const {
    // First interval starting at or after t.
    auto it = std::lower_bound(merged_.begin(), merged_.end(), Interval(t, INT64_MIN));
    size_t i = static_cast<size_t>(it - merged_.begin());
    int64_t b = prefix_[i];
    if (i > 0 && merged_[i - 1].second > t) b -= merged_[i - 1].second - t;
    return b;
  }

  std::vector<Interval> merged_;
  std::vector<int64_t> prefix_;
};

std::vector<Interval> Intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].first, b[j].first);
    const int64_t hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.emplace_back(lo, hi);
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

bool CountsAsGpu(TaskKind k) { return IsGpuKind(k) || k == TaskKind::kComm; }

}  // namespace

std::vector<TimeSplit> SplitTime(const Graph& graph, const std::vector<int64_t>& start_ns,
                                 const std::vector<int64_t>& end_ns,
                                 const std::vector<StepTime>& spans) {
  std::vector<Interval> cpu, gpu;
  for (uint32_t t = 0; t < graph.task_count(); ++t) {
    const TaskId id(t);
    if (graph.removed(id) || end_ns[t] == kNotMeasured || start_ns[t] == kNotMeasured) continue;
    if (CountsAsGpu(graph.kind(id))) {
      gpu.emplace_back(start_ns[t], end_ns[t]);
    } else {
      cpu.emplace_back(start_ns[t], end_ns[t] + std::max<int64_t>(0, graph.gap_ns(id)));
    }
  }
  const Union c(std::move(cpu));
  const Union g(std::move(gpu));
  const Union both(Intersect(c.intervals(), g.intervals()));
  std::vector<TimeSplit> out;
  out.reserve(spans.size());
  for (const StepTime& s : spans) {
    const int64_t cb = c.Within(s.start_ns, s.end_ns);
    const int64_t gb = g.Within(s.start_ns, s.end_ns);
    const int64_t bb = both.Within(s.start_ns, s.end_ns);
    TimeSplit x;
    x.overlap_ns = bb;
    x.cpu_only_ns = cb - bb;
    x.gpu_only_ns = gb - bb;
    x.idle_ns = s.duration_ns() - cb - gb + bb;
    out.push_back(x);
  }
  return out;
}

GraphBreakdown ComputeBreakdown(const Graph& graph, const SimResult& sim) {
  GraphBreakdown b;
  const size_t n = graph.task_count();
  const TaskTimes m = MeasuredTimes(graph);
  const std::vector<StepTime> mspans = MeasuredSteps(graph);
  const std::vector<TimeSplit> measured = SplitTime(graph, m.start, m.end, mspans);
  const std::vector<TimeSplit> simulated = SplitTime(graph, sim.start_ns, sim.end_ns, sim.steps);
  for (size_t i = 0; i < sim.steps.size(); ++i) {
    StepBreakdown it;
    it.step = sim.steps[i].step;
    it.counted = sim.steps[i].counted;
    it.name = i < graph.step_count() ? graph.step_info(static_cast<int32_t>(i)).name
                                          : "whole trace";
    if (i < measured.size()) it.measured = measured[i];
    it.simulated = simulated[i];
    b.steps.push_back(std::move(it));
  }
  std::vector<GroupTime> phases(kPhaseCount);
  std::vector<GroupTime> layers(graph.layer_count() + 1);
  for (int p = 0; p < kPhaseCount; ++p) phases[p].name = PhaseName(static_cast<Phase>(p));
  for (uint32_t l = 0; l < graph.layer_count(); ++l) layers[l].name = graph.layer(LayerId(l)).path;
  layers.back().name = "(none)";
  for (uint32_t t = 0; t < n; ++t) {
    const TaskId id(t);
    if (graph.removed(id)) continue;
    const bool gpu = CountsAsGpu(graph.kind(id));
    const int64_t d = std::max<int64_t>(0, graph.duration_ns(id)) +
                      (gpu ? 0 : std::max<int64_t>(0, graph.gap_ns(id)));
    GroupTime& ph = phases[static_cast<int>(graph.phase(id))];
    const LayerId l = graph.layer_of(id);
    GroupTime& ly = layers[l.valid() ? l.value() : graph.layer_count()];
    (gpu ? ph.gpu_ns : ph.cpu_ns) += d;
    (gpu ? ly.gpu_ns : ly.cpu_ns) += d;
  }
  for (GroupTime& p : phases) {
    if (p.cpu_ns + p.gpu_ns > 0) b.by_phase.push_back(std::move(p));
  }
  for (GroupTime& l : layers) {
    if (l.cpu_ns + l.gpu_ns > 0) b.by_layer.push_back(std::move(l));
  }
  std::stable_sort(b.by_layer.begin(), b.by_layer.end(), [](const GroupTime& x, const GroupTime& y) {
    return x.gpu_ns != y.gpu_ns ? x.gpu_ns > y.gpu_ns : x.cpu_ns > y.cpu_ns;
  });
  return b;
}

}  // namespace reverie::depgraph
