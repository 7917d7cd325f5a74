#include "depgraph/critical_path.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/sv.h"
#include "depgraph/kernel_class.h"

namespace reverie::depgraph {
namespace {

int64_t NonNegative(int64_t v) { return v < 0 ? 0 : v; }

// Accumulates named times and turns them into sorted shares of a length.
// Names are views of strings that outlive it (graph names, static labels).
class Shares {
 public:
  void Add(std::string_view name, int64_t ns) {
    if (ns == 0) return;
    auto [it, fresh] = index_.try_emplace(name, items_.size());
    if (fresh) items_.push_back({name, 0});
    items_[it->second].second += ns;
  }
  std::vector<PathShare> Take(int64_t length) const {
    std::vector<PathShare> out;
    out.reserve(items_.size());
    for (const auto& [name, ns] : items_) {
      out.push_back({std::string(name), ns,
                     length > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(length) : 0});
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const PathShare& a, const PathShare& b) { return a.ns > b.ns; });
    return out;
  }

 private:
  absl::flat_hash_map<std::string_view, size_t> index_;
  std::vector<std::pair<std::string_view, int64_t>> items_;
};

// "<edge kind> latency" for every edge kind, built once.
std::string_view LatencyName(EdgeKind k) {
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>();
    for (int i = 0; i < kEdgeKindCount; ++i) {
      v->push_back(absl::StrCat(Sv(EdgeKindName(static_cast<EdgeKind>(i))), " latency"));
    }
    return v;
  }();
  return (*names)[static_cast<int>(k)];
}

}  // namespace

