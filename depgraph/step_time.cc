// File: depgraph/step_time.cc
//
// StepSpans(): one pass over the tasks gathers, per group and step, the
// marker times, the step's GPU work and its plain task span; the rule of
// step_time.h then runs per group over the steps in order.
#include "depgraph/step_time.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/checked_math.h"

namespace reverie::depgraph {
namespace {

constexpr int64_t kUnsetMin = std::numeric_limits<int64_t>::max();
constexpr int64_t kUnsetMax = std::numeric_limits<int64_t>::min();

struct StepFacts {
  int64_t begin_mark = kUnsetMin;  // earliest begin marker (a_i)
  int64_t end_mark = kUnsetMax;    // latest end marker (b_i)
  int64_t any_first = kUnsetMin;   // first task start: the span without markers
  int64_t any_last = kUnsetMax;
  int64_t gpu_first = kUnsetMin;
  int64_t gpu_last = kUnsetMax;
  int64_t gpu_count = 0;
};

struct GroupFacts {
  std::vector<StepFacts> steps;
  std::vector<int64_t> stepless_gpu_ends;  // GPU work of no step (rule 2)
};

// The baseline's frame for a prediction (step_time.h): d_i per step, and
// the start of each step (the first non-empty one is the anchor), moved
// earlier by `advance`.
struct Frame {
  const std::vector<StepTime>* steps = nullptr;
  int64_t advance = 0;  // Advance() below
  bool active() const { return steps != nullptr && !steps->empty(); }
  // The least start of step i after a step that ended at `prev` (prev
  // itself without a frame).
  int64_t Lead(size_t i, int64_t prev) const {
    if (!active() || i == 0 || i >= steps->size()) return prev;
    const int64_t d = (*steps)[i].start_ns - (*steps)[i - 1].end_ns;
    return SatAddNs(prev, d);
  }
  // The least start of the first step with tasks, step i (no bound without
  // a frame).
  int64_t Anchor(size_t i) const {
    return active() && i < steps->size() ? SatAddNs((*steps)[i].start_ns, -advance)
                                         : std::numeric_limits<int64_t>::min();
  }
};

// Where step s ends before the rule raises it to its start: its end marker
// (else its last task), or its last GPU task when later.
int64_t OwnEnd(const StepFacts& s) {
  const bool marked = s.begin_mark != kUnsetMin && s.end_mark != kUnsetMax;
  const int64_t a = marked ? s.begin_mark : s.any_first;
  const int64_t b = std::max(a, marked ? s.end_mark : s.any_last);
  return s.gpu_count > 0 ? std::max(b, s.gpu_last) : b;
}

// How much earlier than the baseline's the first step may start: the least
// any counted step's own end moved earlier (0 when one moved later). Every
// counted step then ends at least that much earlier than in the baseline or
// is raised to its start, so the counted steps still sum to at most the
// baseline's (step_time.h); and a run that only moved earlier as a whole
// (the CPU before the first step shortened) is read where it now runs,
// instead of cutting its first step off at the baseline's start (read as
// a step of 0 us, its work done before that start).
int64_t Advance(const Graph& g, const GroupFacts& f, const std::vector<StepTime>& base) {
  int64_t least = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < f.steps.size() && i < base.size(); ++i) {
    const StepFacts& s = f.steps[i];
    const bool counted = i < g.step_count() ? g.step_info(static_cast<int32_t>(i)).counted : true;
    if (!counted || s.any_first == kUnsetMin || s.any_last == kUnsetMax) continue;
    least = std::min(least, SatAddNs(base[i].end_ns, -OwnEnd(s)));
  }
  return least == std::numeric_limits<int64_t>::max() ? 0 : std::max<int64_t>(0, least);
}

std::vector<StepTime> ApplyRule(const Graph& g, const GroupFacts& f, Frame frame) {
  if (frame.active()) frame.advance = Advance(g, f, *frame.steps);
  std::vector<StepTime> out(f.steps.size());
  const bool any_gpu = std::any_of(f.steps.begin(), f.steps.end(),
                                   [](const StepFacts& s) { return s.gpu_count > 0; });
  int64_t prev = kUnsetMax;
  for (size_t i = 0; i < f.steps.size(); ++i) {
    const StepFacts& s = f.steps[i];
    StepTime& it = out[i];
    it.step = static_cast<int32_t>(i);
    it.counted = i < g.step_count() ? g.step_info(static_cast<int32_t>(i)).counted : true;
    const bool marked = s.begin_mark != kUnsetMin && s.end_mark != kUnsetMax;
    int64_t a = marked ? s.begin_mark : s.any_first;
    int64_t b = marked ? s.end_mark : s.any_last;
    if (a == kUnsetMin || b == kUnsetMax) {
      // No task of this step in this group (an empty step, a rank without
      // it); in a frame it still keeps the baseline's distance to the next.
      it.start_ns = it.end_ns = prev == kUnsetMax ? 0 : frame.Lead(i, prev);
      if (prev != kUnsetMax) prev = it.end_ns;
      continue;
    }
    b = std::max(a, b);
    if (!any_gpu && !frame.active()) {  // rule 6
      it.start_ns = a;
      it.end_ns = b;
      continue;
    }
    int64_t start;
    if (prev == kUnsetMax) {  // the first step with tasks
      start = a;
      if (s.gpu_count > 0) {  // rule 2
        for (int64_t e : f.stepless_gpu_ends) {
          if (e < s.gpu_first) start = std::max(start, e);
        }
      }
      start = std::max(start, frame.Anchor(i));
    } else {
      // Rule 3 (rule 6's CPU span without GPU work), then the frame's lead.
      start = std::max(any_gpu ? std::max(prev, a) : a, frame.Lead(i, prev));
    }
    it.start_ns = start;
    it.end_ns = std::max(s.gpu_count > 0 ? std::max(b, s.gpu_last) : b, start);
    prev = it.end_ns;
  }
  return out;
}

std::vector<GroupFacts> GatherFacts(const Graph& g, std::span<const int64_t> start,
                                    std::span<const int64_t> end,
                                    std::span<const int32_t> group_of_resource, int groups) {
  const size_t k = std::max<size_t>(g.step_count(), 1);
  std::vector<GroupFacts> facts(groups);
  for (GroupFacts& f : facts) f.steps.resize(k);
  const size_t n = g.task_count();
  for (size_t i = 0; i < n; ++i) {
    const TaskId t(static_cast<uint32_t>(i));
    if (g.removed(t) || end[i] == kNotMeasured) continue;
    const int which =
        group_of_resource.empty() ? 0 : group_of_resource[g.resource_of(t).value()];
    if (which < 0) continue;
    GroupFacts& f = facts[which];
    const int32_t it = g.step_count() == 0 ? 0 : g.step_of(t);
    const bool device = IsDeviceWork(g.kind(t));
    if (it < 0 || static_cast<size_t>(it) >= k) {
      if (device && it < 0) f.stepless_gpu_ends.push_back(end[i]);
      continue;
    }
    StepFacts& s = f.steps[it];
    switch (g.step_mark(t)) {
      case StepMark::kBegin: s.begin_mark = std::min(s.begin_mark, start[i]); break;
      case StepMark::kEnd: s.end_mark = std::max(s.end_mark, start[i]); break;
      case StepMark::kNone: break;
    }
    s.any_first = std::min(s.any_first, start[i]);
    s.any_last = std::max(s.any_last, end[i]);
    if (device) {
      ++s.gpu_count;
      s.gpu_first = std::min(s.gpu_first, start[i]);
      s.gpu_last = std::max(s.gpu_last, end[i]);
    }
  }
  return facts;
}

}  // namespace

