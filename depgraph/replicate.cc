#include "depgraph/replicate.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"

namespace reverie::depgraph {

std::vector<TaskId> AppendGraph(const Graph& src, const AppendMapping& m, Graph* dst) {
  std::vector<TaskId> map(src.task_count());
  // The source's ops are new op instances in dst (parents come first).
  std::vector<OpId> ops(src.op_count());
  for (uint32_t o = 0; o < src.op_count(); ++o) {
    const CpuOp& op = src.op(OpId(o));
    ops[o] = dst->AddOp(src.op_name(OpId(o)), op.parent.valid() ? ops[op.parent.value()] : OpId(),
                        op.own_ns);
    if (const hardware::OpArgs* in = src.op_inputs(OpId(o))) dst->set_op_inputs(ops[o], *in);
  }
  for (uint32_t r = 0; r < src.resource_count(); ++r) {
    for (TaskId t = src.first_on_resource(ResourceId(r)); t.valid(); t = src.next_on_resource(t)) {
      TaskSpec s{
          .kind = src.kind(t), .name = src.name(t), .resource = m.resource[r],
          .duration_ns = src.duration_ns(t), .gap_ns = src.gap_ns(t),
          .layer = src.layer_of(t).valid() ? m.layer[src.layer_of(t).value()] : LayerId(),
          .phase = src.phase(t), .step = src.step_of(t) < 0 ? -1 : m.step[src.step_of(t)]};
      s.measured_start_ns =
          !src.measured(t) ? kNotMeasured : src.measured_start_ns(t) + m.measured_shift_ns;
      s.bytes = src.bytes(t);
      s.geometry = src.geometry(t);
      s.op = src.op_of(t).valid() ? ops[src.op_of(t).value()] : OpId();
      s.step_mark = src.step_mark(t);
      map[t.value()] = dst->AppendTask(s);
      dst->set_priority(map[t.value()], src.priority(t));
    }
  }
  for (const Edge& e : src.edges()) {
    if (e.removed) continue;
    dst->AddEdge(map[e.src.value()], map[e.dst.value()], e.kind, e.delay_ns);
  }
  return map;
}

Graph ReplicateGraph(const Graph& graph, int copies) {
  Graph out;
  std::vector<ResourceId> resources;
  for (uint32_t r = 0; r < graph.resource_count(); ++r) {
    resources.push_back(out.AddResource(graph.resource(ResourceId(r))));
  }
  std::vector<LayerId> layers;
  for (uint32_t l = 0; l < graph.layer_count(); ++l) {
    const Layer& layer = graph.layer(LayerId(l));
    layers.push_back(out.AddLayer(layer.path, layer.parent));
  }
  // Measured times of copy k are shifted by k spans so measured steps stay apart.
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (uint32_t t = 0; t < graph.task_count(); ++t) {
    const TaskId id(t);
    if (graph.removed(id) || !graph.measured(id)) continue;
    lo = std::min(lo, graph.measured_start_ns(id));
    hi = std::max(hi, graph.measured_start_ns(id) + graph.duration_ns(id));
  }
  const int64_t span = hi > lo ? hi - lo : 0;
  const int32_t iters = static_cast<int32_t>(graph.step_count());
  out.Reserve(graph.live_task_count() * static_cast<size_t>(copies),
              graph.live_edge_count() * static_cast<size_t>(copies));
  std::vector<int32_t> steps(iters);
  for (int k = 0; k < copies; ++k) {
    for (int32_t i = 0; i < iters; ++i) {
      Step it = graph.step_info(i);
      it.name = absl::StrCat(it.name, "/", k);
      it.measured_start_ns += k * span;
      it.measured_end_ns += k * span;
      steps[i] = out.AddStep(std::move(it));
    }
    AppendGraph(graph, {resources, layers, steps, k * span}, &out);
  }
  return out;
}

}  // namespace reverie::depgraph
