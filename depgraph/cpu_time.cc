#include "depgraph/cpu_time.h"

#include <algorithm>
#include <limits>

namespace reverie::depgraph {

CpuTimeReport ComputeCpuTime(const Graph& g, std::span<const int64_t> start,
                             std::span<const int64_t> end) {
  CpuTimeReport r;
  r.by_step.resize(g.step_count());
  for (uint32_t res = 0; res < g.resource_count(); ++res) {
    const ResourceId id(res);
    if (g.resource(id).kind != ResourceKind::kCpuThread) continue;
    ThreadCpuTime th;
    th.thread = id;
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    bool any_op_time = false, any_api = false;
    for (TaskId t = g.first_on_resource(id); t.valid(); t = g.next_on_resource(t)) {
      const uint32_t i = t.value();
      if (end[i] == kNotMeasured) continue;
      const int64_t d = std::max<int64_t>(0, g.duration_ns(t));
      const int64_t gap = std::max<int64_t>(0, g.gap_ns(t));
      lo = std::min(lo, start[i]);
      hi = std::max(hi, end[i] + gap);
      CpuSplit part;
      if (g.kind(t) == TaskKind::kCpuApi) {
        part.api_ns = d;
        any_api = true;
      } else if (g.op_of(t).valid()) {
        part.op_ns = d;
        any_op_time = true;
      } else {
        part.framework_ns = d;
      }
      part.untraced_ns = gap;
      th.busy.api_ns += part.api_ns;
      th.busy.op_ns += part.op_ns;
      th.busy.framework_ns += part.framework_ns;
      th.busy.untraced_ns += part.untraced_ns;
      const int32_t it = g.step_of(t);
      if (it >= 0 && static_cast<size_t>(it) < r.by_step.size()) {
        CpuSplit& s = r.by_step[it];
        s.api_ns += part.api_ns;
        s.op_ns += part.op_ns;
        s.framework_ns += part.framework_ns;
        s.untraced_ns += part.untraced_ns;
      }
    }
    if (lo > hi) continue;  // no live task
    th.span_ns = hi - lo;
    if (any_api && !any_op_time) ++r.threads_without_ops;
    r.by_thread.push_back(th);
  }
  return r;
}

}  // namespace reverie::depgraph
