#include "transforms/remove.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/topological_order.h"
#include "transforms/ops.h"

namespace reverie::transforms {
namespace {

using depgraph::EdgeKind;
using depgraph::Graph;
using depgraph::TaskId;
using depgraph::TaskKind;

// How a surviving ancestor reaches a removed task: through resource order
// only (kOrderOnly, so it is on that task's resource), or with `kind` / `delay`
// of the last explicit edge on the way.
constexpr int kOrderOnly = -1;
struct Entry {
  TaskId src;
  int kind = kOrderOnly;
  int32_t delay = 0;
};

enum class End { kCpu, kGpu, kComm };
End EndOf(TaskKind k) {
  if (k == TaskKind::kComm) return End::kComm;
  return depgraph::IsGpuKind(k) ? End::kGpu : End::kCpu;
}

bool KindFits(EdgeKind k, End s, End d) {
  switch (k) {
    case EdgeKind::kLaunch: return s == End::kCpu && d == End::kGpu;
    case EdgeKind::kSync: return s == End::kGpu && d == End::kCpu;
    case EdgeKind::kEvent: return s == End::kGpu && d == End::kGpu;
    case EdgeKind::kInterThread: return s == End::kCpu && d == End::kCpu;
    case EdgeKind::kComm: return s == End::kComm || d == End::kComm;
    case EdgeKind::kUser: return true;
  }
  return false;
}

EdgeKind KindForEnds(End s, End d) {
  if (s == End::kComm || d == End::kComm) return EdgeKind::kComm;
  if (s == End::kGpu) return d == End::kGpu ? EdgeKind::kEvent : EdgeKind::kSync;
  return d == End::kGpu ? EdgeKind::kUser : EdgeKind::kInterThread;
}

class Rewirer {
 public:
  Rewirer(Graph& g, const RemoveLimits& limits) : g_(g), adj_(g.adjacency()), limits_(limits) {}

  RemoveLimitHit hit() const { return hit_; }

  absl::StatusOr<RemoveResult> Run(const Selection& sel) {
    const size_t n = g_.task_count();
    in_r_.assign(n, 0);
    for (TaskId t : sel) {
      // Step markers stay: they are where the steps begin and end.
      if (t.value() < n && !g_.removed(t) && !g_.is_step_mark(t)) {
        in_r_[t.value()] = 1;
        removed_.push_back(t);
      }
    }
    RemoveResult result;
    if (removed_.empty()) return result;
    RankResources();
    if (!TopoOrder()) return depgraph::CycleError(g_, cycle_at_);
    slot_.assign(n, 0);
    for (size_t i = 0; i < order_.size(); ++i) slot_[order_[i].value()] = static_cast<uint32_t>(i);
    sets_.resize(order_.size());
    CountUses();
    for (size_t i = 0; i < order_.size(); ++i) {
      Gather(order_[i], &sets_[i]);
      Emit(order_[i], sets_[i]);
      if (uses_[i] == 0) std::vector<Entry>().swap(sets_[i]);
      // Checked before the graph changes, so that a refusal leaves it whole.
      if (work_ > limits_.max_work) {
        hit_ = RemoveLimitHit::kWork;
        return absl::ResourceExhaustedError(
            absl::StrCat("remove: rewiring needs more than ", limits_.max_work, " steps"));
      }
      if (static_cast<int64_t>(new_edges_.size()) > limits_.max_new_edges) {
        hit_ = RemoveLimitHit::kNewEdges;
        return absl::ResourceExhaustedError(absl::StrCat(
            "remove: rewiring would add more than ", limits_.max_new_edges, " edges"));
      }
    }
    g_.RemoveTasks(removed_);
    for (const NewEdge& e : new_edges_) g_.AddEdge(e.src, e.dst, e.kind, e.delay);
    result.removed = static_cast<int64_t>(removed_.size());
    result.edges_added = static_cast<int64_t>(new_edges_.size());
    result.work = work_;
    return result;
  }

 private:
  struct NewEdge {
    TaskId src, dst;
    EdgeKind kind;
    int32_t delay;
  };

  bool Ordered(TaskId t) const { return g_.resource(g_.resource_of(t)).ordered; }
  bool InR(TaskId t) const { return in_r_[t.value()] != 0; }

  void RankResources() {
    rank_.assign(g_.task_count(), 0);
    for (uint32_t r = 0; r < g_.resource_count(); ++r) {
      uint32_t k = 0;
      for (TaskId t = g_.first_on_resource(depgraph::ResourceId(r)); t.valid();
           t = g_.next_on_resource(t)) {
        rank_[t.value()] = k++;
      }
    }
  }

