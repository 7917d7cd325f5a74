#include "transforms/ops.h"

#include <algorithm>

#include "base/median.h"

namespace reverie::transforms {

using depgraph::Graph;
using depgraph::OpId;
using depgraph::TaskId;
using depgraph::TaskKind;

Selection WithOrphanedOpTime(const Graph& g, const Selection& s) {
  const size_t ops = g.op_count();
  if (ops == 0) return s;
  std::vector<uint8_t> in_s(g.task_count(), 0);
  std::vector<OpId> touched;
  for (TaskId t : s) {
    if (t.value() >= g.task_count() || g.removed(t)) continue;
    in_s[t.value()] = 1;
    if (g.kind(t) == TaskKind::kCpuApi && g.op_of(t).valid()) touched.push_back(g.op_of(t));
  }
  if (touched.empty()) return s;
  // Live calls per op, then per subtree (a parent's id is below its children's).
  std::vector<int64_t> calls(ops, 0);
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || in_s[i] || g.kind(t) != TaskKind::kCpuApi || !g.op_of(t).valid()) continue;
    ++calls[g.op_of(t).value()];
  }
  for (size_t o = ops; o-- > 0;) {
    const OpId p = g.op(OpId(static_cast<uint32_t>(o))).parent;
    if (p.valid()) calls[p.value()] += calls[o];
  }
  std::vector<uint8_t> dead(ops, 0);
  for (OpId o : touched) {
    for (OpId x = o; x.valid() && calls[x.value()] == 0 && !dead[x.value()]; x = g.op(x).parent) {
      dead[x.value()] = 1;
    }
  }
  for (size_t o = 0; o < ops; ++o) {
    const OpId p = g.op(OpId(static_cast<uint32_t>(o))).parent;
    if (p.valid() && dead[p.value()]) dead[o] = 1;
  }
  std::vector<TaskId> extra;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || in_s[i] || g.kind(t) != TaskKind::kCpuWork) continue;
    const OpId o = g.op_of(t);
    if (o.valid() && dead[o.value()]) extra.push_back(t);
  }
  if (extra.empty()) return s;
  return s.Union(Selection::FromSorted(std::move(extra)));
}

std::optional<int64_t> MedianOpCost(const Graph& g, std::string_view name, int64_t* read) {
  std::vector<int64_t> v;
  const int64_t n = g.ForEachOpNamed(name, [&](OpId o) { v.push_back(g.op(o).own_ns); });
  if (read != nullptr) *read += n;
  // A name whose ops never issued a call has no graph op: the trace's own
  // median of such ops stands (a CPU-side cast in an fp32 run).
  if (v.empty()) return g.op_cost_without_calls(name);
  return UpperMedianInPlace(v);
}

absl::StatusOr<TaskId> AddOpTime(Graph& g, TaskId call, std::string_view op_name,
                                 int64_t cost_ns) {
  if (!call.valid() || call.value() >= g.task_count() || g.removed(call) ||
      !depgraph::IsCpuKind(g.kind(call))) {
    return absl::InvalidArgumentError("an op's CPU time goes before a live CPU task");
  }
  if (cost_ns < 0) return absl::InvalidArgumentError("an op's CPU cost must be >= 0");
  const OpId op = g.AddOp(op_name, OpId(), cost_ns);
  depgraph::TaskSpec s{
      .kind = TaskKind::kCpuWork, .name = op_name, .duration_ns = cost_ns,
      .layer = g.layer_of(call), .phase = g.phase(call), .step = g.step_of(call), .op = op};
  const TaskId t = g.InsertTaskBefore(call, s);
  g.set_op(call, op);
  return t;
}

}  // namespace reverie::transforms
