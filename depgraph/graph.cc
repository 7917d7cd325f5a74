#include "depgraph/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/sv.h"

namespace reverie::depgraph {

std::string_view TaskKindName(TaskKind k) {
  switch (k) {
    case TaskKind::kCpuApi: return "cpu_api";
    case TaskKind::kCpuWork: return "cpu_work";
    case TaskKind::kKernel: return "kernel";
    case TaskKind::kMemcpy: return "memcpy";
    case TaskKind::kMemset: return "memset";
    case TaskKind::kComm: return "comm";
  }
  return "?";
}

std::string_view ResourceKindName(ResourceKind k) {
  switch (k) {
    case ResourceKind::kCpuThread: return "thread";
    case ResourceKind::kGpuStream: return "stream";
    case ResourceKind::kCommChannel: return "channel";
  }
  return "?";
}

std::string_view EdgeKindName(EdgeKind k) {
  switch (k) {
    case EdgeKind::kLaunch: return "launch";
    case EdgeKind::kSync: return "sync";
    case EdgeKind::kEvent: return "event";
    case EdgeKind::kInterThread: return "inter_thread";
    case EdgeKind::kComm: return "comm";
    case EdgeKind::kUser: return "user";
  }
  return "?";
}

std::string_view PhaseName(Phase p) {
  switch (p) {
    case Phase::kUnknown: return "unknown";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kUpdate: return "update";
    case Phase::kDataLoading: return "data_loading";
    case Phase::kOther: return "other";
  }
  return "?";
}

Graph::Graph() {
  InternName("");
  InternGeometry(KernelGeometry{});
}
Graph::Graph(const Graph& o)
    : names_(o.names_),
      name_index_(o.name_index_),
      resources_(o.resources_),
      res_first_(o.res_first_),
      res_last_(o.res_last_),
      layers_(o.layers_),
      layer_index_(o.layer_index_),
      iterations_(o.iterations_),
      geometries_(o.geometries_),
      geometry_index_(o.geometry_index_),
      kind_(o.kind_),
      phase_(o.phase_),
      flags_(o.flags_),
      name_(o.name_),
      resource_(o.resource_),
      layer_(o.layer_),
      iteration_(o.iteration_),
      priority_(o.priority_),
      duration_(o.duration_),
      gap_(o.gap_),
      measured_start_(o.measured_start_),
      bytes_(o.bytes_),
      geometry_(o.geometry_),
      prev_(o.prev_),
      next_(o.next_),
      live_tasks_(o.live_tasks_),
      edges_(o.edges_),
      live_edges_(o.live_edges_) {}
Graph& Graph::operator=(const Graph& o) {
  if (this != &o) {
    Graph copy(o);
    *this = std::move(copy);
  }
  return *this;
}
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::~Graph() = default;

uint32_t Graph::InternName(std::string_view s) {
  auto it = name_index_.find(absl::string_view(s.data(), s.size()));
  if (it != name_index_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(s);
  name_index_.emplace(std::string(s), id);
  return id;
}

uint32_t Graph::InternGeometry(const KernelGeometry& g) {
  auto [it, inserted] = geometry_index_.try_emplace(g, static_cast<uint32_t>(geometries_.size()));
  if (inserted) geometries_.push_back(g);
  return it->second;
}

ResourceId Graph::AddResource(Resource r) {
  resources_.push_back(std::move(r));
  res_first_.push_back(TaskId::Invalid());
  res_last_.push_back(TaskId::Invalid());
  return ResourceId(static_cast<uint32_t>(resources_.size() - 1));
}

LayerId Graph::AddLayer(std::string_view path, LayerId parent) {
  auto it = layer_index_.find(absl::string_view(path.data(), path.size()));
  if (it != layer_index_.end()) return it->second;
  const LayerId id(static_cast<uint32_t>(layers_.size()));
  layers_.push_back({std::string(path), parent});
  layer_index_.emplace(std::string(path), id);
  return id;
}

LayerId Graph::FindLayer(std::string_view path) const {
  auto it = layer_index_.find(absl::string_view(path.data(), path.size()));
  return it == layer_index_.end() ? LayerId::Invalid() : it->second;
}

int32_t Graph::AddIteration(Iteration it) {
  iterations_.push_back(std::move(it));
  return static_cast<int32_t>(iterations_.size() - 1);
}

TaskId Graph::NewTask(const TaskSpec& spec, ResourceId resource) {
  const TaskId id(static_cast<uint32_t>(kind_.size()));
  kind_.push_back(spec.kind);
  phase_.push_back(spec.phase);
  flags_.push_back(0);
  name_.push_back(InternName(spec.name));
  resource_.push_back(resource);
  layer_.push_back(spec.layer);
  iteration_.push_back(spec.iteration);
  priority_.push_back(0);
  duration_.push_back(spec.duration_ns);
  gap_.push_back(spec.gap_ns);
  measured_start_.push_back(spec.measured_start_ns);
  bytes_.push_back(spec.bytes);
  geometry_.push_back(spec.geometry.known() ? InternGeometry(spec.geometry) : 0);
  prev_.push_back(TaskId::Invalid());
  next_.push_back(TaskId::Invalid());
  ++live_tasks_;
  Touch();
  return id;
}

void Graph::LinkAfter(TaskId anchor, TaskId t) {
  const ResourceId r = resource_[t.value()];
  const TaskId after = anchor.valid() ? next_[anchor.value()] : res_first_[r.value()];
  prev_[t.value()] = anchor;
  next_[t.value()] = after;
  if (anchor.valid()) {
    next_[anchor.value()] = t;
  } else {
    res_first_[r.value()] = t;
  }
  if (after.valid()) {
    prev_[after.value()] = t;
  } else {
    res_last_[r.value()] = t;
  }
}

void Graph::Unlink(TaskId t) {
  const ResourceId r = resource_[t.value()];
  const TaskId p = prev_[t.value()];
  const TaskId n = next_[t.value()];
  if (p.valid()) {
    next_[p.value()] = n;
  } else {
    res_first_[r.value()] = n;
  }
  if (n.valid()) {
    prev_[n.value()] = p;
  } else {
    res_last_[r.value()] = p;
  }
  prev_[t.value()] = TaskId::Invalid();
  next_[t.value()] = TaskId::Invalid();
}

void Graph::Reserve(size_t tasks, size_t edges) {
  kind_.reserve(tasks);
  phase_.reserve(tasks);
  flags_.reserve(tasks);
  name_.reserve(tasks);
  resource_.reserve(tasks);
  layer_.reserve(tasks);
  iteration_.reserve(tasks);
  priority_.reserve(tasks);
  duration_.reserve(tasks);
  gap_.reserve(tasks);
  measured_start_.reserve(tasks);
  bytes_.reserve(tasks);
  geometry_.reserve(tasks);
  prev_.reserve(tasks);
  next_.reserve(tasks);
  edges_.reserve(edges);
}

TaskId Graph::AppendTask(const TaskSpec& spec) {
  const TaskId t = NewTask(spec, spec.resource);
  LinkAfter(res_last_[spec.resource.value()], t);
  return t;
}

TaskId Graph::InsertTaskAfter(TaskId anchor, const TaskSpec& spec) {
  const TaskId t = NewTask(spec, resource_[anchor.value()]);
  LinkAfter(anchor, t);
  return t;
}

TaskId Graph::InsertTaskBefore(TaskId anchor, const TaskSpec& spec) {
  const TaskId t = NewTask(spec, resource_[anchor.value()]);
  LinkAfter(prev_[anchor.value()], t);
  return t;
}

void Graph::RemoveTask(TaskId t) {
  if (removed(t)) return;
  Unlink(t);
  flags_[t.value()] |= kFlagRemoved;
  --live_tasks_;
  const Adjacency& adj = adjacency();
  std::vector<EdgeId> doomed;
  for (uint32_t i = adj.out_offsets[t.value()]; i < adj.out_offsets[t.value() + 1]; ++i) {
    doomed.push_back(adj.out_edges[i]);
  }
  for (uint32_t i = adj.in_offsets[t.value()]; i < adj.in_offsets[t.value() + 1]; ++i) {
    doomed.push_back(adj.in_edges[i]);
  }
  for (EdgeId e : doomed) RemoveEdge(e);
  Touch();
}

void Graph::RemoveTasks(const std::vector<TaskId>& tasks) {
  bool any = false;
  for (TaskId t : tasks) {
    if (removed(t)) continue;
    Unlink(t);
    flags_[t.value()] |= kFlagRemoved;
    --live_tasks_;
    any = true;
  }
  if (!any) return;
  for (Edge& e : edges_) {
    if (e.removed) continue;
    if ((flags_[e.src.value()] & kFlagRemoved) || (flags_[e.dst.value()] & kFlagRemoved)) {
      e.removed = true;
      --live_edges_;
    }
  }
  Touch();
}

void Graph::MoveTaskToResource(TaskId t, ResourceId r) {
  Unlink(t);
  resource_[t.value()] = r;
  LinkAfter(res_last_[r.value()], t);
}

EdgeId Graph::AddEdge(TaskId src, TaskId dst, EdgeKind kind, int32_t delay_ns) {
  edges_.push_back({src, dst, delay_ns, kind, false});
  ++live_edges_;
  Touch();
  return EdgeId(static_cast<uint32_t>(edges_.size() - 1));
}

void Graph::RemoveEdge(EdgeId e) {
  Edge& edge = edges_[e.value()];
  if (edge.removed) return;
  edge.removed = true;
  --live_edges_;
  Touch();
}

const Adjacency& Graph::adjacency() const {
  if (adjacency_valid_ && adjacency_) return *adjacency_;
  if (!adjacency_) adjacency_ = std::make_unique<Adjacency>();
  Adjacency& a = *adjacency_;
  const size_t n = task_count();
  a.out_offsets.assign(n + 1, 0);
  a.in_offsets.assign(n + 1, 0);
  for (const Edge& e : edges_) {
    if (e.removed) continue;
    ++a.out_offsets[e.src.value() + 1];
    ++a.in_offsets[e.dst.value() + 1];
  }
  for (size_t i = 0; i < n; ++i) {
    a.out_offsets[i + 1] += a.out_offsets[i];
    a.in_offsets[i + 1] += a.in_offsets[i];
  }
  a.out_edges.resize(live_edges_);
  a.in_edges.resize(live_edges_);
  std::vector<uint32_t> out_fill(a.out_offsets.begin(), a.out_offsets.end() - 1);
  std::vector<uint32_t> in_fill(a.in_offsets.begin(), a.in_offsets.end() - 1);
  for (uint32_t i = 0; i < edges_.size(); ++i) {
    const Edge& e = edges_[i];
    if (e.removed) continue;
    a.out_edges[out_fill[e.src.value()]++] = EdgeId(i);
    a.in_edges[in_fill[e.dst.value()]++] = EdgeId(i);
  }
  adjacency_valid_ = true;
  return a;
}

absl::Status Graph::Validate() const {
  const size_t n = task_count();
  for (uint32_t i = 0; i < edges_.size(); ++i) {
    const Edge& e = edges_[i];
    if (e.removed) continue;
    if (!e.src.valid() || !e.dst.valid() || e.src.value() >= n || e.dst.value() >= n) {
      return absl::FailedPreconditionError(absl::StrCat("edge ", i, " has an out-of-range end"));
    }
    if (removed(e.src) || removed(e.dst)) {
      return absl::FailedPreconditionError(
          absl::StrCat("edge ", i, " (", Sv(EdgeKindName(e.kind)), ") dangles: task ",
                       removed(e.src) ? e.src.value() : e.dst.value(), " was removed"));
    }
    if (e.src == e.dst) {
      return absl::FailedPreconditionError(absl::StrCat("task ", e.src.value(), " depends on itself"));
    }
  }
  // Kahn's algorithm over edges plus ordered-resource order.
  const Adjacency& adj = adjacency();
  std::vector<uint32_t> indeg(n, 0);
  for (uint32_t t = 0; t < n; ++t) {
    if (flags_[t] & kFlagRemoved) continue;
    indeg[t] = adj.in_offsets[t + 1] - adj.in_offsets[t];
    const TaskId p = prev_[t];
    if (p.valid() && resources_[resource_[t].value()].ordered) ++indeg[t];
  }
  std::vector<uint32_t> ready;
  for (uint32_t t = 0; t < n; ++t) {
    if (!(flags_[t] & kFlagRemoved) && indeg[t] == 0) ready.push_back(t);
  }
  size_t seen = 0;
  while (!ready.empty()) {
    const uint32_t t = ready.back();
    ready.pop_back();
    ++seen;
    for (uint32_t i = adj.out_offsets[t]; i < adj.out_offsets[t + 1]; ++i) {
      const uint32_t c = edges_[adj.out_edges[i].value()].dst.value();
      if (--indeg[c] == 0) ready.push_back(c);
    }
    const TaskId nx = next_[t];
    if (nx.valid() && resources_[resource_[t].value()].ordered && --indeg[nx.value()] == 0) {
      ready.push_back(nx.value());
    }
  }
  if (seen != live_tasks_) {
    for (uint32_t t = 0; t < n; ++t) {
      if (!(flags_[t] & kFlagRemoved) && indeg[t] > 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("dependency cycle through task ", t, " (", names_[name_[t]], ")"));
      }
    }
  }
  return absl::OkStatus();
}

size_t Graph::MemoryBytes() const {
  auto cap = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  size_t b = cap(kind_) + cap(phase_) + cap(flags_) + cap(name_) + cap(resource_) +
             cap(layer_) + cap(iteration_) + cap(priority_) + cap(duration_) + cap(gap_) +
             cap(measured_start_) + cap(bytes_) + cap(geometry_) + cap(prev_) + cap(next_) + cap(edges_);
  if (adjacency_) {
    b += cap(adjacency_->out_offsets) + cap(adjacency_->out_edges) +
         cap(adjacency_->in_offsets) + cap(adjacency_->in_edges);
  }
  for (const std::string& s : names_) b += s.capacity() + sizeof(s);
  return b;
}

}  // namespace reverie::depgraph