std::vector<std::vector<StepTime>> StepSpans(const Graph& g, std::span<const int64_t> start,
                                                  std::span<const int64_t> end,
                                                  std::span<const int32_t> group_of_resource,
                                                  int groups,
                                                  std::span<const std::vector<StepTime>> frames) {
  std::vector<std::vector<StepTime>> out;
  out.reserve(groups);
  const std::vector<GroupFacts> facts = GatherFacts(g, start, end, group_of_resource, groups);
  for (size_t i = 0; i < facts.size(); ++i) {
    out.push_back(ApplyRule(g, facts[i], Frame{i < frames.size() ? &frames[i] : nullptr}));
  }
  return out;
}

std::vector<StepTime> StepSpansInFrame(const Graph& g, std::span<const int64_t> start,
                                            std::span<const int64_t> end,
                                            const std::vector<StepTime>& baseline) {
  const std::vector<GroupFacts> facts = GatherFacts(g, start, end, {}, 1);
  return ApplyRule(g, facts[0], Frame{&baseline});
}

TaskTimes MeasuredTimes(const Graph& g) {
  const size_t n = g.task_count();
  TaskTimes m{std::vector<int64_t>(n, kNotMeasured), std::vector<int64_t>(n, kNotMeasured)};
  for (size_t i = 0; i < n; ++i) {
    const TaskId t(static_cast<uint32_t>(i));
    if (g.removed(t) || !g.measured(t)) continue;
    m.start[i] = g.measured_start_ns(t);
    m.end[i] = m.start[i] + std::max<int64_t>(0, g.duration_ns(t));
  }
  return m;
}

