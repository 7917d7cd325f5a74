// File: depgraph/adjacency.h
//
// Each task's live edges, out and in, as compact arrays (Adjacency), and the
// cache Graph keeps of them (AdjacencyCache): built on first read, patched
// with the edges added and removed since while they are few.
#ifndef REVERIE_DEPGRAPH_ADJACENCY_H_
#define REVERIE_DEPGRAPH_ADJACENCY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "depgraph/ids.h"

namespace reverie::depgraph {

// Compressed adjacency of live edges: each task's edges, in edge id order,
// are one segment of out_edges / in_edges. Built lazily; after a few edge
// and task changes it is patched rather than built again (Graph::adjacency),
// with the same segments' contents, so a reader cannot tell the two apart.
struct Adjacency {
  // As built (packed), task t's out edges are out_edges[out_begin[t] ..
  // out_begin[t + 1]), the layout the simulator's passes read. Once
  // patched, a task's edges may have moved to the end of the array:
  // out_edges[out_begin[t] .. + out_size[t]); out_size is empty while
  // packed. In edges likewise.
  std::vector<uint32_t> out_begin;  // task_count() + 1 entries
  std::vector<uint32_t> out_size;   // task_count() entries once patched
  std::vector<EdgeId> out_edges;
  std::vector<uint32_t> in_begin;
  std::vector<uint32_t> in_size;
  std::vector<EdgeId> in_edges;
  size_t slack = 0;   // entries no segment holds any more (left by patches)
  size_t builds = 0;  // times built from scratch; patches do not count

  bool packed() const { return out_size.empty(); }
  uint32_t out_degree(TaskId t) const {
    const uint32_t i = t.value();
    return packed() ? out_begin[i + 1] - out_begin[i] : out_size[i];
  }
  uint32_t in_degree(TaskId t) const {
    const uint32_t i = t.value();
    return packed() ? in_begin[i + 1] - in_begin[i] : in_size[i];
  }
  // The live edges out of / into task t, in id order.
  std::span<const EdgeId> out(TaskId t) const {
    return {out_edges.data() + out_begin[t.value()], out_degree(t)};
  }
  std::span<const EdgeId> in(TaskId t) const {
    return {in_edges.data() + in_begin[t.value()], in_degree(t)};
  }
};

// The lazily built adjacency, and the edges added and removed since it was
// built, which the next Graph::adjacency() patches in while they are few
// (else it builds it again). A copy starts empty (it is a cache: the copy
// builds it on first use), so Graph's copy is the member-wise default.
class AdjacencyCache {
 public:
  struct Change {
    EdgeId edge;
    bool added;
  };

  AdjacencyCache() = default;
  AdjacencyCache(const AdjacencyCache&) {}
  AdjacencyCache& operator=(const AdjacencyCache&) {
    Invalidate();
    return *this;
  }
  AdjacencyCache(AdjacencyCache&&) noexcept = default;
  AdjacencyCache& operator=(AdjacencyCache&&) noexcept = default;

  // Built, and what changed since can be patched in.
  bool patchable() const { return built_ && !stale_ && adj_ != nullptr; }
  void Invalidate() {
    stale_ = true;
    changes_.clear();
    pending_work_ = 0;
  }
  // An edge added or removed (or tasks added: nothing to record, a patch
  // gives every new task empty segments); `limit` is how many changes are
  // worth patching rather than building again.
  // `work` is what patching it in will take (the lists it touches).
  void Record(EdgeId e, bool added, size_t limit, int64_t work) {
    if (!patchable()) return;
    if (changes_.size() >= limit) {
      Invalidate();
      return;
    }
    changes_.push_back({e, added});
    pending_work_ += work;
  }
  Adjacency& Fill() {
    if (!adj_) adj_ = std::make_unique<Adjacency>();
    built_ = true;
    stale_ = false;
    changes_.clear();
    pending_work_ = 0;
    return *adj_;
  }
  // Patch() hands the changes over and the adjacency is current again.
  std::vector<Change> TakeChanges() {
    pending_work_ = 0;
    return std::exchange(changes_, {});
  }
  int64_t pending_work() const { return pending_work_; }
  Adjacency& mutable_adjacency() { return *adj_; }
  const Adjacency& get() const { return *adj_; }
  const Adjacency* ptr() const { return adj_.get(); }
  size_t pending() const { return changes_.size(); }

 private:
  std::unique_ptr<Adjacency> adj_;
  std::vector<Change> changes_;
  int64_t pending_work_ = 0;
  bool built_ = false;
  bool stale_ = true;
};

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_ADJACENCY_H_