  // The removed tasks in dependency order (base/topological_order.h);
  // false when they hold a cycle.
  bool TopoOrder() {
    std::vector<uint32_t> pending(removed_.size(), 0);
    std::vector<uint32_t> idx(g_.task_count(), 0);
    for (size_t i = 0; i < removed_.size(); ++i) idx[removed_[i].value()] = static_cast<uint32_t>(i);
    for (size_t i = 0; i < removed_.size(); ++i) {
      const TaskId t = removed_[i];
      for (const auto edge : adj_.in(t)) {
        if (InR(g_.edge(edge).src)) ++pending[i];
      }
      const TaskId p = g_.prev_on_resource(t);
      if (Ordered(t) && p.valid() && InR(p)) ++pending[i];
    }
    const TopologicalResult r = TopologicalOrder(std::move(pending), [&](uint32_t i, auto visit) {
      const TaskId t = removed_[i];
      for (const auto edge : adj_.out(t)) {
        if (InR(g_.edge(edge).dst)) visit(idx[g_.edge(edge).dst.value()]);
      }
      const TaskId nx = g_.next_on_resource(t);
      if (Ordered(t) && nx.valid() && InR(nx)) visit(idx[nx.value()]);
    }, [&](uint32_t i) { order_.push_back(removed_[i]); });
    if (!r.complete()) cycle_at_ = removed_[r.FirstUnordered()];
    return r.complete();
  }

  // How many times a removed task's set is read by the Gather of another:
  // once per edge to a removed task, once more when the next task on its
  // ordered resource is removed. A set is freed after its last read.
  void CountUses() {
    uses_.assign(order_.size(), 0);
    for (const TaskId r : order_) {
      for (const auto edge : adj_.in(r)) {
        const TaskId s = g_.edge(edge).src;
        if (InR(s)) ++uses_[slot_[s.value()]];
      }
      const TaskId p = g_.prev_on_resource(r);
      if (Ordered(r) && p.valid() && InR(p)) ++uses_[slot_[p.value()]];
    }
  }

  void Release(TaskId t) {
    const uint32_t i = slot_[t.value()];
    if (--uses_[i] == 0) std::vector<Entry>().swap(sets_[i]);
  }

  void Gather(TaskId r, std::vector<Entry>* out) {
    // A chain of removed tasks on one stream (kernels launched from many
    // threads) hands each set on to the next task alone: taken, not copied,
    // it grows by the new task's few parents instead of being copied and
    // sorted whole at every step of the chain.
    const TaskId p = g_.prev_on_resource(r);
    const bool after_removed = Ordered(r) && p.valid() && InR(p);
    const bool taken = after_removed && uses_[slot_[p.value()]] == 1;
    if (taken) {
      *out = std::move(sets_[slot_[p.value()]]);
      Release(p);
      ++work_;
    }
    const size_t sorted = out->size();  // the taken set, already pruned
    work_ += static_cast<int64_t>(adj_.in(r).size());
    for (const auto edge : adj_.in(r)) {
      const depgraph::Edge& e = g_.edge(edge);
      if (!InR(e.src)) {
        out->push_back({e.src, static_cast<int>(e.kind), e.delay_ns});
      } else {
        const std::vector<Entry>& from = sets_[slot_[e.src.value()]];
        work_ += static_cast<int64_t>(from.size());
        if (work_ > limits_.max_work) return;  // Run reports it
        for (const Entry& x : from) out->push_back({x.src, static_cast<int>(e.kind), e.delay_ns});
        Release(e.src);
      }
    }
    if (Ordered(r) && p.valid() && !taken) {
      if (!InR(p)) {
        out->push_back({p, kOrderOnly, 0});
      } else {
        const std::vector<Entry>& from = sets_[slot_[p.value()]];
        work_ += static_cast<int64_t>(from.size());
        if (work_ > limits_.max_work) return;
        for (const Entry& x : from) out->push_back(x);
        Release(p);
      }
    }
    Prune(out, sorted);
  }

  // The order of a pruned set: by resource; within an ordered resource the
  // latest first, elsewhere by id; then explicit kinds before order-only
  // (-1), and the longer delay first. Entries it does not order are equal.
  std::pair<uint32_t, uint64_t> Key(const Entry& e) const {
    const uint32_t res = g_.resource_of(e.src).value();
    const uint64_t pos = Ordered(e.src) ? (0xffffffffu - rank_[e.src.value()]) : e.src.value();
    return {res, pos};
  }
  bool Less(const Entry& a, const Entry& b) const {
    const auto ka = Key(a), kb = Key(b);
    if (ka != kb) return ka < kb;
    if (a.kind != b.kind) return a.kind > b.kind;
    return a.delay > b.delay;
  }
  // Whether `a` and `b` are one ancestor to the pruned set: the same
  // ordered resource (whose latest task implies the others), else one task.
  bool SameAncestor(const Entry& a, const Entry& b) const {
    return g_.resource_of(a.src) == g_.resource_of(b.src) && (Ordered(a.src) || a.src == b.src);
  }

