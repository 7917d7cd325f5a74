#include "depgraph/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/sv.h"
#include "base/topological_order.h"

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

void Graph::ResizeAllocations(std::span<const std::pair<uint32_t, int64_t>> sizes) {
  std::vector<int64_t> to(memory_.size(), 0);
  for (const auto& [i, bytes] : sizes) {
    REVERIE_CHECK(i < memory_.size() && bytes > 0 &&
                  (memory_[i].bytes > 0 || (memory_[i].bytes < 0 && memory_[i].alloc == 0)));
    to[i] = bytes;
  }
  for (size_t i = 0; i < memory_.size(); ++i) {
    MemoryEvent& m = memory_[i];
    if (to[i] > 0) m.bytes = m.bytes > 0 ? to[i] : -to[i];
    if (m.alloc != 0 && to[m.alloc - 1] > 0) m.bytes = -to[m.alloc - 1];
  }
}

void Graph::AddMemoryEstimate(std::string_view why) {
  if (why.empty() || memory_estimate_.find(why) != std::string::npos) return;
  if (!memory_estimate_.empty()) memory_estimate_ += "; ";
  memory_estimate_ += why;
}

void Graph::AddMemoryEvent(const MemoryEvent& m) {
  REVERIE_CHECK(m.measured_ns != kNotMeasured);
  REVERIE_CHECK(memory_.empty() || memory_.back().measured_ns == kNotMeasured ||
                memory_.back().measured_ns <= m.measured_ns);
  REVERIE_CHECK(m.alloc == 0 || (m.alloc <= memory_.size() && memory_[m.alloc - 1].bytes > 0));
  REVERIE_CHECK(!m.layer.valid() || m.layer.value() < layer_count());
  REVERIE_CHECK(!m.anchor.valid() || (m.anchor.value() < task_count() && m.anchor_offset_ns >= 0));
  memory_.push_back(m);
  memory_.back().recorded_bytes = m.bytes;
}

void Graph::ReanchorMemoryEvent(uint32_t index, TaskId anchor, int64_t offset_ns) {
  REVERIE_CHECK(index < memory_.size() && live(anchor) && offset_ns >= 0);
  memory_[index].anchor = anchor;
  memory_[index].anchor_offset_ns = offset_ns;
}

uint32_t Graph::AddScriptMemoryEvent(MemoryEvent m) {
  REVERIE_CHECK(live(m.anchor) && m.anchor_offset_ns >= 0 && m.bytes != 0);
  REVERIE_CHECK(memory_.size() < UINT32_MAX);
  REVERIE_CHECK(m.alloc == 0 || (m.bytes < 0 && m.alloc <= memory_.size() && memory_[m.alloc - 1].bytes > 0));
  REVERIE_CHECK(!m.layer.valid() || m.layer.value() < layer_count());
  m.measured_ns = kNotMeasured;
  m.total_allocated = -1;
  m.total_reserved = -1;
  m.recorded_bytes = m.bytes;
  memory_.push_back(m);
  return static_cast<uint32_t>(memory_.size() - 1);
}

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

int32_t Graph::AddStep(Step it) {
  steps_.push_back(std::move(it));
  return static_cast<int32_t>(steps_.size() - 1);
}

OpId Graph::AddOp(std::string_view name, OpId parent, int64_t own_ns) {
  REVERIE_CHECK(!parent.valid() || parent.value() < ops_.size());  // parents come first
  const uint32_t depth = parent.valid() ? ops_[parent.value()].depth + 1 : 0;
  const uint32_t name_id = InternName(name);
  const OpId id(static_cast<uint32_t>(ops_.size()));
  ops_.push_back({name_id, parent, own_ns, 0, depth});
  if (op_last_of_name_.size() <= name_id) op_last_of_name_.resize(name_id + 1);
  op_links_.push_back({op_last_of_name_[name_id], OpId(), OpId(), OpId()});
  op_last_of_name_[name_id] = id;
  if (parent.valid()) {
    OpLinks& p = op_links_[parent.value()];
    if (p.last_child.valid()) {
      op_links_[p.last_child.value()].next_sibling = id;
    } else {
      p.first_child = id;
    }
    p.last_child = id;
  }
  return id;
}

