#include "depgraph/replicate.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"

namespace reverie::depgraph {

Graph ReplicateGraph(const Graph& graph, int copies) {
  Graph out;
  for (uint32_t r = 0; r < graph.resource_count(); ++r) out.AddResource(graph.resource(ResourceId(r)));
  for (uint32_t l = 0; l < graph.layer_count(); ++l) {
    const Layer& layer = graph.layer(LayerId(l));
    out.AddLayer(layer.path, layer.parent);
  }
  // Measured times of copy k are shifted by k spans so measured iterations stay apart.
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (uint32_t t = 0; t < graph.task_count(); ++t) {
    const TaskId id(t);
    if (graph.removed(id) || graph.measured_start_ns(id) < 0) continue;
    lo = std::min(lo, graph.measured_start_ns(id));
    hi = std::max(hi, graph.measured_start_ns(id) + graph.duration_ns(id));
  }
  const int64_t span = hi > lo ? hi - lo : 0;
  const int32_t iters = static_cast<int32_t>(graph.iteration_count());
  std::vector<TaskId> map(graph.task_count());
  out.Reserve(graph.live_task_count() * static_cast<size_t>(copies),
              graph.live_edge_count() * static_cast<size_t>(copies));
  for (int k = 0; k < copies; ++k) {
    for (int32_t i = 0; i < iters; ++i) {
      Iteration it = graph.iteration_info(i);
      it.name = absl::StrCat(it.name, "/", k);
      it.measured_start_ns += k * span;
      it.measured_end_ns += k * span;
      out.AddIteration(std::move(it));
    }
    for (uint32_t r = 0; r < graph.resource_count(); ++r) {
      for (TaskId t = graph.first_on_resource(ResourceId(r)); t.valid(); t = graph.next_on_resource(t)) {
        TaskSpec s;
        s.kind = graph.kind(t);
        s.name = graph.name(t);
        s.resource = ResourceId(r);
        s.duration_ns = graph.duration_ns(t);
        s.gap_ns = graph.gap_ns(t);
        s.layer = graph.layer_of(t);
        s.phase = graph.phase(t);
        s.iteration = graph.iteration_of(t) < 0 ? -1 : graph.iteration_of(t) + k * iters;
        s.measured_start_ns = graph.measured_start_ns(t) < 0 ? -1 : graph.measured_start_ns(t) + k * span;
        s.bytes = graph.bytes(t);
        s.geometry = graph.geometry(t);
        map[t.value()] = out.AppendTask(s);
        out.set_priority(map[t.value()], graph.priority(t));
      }
    }
    for (const Edge& e : graph.edges()) {
      if (e.removed) continue;
      out.AddEdge(map[e.src.value()], map[e.dst.value()], e.kind, e.delay_ns);
    }
  }
  return out;
}

}  // namespace reverie::depgraph