  // Keeps, per ordered resource, only the latest ancestor, and one entry per
  // task elsewhere: the first of each in Less's order. The first `sorted`
  // entries are already pruned; a few more are placed one by one.
  void Prune(std::vector<Entry>* v, size_t sorted) {
    constexpr size_t kPlacedOneByOne = 16;
    if (sorted > 0 && v->size() - sorted <= kPlacedOneByOne) {
      const std::vector<Entry> tail(v->begin() + static_cast<ptrdiff_t>(sorted), v->end());
      v->resize(sorted);
      for (const Entry& e : tail) Place(v, e);
      work_ += static_cast<int64_t>(tail.size());
      return;
    }
    if (v->size() < 2) return;
    std::sort(v->begin(), v->end(), [this](const Entry& a, const Entry& b) { return Less(a, b); });
    std::vector<Entry> kept;
    for (const Entry& e : *v) {
      if (!kept.empty() && SameAncestor(kept.back(), e)) continue;
      kept.push_back(e);
    }
    v->swap(kept);
  }

  // Puts `e` into the pruned set `v`, which stays pruned: one of an ancestor
  // sits next to where `e` would go.
  void Place(std::vector<Entry>* v, const Entry& e) {
    auto at = std::lower_bound(v->begin(), v->end(), e,
                               [this](const Entry& a, const Entry& b) { return Less(a, b); });
    if (at != v->begin() && SameAncestor(*(at - 1), e)) return;  // an earlier one wins
    if (at != v->end() && SameAncestor(*at, e)) {
      *at = e;  // `e` comes first
      return;
    }
    v->insert(at, e);
  }

  // s -> c adds nothing when s precedes c on c's ordered resource, or
  // precedes (or is) a surviving edge parent of c on that parent's ordered
  // resource: a kernel whose own launch call comes after s is already later.
  bool Implied(TaskId s, TaskId c) const {
    auto before = [this](TaskId a, TaskId b) {
      return g_.resource_of(a) == g_.resource_of(b) && Ordered(b) &&
             rank_[a.value()] <= rank_[b.value()];
    };
    if (before(s, c)) return true;
    for (const auto edge : adj_.in(c)) {
      const TaskId p = g_.edge(edge).src;
      if (!InR(p) && (p == s || before(s, p))) return true;
    }
    return false;
  }

  void Emit(TaskId r, const std::vector<Entry>& set) {
    for (const auto edge : adj_.out(r)) {
      const depgraph::Edge& e = g_.edge(edge);
      if (InR(e.dst)) continue;
      for (const Entry& x : set) {
        Add(x.src, e.dst, e.kind, e.delay_ns);
        if (work_ > limits_.max_work ||
            static_cast<int64_t>(new_edges_.size()) > limits_.max_new_edges) {
          return;  // Run reports it
        }
      }
    }
    const TaskId nx = g_.next_on_resource(r);
    if (Ordered(r) && nx.valid() && !InR(nx)) {
      for (const Entry& x : set) {
        if (x.kind == kOrderOnly) continue;  // the list closes up
        Add(x.src, nx, static_cast<EdgeKind>(x.kind), x.delay);
      }
    }
  }

  void Add(TaskId s, TaskId c, EdgeKind kind, int32_t delay) {
    work_ += 1 + static_cast<int64_t>(adj_.in(c).size());  // Implied's scan
    if (s == c || Implied(s, c)) return;
    if (!added_.insert((static_cast<uint64_t>(s.value()) << 32) | c.value()).second) return;
    const End se = EndOf(g_.kind(s)), de = EndOf(g_.kind(c));
    if (!KindFits(kind, se, de) || (kind == EdgeKind::kLaunch && HasLiveLauncher(c))) {
      kind = KindForEnds(se, de);
    }
    if (kind == EdgeKind::kLaunch) launched_.insert(c.value());
    new_edges_.push_back({s, c, kind, delay});
  }

  bool HasLiveLauncher(TaskId c) const {
    for (const auto edge : adj_.in(c)) {
      const depgraph::Edge& e = g_.edge(edge);
      if (e.kind == EdgeKind::kLaunch && !InR(e.src)) return true;
    }
    return launched_.contains(c.value());
  }

  Graph& g_;
  const depgraph::Adjacency& adj_;
  const RemoveLimits limits_;
  RemoveLimitHit hit_ = RemoveLimitHit::kNone;
  int64_t work_ = 0;
  std::vector<uint8_t> in_r_;
  std::vector<uint32_t> rank_;
  std::vector<TaskId> removed_;
  std::vector<TaskId> order_;
  TaskId cycle_at_;  // a removed task on a cycle (TopoOrder false)
  std::vector<uint32_t> slot_;
  std::vector<std::vector<Entry>> sets_;
  std::vector<uint32_t> uses_;  // reads of sets_[i] still to come
  std::vector<NewEdge> new_edges_;
  absl::flat_hash_set<uint64_t> added_;
  absl::flat_hash_set<uint32_t> launched_;  // tasks given a new launch edge
};

}  // namespace

absl::StatusOr<RemoveResult> RemoveTasks(Graph& g, const Selection& s, const RemoveLimits& limits,
                                         RemoveLimitHit* hit) {
  Rewirer w(g, limits);
  absl::StatusOr<RemoveResult> r = w.Run(WithOrphanedOpTime(g, s));
  if (hit != nullptr) *hit = w.hit();
  return r;
}

}  // namespace reverie::transforms