void Graph::SetOpCostWithoutCalls(std::string_view name, int64_t median_ns) {
  op_cost_without_calls_[std::string(name)] = std::max<int64_t>(0, median_ns);
}

std::optional<int64_t> Graph::op_cost_without_calls(std::string_view name) const {
  auto it = op_cost_without_calls_.find(absl::string_view(name.data(), name.size()));
  if (it == op_cost_without_calls_.end()) return std::nullopt;
  return it->second;
}

void Graph::set_op_inputs(OpId id, hardware::OpArgs inputs) {
  // The key: every field, with separators no field holds unescaped.
  std::string key;
  for (const hardware::OpArg& a : inputs) {
    absl::StrAppend(&key, a.is_list ? "L" : "T", a.type.size(), ":", a.type, a.concrete.size(), ":",
                    a.concrete, a.shapes.size(), "(");
    for (const std::vector<int64_t>& s : a.shapes) absl::StrAppend(&key, absl::StrJoin(s, ","), ";");
    key += ')';
  }
  auto [it, inserted] = op_inputs_index_.try_emplace(key, static_cast<uint32_t>(op_inputs_.size()));
  if (inserted) op_inputs_.push_back(std::move(inputs));
  ops_[id.value()].inputs = it->second + 1;
}

TaskId Graph::NewTask(const TaskSpec& spec, ResourceId resource) {
  REVERIE_CHECK(resource.valid() && resource.value() < resource_count());
  const TaskId id(static_cast<uint32_t>(col_.kind.size()));
  uint8_t flags = 0;
  if (spec.step_mark == StepMark::kBegin) flags |= kFlagStepBegin;
  if (spec.step_mark == StepMark::kEnd) flags |= kFlagStepEnd;
  col_.kind.push_back(spec.kind);
  col_.phase.push_back(spec.phase);
  col_.flags.push_back(flags);
  col_.name.push_back(InternName(spec.name));
  col_.resource.push_back(resource);
  col_.layer.push_back(spec.layer);
  col_.step.push_back(spec.step);
  col_.priority.push_back(0);
  col_.duration.push_back(spec.duration_ns);
  col_.gap.push_back(spec.gap_ns);
  col_.measured_start.push_back(spec.measured_start_ns);
  col_.bytes.push_back(spec.bytes);
  col_.geometry.push_back(spec.geometry.known() ? InternGeometry(spec.geometry) : 0);
  col_.op.push_back(spec.op);
  col_.prev.push_back(TaskId::Invalid());
  col_.next.push_back(TaskId::Invalid());
  col_.launch_in.push_back(EdgeId::Invalid());
  ++live_tasks_;
  return id;
}

void Graph::LinkAfter(TaskId anchor, TaskId t) {
  const ResourceId r = col_.resource[t.value()];
  const TaskId after = anchor.valid() ? col_.next[anchor.value()] : res_first_[r.value()];
  col_.prev[t.value()] = anchor;
  col_.next[t.value()] = after;
  if (anchor.valid()) {
    col_.next[anchor.value()] = t;
  } else {
    res_first_[r.value()] = t;
  }
  if (after.valid()) {
    col_.prev[after.value()] = t;
  } else {
    res_last_[r.value()] = t;
  }
}

void Graph::Unlink(TaskId t) {
  const ResourceId r = col_.resource[t.value()];
  const TaskId p = col_.prev[t.value()];
  const TaskId n = col_.next[t.value()];
  if (p.valid()) {
    col_.next[p.value()] = n;
  } else {
    res_first_[r.value()] = n;
  }
  if (n.valid()) {
    col_.prev[n.value()] = p;
  } else {
    res_last_[r.value()] = p;
  }
  col_.prev[t.value()] = TaskId::Invalid();
  col_.next[t.value()] = TaskId::Invalid();
}