std::string_view BoundName(Bound b) {
  switch (b) {
    case Bound::kCpu: return "cpu";
    case Bound::kGpu: return "gpu";
    case Bound::kCommunication: return "communication";
    case Bound::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string_view ClassLabel(const Graph& graph, TaskId t) {
  if (IsCpuKind(graph.kind(t))) return "cpu";
  return KernelClassName(TaskClass(graph, t));
}

TaskId BindingPredecessor(const Graph& graph, const SimResult& sim, TaskId t, EdgeId* via) {
  if (via != nullptr) *via = EdgeId::Invalid();
  const int64_t start = sim.start_ns[t.value()];
  TaskId best;
  EdgeId best_edge;
  int64_t best_at = INT64_MIN;
  const Adjacency& adj = graph.adjacency();
  for (const auto edge : adj.in(t)) {
    const Edge& e = graph.edge(edge);
    if (graph.removed(e.src)) continue;
    const int64_t at = sim.end_ns[e.src.value()] + e.delay_ns;
    if (at > best_at) {
      best_at = at;
      best = e.src;
      best_edge = edge;
    }
  }
  const ResourceId r = graph.resource_of(t);
  if (graph.resource(r).ordered) {
    const TaskId p = graph.prev_on_resource(t);
    if (p.valid()) {
      const int64_t at = sim.end_ns[p.value()] + NonNegative(graph.gap_ns(p));
      if (at > best_at) {  // ties go to the edge: the cross-resource cause
        best_at = at;
        best = p;
        best_edge = EdgeId::Invalid();
      }
    }
  } else {
    // The channel task that held the channel until t could start.
    for (TaskId u = graph.first_on_resource(r); u.valid(); u = graph.next_on_resource(u)) {
      if (u == t || sim.end_ns[u.value()] > start) continue;
      const int64_t at = sim.end_ns[u.value()] + NonNegative(graph.gap_ns(u));
      if (at == start && at >= best_at) {
        best_at = at;
        best = u;
        best_edge = EdgeId::Invalid();
      }
    }
  }
  if (!best.valid() || best_at < start) return TaskId::Invalid();
  if (via != nullptr) *via = best_edge;
  return best;
}

std::vector<CriticalPath> CriticalPaths(const Graph& graph, const SimResult& sim) {
  const size_t k = sim.steps.size();
  std::vector<CriticalPath> out(k);
  // Last-ending task of every step.
  std::vector<TaskId> last(k);
  for (uint32_t t = 0; t < graph.task_count(); ++t) {
    const TaskId id(t);
    if (graph.removed(id)) continue;
    const int32_t it = graph.step_count() == 0 ? 0 : graph.step_of(id);
    if (it < 0 || static_cast<size_t>(it) >= k) continue;
    if (!last[it].valid() || sim.end_ns[t] > sim.end_ns[last[it].value()]) last[it] = id;
  }
  for (size_t i = 0; i < k; ++i) {
    CriticalPath& p = out[i];
    const StepTime& span = sim.steps[i];
    p.step = span.step;
    p.name = i < graph.step_count() ? graph.step_info(static_cast<int32_t>(i)).name
                                         : "whole trace";
    p.length_ns = span.duration_ns();
    if (!last[i].valid()) continue;
    // Walk back, then attribute in time order.
    std::vector<EdgeId> links;  // links[j]: how tasks[j] was bound to tasks[j - 1]
    for (TaskId t = last[i]; t.valid();) {
      p.tasks.push_back(t);
      if (sim.start_ns[t.value()] <= span.start_ns) break;
      EdgeId via;
      t = BindingPredecessor(graph, sim, t, &via);
      links.push_back(via);
    }
    std::reverse(p.tasks.begin(), p.tasks.end());
    std::reverse(links.begin(), links.end());
    if (links.size() == p.tasks.size()) links.erase(links.begin());  // walk ended without a root
    Shares kind, phase, layer, cls;
    for (size_t j = 0; j < p.tasks.size(); ++j) {
      const TaskId t = p.tasks[j];
      const int64_t s = std::max(sim.start_ns[t.value()], span.start_ns);
      const int64_t e = sim.end_ns[t.value()];
      // Time this task held the path: until the next path task started.
      const int64_t until = j + 1 < p.tasks.size() ? std::min(e, sim.start_ns[p.tasks[j + 1].value()]) : e;
      const int64_t busy = std::max<int64_t>(0, until - s);
      const std::string_view c = ClassLabel(graph, t);
      const ResourceKind rk = graph.resource(graph.resource_of(t)).kind;
      kind.Add(ResourceKindName(rk), busy);
      phase.Add(PhaseName(graph.phase(t)), busy);
      const LayerId l = graph.layer_of(t);
      layer.Add(l.valid() ? std::string_view(graph.layer(l).path) : "(none)", busy);
      cls.Add(c, busy);
      if (c == "communication") {
        p.comm_ns += busy;
      } else if (IsCpuKind(graph.kind(t))) {
        p.cpu_ns += busy;
      } else {
        p.gpu_ns += busy;
      }
      if (j + 1 == p.tasks.size()) break;
      const TaskId next = p.tasks[j + 1];
      const int64_t link = std::max<int64_t>(0, sim.start_ns[next.value()] - std::max(until, s));
      const EdgeId via = links[j];
      std::string_view link_name;
      if (via.valid() ? graph.edge(via).pinned : graph.pinned_gap(t)) p.unexplained_ns += link;
      if (via.valid()) {
        link_name = LatencyName(graph.edge(via).kind);
        p.latency_ns += link;
      } else if (IsCpuKind(graph.kind(t))) {
        link_name = "cpu gap";
        p.cpu_ns += link;
      } else {
        link_name = rk == ResourceKind::kCommChannel ? "channel gap" : "gpu gap";
        (rk == ResourceKind::kCommChannel ? p.comm_ns : p.gpu_ns) += link;
      }
      kind.Add(link_name, link);
      cls.Add(link_name, link);
      phase.Add(PhaseName(graph.phase(next)), link);
      const LayerId nl = graph.layer_of(next);
      layer.Add(nl.valid() ? std::string_view(graph.layer(nl).path) : "(none)", link);
    }
    if (p.cpu_ns + p.gpu_ns + p.comm_ns > 0) {
      p.verdict = p.cpu_ns >= p.gpu_ns && p.cpu_ns >= p.comm_ns ? Bound::kCpu
                  : p.gpu_ns >= p.comm_ns                       ? Bound::kGpu
                                                                : Bound::kCommunication;
    }
    p.by_resource_kind = kind.Take(p.length_ns);
    p.by_phase = phase.Take(p.length_ns);
    p.by_layer = layer.Take(p.length_ns);
    p.by_kernel_class = cls.Take(p.length_ns);
  }
  return out;
}

double UnexplainedShare(const Graph& graph, const SimResult& sim) {
  int64_t unexplained = 0, length = 0;
  for (const CriticalPath& p : CriticalPaths(graph, sim)) {
    const bool counted = p.step < 0 || static_cast<size_t>(p.step) >= sim.steps.size() ||
                         sim.steps[p.step].counted;
    if (!counted) continue;
    unexplained += p.unexplained_ns;
    length += p.length_ns;
  }
  return length > 0 ? static_cast<double>(unexplained) / static_cast<double>(length) : 0.0;
}

}  // namespace reverie::depgraph