std::vector<StepTime> MeasuredSteps(const Graph& g) {
  const TaskTimes m = MeasuredTimes(g);
  return std::move(StepSpans(g, m.start, m.end, {}, 1)[0]);
}

StepStats SummarizeSteps(const std::vector<StepTime>& steps) {
  StepStats st;
  double sum = 0, sq = 0;
  for (const StepTime& it : steps) {
    if (!it.counted) continue;
    const double d = static_cast<double>(it.duration_ns());
    if (st.counted == 0 || d < st.min_ns) st.min_ns = d;
    if (st.counted == 0 || d > st.max_ns) st.max_ns = d;
    sum += d;
    sq += d * d;
    ++st.counted;
  }
  if (st.counted == 0) return st;
  st.mean_ns = sum / st.counted;
  st.stddev_ns = std::sqrt(std::max(0.0, sq / st.counted - st.mean_ns * st.mean_ns));
  return st;
}

double MeanStepNs(const std::vector<StepTime>& steps) { return SummarizeSteps(steps).mean_ns; }

std::optional<double> FirstStepShare(const std::vector<StepTime>& base,
                                     const std::vector<StepTime>& pred) {
  const size_t n = std::min(base.size(), pred.size());
  double moved = 0, first = 0, base_sum = 0;
  int counted = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!base[i].counted) continue;
    const double d =
        std::fabs(static_cast<double>(pred[i].duration_ns() - base[i].duration_ns()));
    if (counted++ == 0) first = d;
    moved += d;
    base_sum += static_cast<double>(base[i].duration_ns());
  }
  if (counted < 3 || moved == 0 || !(moved >= 1e-3 * base_sum)) return std::nullopt;
  return first / moved;
}

int MarkCountedSteps(Graph* g) {
  const size_t k = g->step_count();
  if (k < 2) return 0;
  std::vector<int64_t> gpu(k, 0);
  for (size_t i = 0; i < g->task_count(); ++i) {
    const TaskId t(static_cast<uint32_t>(i));
    if (g->removed(t) || !IsDeviceWork(g->kind(t))) continue;
    const int32_t it = g->step_of(t);
    if (it >= 0 && static_cast<size_t>(it) < k) ++gpu[it];
  }
  int last = static_cast<int>(k) - 1;
  while (last >= 0 && gpu[last] == 0) --last;
  if (last < 0) return 0;  // no GPU work in any step: every CPU span counts
  int keep = last + 1;
  if (last > 0 && static_cast<double>(gpu[last - 1]) * 0.8 > static_cast<double>(gpu[last])) {
    keep = last;
  }
  for (size_t i = static_cast<size_t>(keep); i < k; ++i) {
    g->set_step_counted(static_cast<int32_t>(i), false);
  }
  return static_cast<int>(k) - keep;
}

}  // namespace reverie::depgraph