void Graph::Reserve(size_t tasks, size_t edges) {
  col_.ForEach([tasks](auto& v) { v.reserve(tasks); });
  edges_.reserve(edges);
}

TaskId Graph::AppendTask(const TaskSpec& spec) {
  const TaskId t = NewTask(spec, spec.resource);
  LinkAfter(res_last_[spec.resource.value()], t);
  reach_.Linked(*this, t);
  return t;
}

TaskId Graph::InsertTaskAfter(TaskId anchor, const TaskSpec& spec) {
  REVERIE_CHECK(live(anchor));  // a removed task is on no resource's list
  const TaskId t = NewTask(spec, col_.resource[anchor.value()]);
  LinkAfter(anchor, t);
  reach_.Linked(*this, t);
  return t;
}

TaskId Graph::InsertTaskBefore(TaskId anchor, const TaskSpec& spec) {
  REVERIE_CHECK(live(anchor));
  const TaskId t = NewTask(spec, col_.resource[anchor.value()]);
  LinkAfter(col_.prev[anchor.value()], t);
  reach_.Linked(*this, t);
  return t;
}

void Graph::RemoveTask(TaskId t) {
  if (removed(t)) return;
  Unlink(t);
  col_.flags[t.value()] |= kFlagRemoved;
  --live_tasks_;
  const Adjacency& adj = adjacency();
  std::vector<EdgeId> doomed(adj.out(t).begin(), adj.out(t).end());
  doomed.insert(doomed.end(), adj.in(t).begin(), adj.in(t).end());
  for (EdgeId e : doomed) RemoveEdge(e);
}

void Graph::RemoveTasks(const std::vector<TaskId>& tasks) {
  bool any = false;
  for (TaskId t : tasks) {
    if (removed(t)) continue;
    Unlink(t);
    col_.flags[t.value()] |= kFlagRemoved;
    --live_tasks_;
    any = true;
  }
  if (!any) return;
  for (uint32_t i = 0; i < edges_.size(); ++i) {
    Edge& e = edges_[i];
    if (e.removed) continue;
    if ((col_.flags[e.src.value()] & kFlagRemoved) || (col_.flags[e.dst.value()] & kFlagRemoved)) {
      e.removed = true;
      --live_edges_;
      if (col_.launch_in[e.dst.value()] == EdgeId(i)) col_.launch_in[e.dst.value()] = EdgeId::Invalid();
    }
  }
  Touch();
}

EdgeId Graph::AddEdge(TaskId src, TaskId dst, EdgeKind kind, int32_t delay_ns) {
  // An edge joins two live tasks: one to a removed task would never be
  // simulated yet would hold its neighbour back in Validate and in exports.
  REVERIE_CHECK(live(src) && live(dst) && src != dst);
  edges_.push_back({src, dst, delay_ns, kind, false, false});
  ++live_edges_;
  const EdgeId id(static_cast<uint32_t>(edges_.size() - 1));
  RecordEdgeChange(id, /*added=*/true);
  reach_.EdgeAdded(*this, src, dst);
  if (kind == EdgeKind::kLaunch && !col_.launch_in[dst.value()].valid()) col_.launch_in[dst.value()] = id;
  return id;
}

void Graph::RemoveEdge(EdgeId e) {
  REVERIE_CHECK(e.value() < edges_.size());
  Edge& edge = edges_[e.value()];
  if (edge.removed) return;
  edge.removed = true;
  --live_edges_;
  if (col_.launch_in[edge.dst.value()] == e) col_.launch_in[edge.dst.value()] = EdgeId::Invalid();
  RecordEdgeChange(e, /*added=*/false);
}

namespace {

// Appends edge `e`, the highest id in the segment at `begin` of `size`
// entries, at the segment's end: in place when the segment ends the array
// (or is empty), else moved to the array's end first (the entries it
// leaves are slack).
void Append(uint32_t& begin, uint32_t& size, std::vector<EdgeId>& edges, EdgeId e, size_t* slack) {
  if (size == 0) {
    begin = static_cast<uint32_t>(edges.size());
  } else if (begin + size != edges.size()) {
    const uint32_t from = begin;
    begin = static_cast<uint32_t>(edges.size());
    for (uint32_t i = 0; i < size; ++i) {
      const EdgeId moved = edges[from + i];
      edges.push_back(moved);
    }
    *slack += size;
  }
  edges.push_back(e);
  ++size;
}

// Takes `e` out of its segment, which stays in id order.
void Erase(uint32_t begin, uint32_t& size, std::vector<EdgeId>& edges, EdgeId e, size_t* slack) {
  const auto first = edges.begin() + begin;
  const auto last = first + size;
  const auto at = std::lower_bound(first, last, e);
  REVERIE_CHECK(at != last && *at == e);  // a recorded removal of an edge the segment holds
  std::copy(at + 1, last, at);
  --size;
  ++*slack;
}

}  // namespace

size_t Graph::PatchLimit() const {
  // A patch costs about an edge list's length per change, a build a pass
  // over every task and edge.
  return (task_count() + edges_.size()) / 16 + 64;
}

bool Graph::PatchAdjacency() const {
  Adjacency& a = adjacency_.mutable_adjacency();
  const std::vector<AdjacencyCache::Change> changes = adjacency_.TakeChanges();
  if (a.packed()) {  // sizes of their own, so that a list can move
    const size_t built = a.out_begin.size() - 1;
    a.out_size.resize(built);
    a.in_size.resize(built);
    for (size_t t = 0; t < built; ++t) {
      a.out_size[t] = a.out_begin[t + 1] - a.out_begin[t];
      a.in_size[t] = a.in_begin[t + 1] - a.in_begin[t];
    }
  }
  const size_t n = task_count();
  a.out_begin.resize(n + 1, static_cast<uint32_t>(a.out_edges.size()));
  a.out_size.resize(n, 0);
  a.in_begin.resize(n + 1, static_cast<uint32_t>(a.in_edges.size()));
  a.in_size.resize(n, 0);
  for (const AdjacencyCache::Change& c : changes) {
    const uint32_t src = edges_[c.edge.value()].src.value();
    const uint32_t dst = edges_[c.edge.value()].dst.value();
    if (c.added) {
      Append(a.out_begin[src], a.out_size[src], a.out_edges, c.edge, &a.slack);
      Append(a.in_begin[dst], a.in_size[dst], a.in_edges, c.edge, &a.slack);
    } else {
      Erase(a.out_begin[src], a.out_size[src], a.out_edges, c.edge, &a.slack);
      Erase(a.in_begin[dst], a.in_size[dst], a.in_edges, c.edge, &a.slack);
    }
  }
  // Past as much slack as live entries, a build packs the arrays again.
  return a.slack <= 2 * live_edges_ + 1024;
}

void Graph::RecordEdgeChange(EdgeId e, bool added) {
  if (!adjacency_.patchable()) return;
  const Adjacency& a = adjacency_.get();
  const Edge& edge = edges_[e.value()];
  int64_t work = 1;
  if (edge.src.value() + 1 < a.out_begin.size()) work += a.out_degree(edge.src);
  if (edge.dst.value() + 1 < a.in_begin.size()) work += a.in_degree(edge.dst);
  adjacency_.Record(e, added, PatchLimit(), work);
}

int64_t Graph::AdjacencyWork() const {
  const int64_t build = static_cast<int64_t>(task_count() + edges_.size());
  if (!adjacency_.patchable()) return build;
  const size_t built = adjacency_.get().out_begin.size() - 1;
  const int64_t new_tasks = static_cast<int64_t>(task_count() - std::min(task_count(), built));
  return std::min(build, new_tasks + adjacency_.pending_work());
}

const Adjacency& Graph::adjacency() const {
  if (adjacency_.patchable()) {
    const Adjacency& current = adjacency_.get();
    if (adjacency_.pending() == 0 && current.out_begin.size() == task_count() + 1) return current;
    if (PatchAdjacency()) return adjacency_.get();
  }
  return BuildAdjacency();
}

const Adjacency& Graph::packed_adjacency() const {
  const Adjacency& a = adjacency();
  return a.packed() ? a : BuildAdjacency();
}

const Adjacency& Graph::BuildAdjacency() const {
  Adjacency& a = adjacency_.Fill();
  const size_t n = task_count();
  a.out_begin.assign(n + 1, 0);
  a.in_begin.assign(n + 1, 0);
  a.out_size.clear();
  a.in_size.clear();
  for (const Edge& e : edges_) {
    if (e.removed) continue;
    ++a.out_begin[e.src.value() + 1];
    ++a.in_begin[e.dst.value() + 1];
  }
  for (size_t i = 0; i < n; ++i) {
    a.out_begin[i + 1] += a.out_begin[i];
    a.in_begin[i + 1] += a.in_begin[i];
  }
  a.out_edges.resize(live_edges_);
  a.in_edges.resize(live_edges_);
  a.slack = 0;
  ++a.builds;
  std::vector<uint32_t> out_fill(a.out_begin.begin(), a.out_begin.end() - 1);
  std::vector<uint32_t> in_fill(a.in_begin.begin(), a.in_begin.end() - 1);
  for (uint32_t i = 0; i < edges_.size(); ++i) {
    const Edge& e = edges_[i];
    if (e.removed) continue;
    a.out_edges[out_fill[e.src.value()]++] = EdgeId(i);
    a.in_edges[in_fill[e.dst.value()]++] = EdgeId(i);
  }
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
  for (uint32_t t = 0; t < n; ++t) {
    const EdgeId l = col_.launch_in[t];
    if (l.valid() && (l.value() >= edges_.size() || edges_[l.value()].removed ||
                      edges_[l.value()].kind != EdgeKind::kLaunch || edges_[l.value()].dst.value() != t)) {
      return absl::FailedPreconditionError(absl::StrCat("task ", t, "'s launch edge is not a live launch into it"));
    }
  }
  // Edges plus ordered-resource order, sorted once.
  const TopologicalResult order = SortDependencies([](TaskId) {});
  if (!order.complete()) return CycleError(*this, TaskId(order.FirstUnordered()));
  return absl::OkStatus();
}

std::vector<uint32_t> Graph::DependencyCounts(const Adjacency& adj) const {
  const size_t n = task_count();
  std::vector<uint32_t> pending(n, kNotANode);
  for (uint32_t t = 0; t < n; ++t) {
    if (col_.flags[t] & kFlagRemoved) continue;
    pending[t] = adj.in_degree(TaskId(t));
    const TaskId p = col_.prev[t];
    if (p.valid() && resources_[col_.resource[t].value()].ordered) ++pending[t];
  }
  return pending;
}

absl::Status CycleError(const Graph& g, TaskId t) {
  return absl::FailedPreconditionError(
      absl::StrCat("dependency cycle through task ", t.value(), " (", Sv(g.name(t)), ")"));
}

size_t Graph::MemoryBytes() const {
  auto cap = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  size_t b = cap(edges_) + cap(ops_) + cap(op_links_) + cap(op_last_of_name_) + cap(memory_);
  col_.ForEach([&](const auto& v) { b += cap(v); });
  if (const Adjacency* a = adjacency_.ptr()) {
    b += cap(a->out_begin) + cap(a->out_size) + cap(a->out_edges) + cap(a->in_begin) +
         cap(a->in_size) + cap(a->in_edges);
  }
  b += reach_.MemoryBytes();
  for (const std::string& s : names_) b += s.capacity() + sizeof(s);
  for (const hardware::OpArgs& args : op_inputs_) {
    for (const hardware::OpArg& a : args) {
      b += sizeof(a) + a.type.capacity() + a.concrete.capacity();
      for (const std::vector<int64_t>& s : a.shapes) b += sizeof(s) + cap(s);
    }
  }
  return b;
}

}  // namespace reverie::depgraph
