#include "depgraph/reach_index.h"

#include <algorithm>
#include <limits>

#include "depgraph/graph.h"

namespace reverie::depgraph {
namespace {

// Past this, a level could overflow after further raises and insertions:
// the index is built again (levels from 0).
constexpr int64_t kLevelLimit = std::numeric_limits<int64_t>::max() / 4;

// The adjacency, counting what bringing it up to date costs (a patch or a
// build) as the index's work.
const Adjacency& ReadAdjacency(const Graph& g, int64_t* work) {
  *work += g.AdjacencyWork();
  return g.adjacency();
}

int64_t BuildWork(const Graph& g) {
  return static_cast<int64_t>(g.task_count() + g.live_edge_count()) + 1;
}

}  // namespace

void ReachIndex::Drop() {
  built_ = false;
  level_.clear();
  level_.shrink_to_fit();
}

size_t ReachIndex::MemoryBytes() const {
  return level_.capacity() * sizeof(int64_t) +
         (mark_.capacity() + stack_.capacity()) * sizeof(uint32_t);
}

bool ReachIndex::Build(const Graph& g) {
  work_ += BuildWork(g) + g.AdjacencyWork();
  level_.assign(g.task_count(), 0);
  int64_t next_level = 0;
  const TopologicalResult order = g.SortDependencies([&](TaskId t) {
    level_[t.value()] = next_level;
    next_level += kSpacing;
  });
  built_ = order.complete();  // else a cycle: searches stay plain
  if (!built_) level_.clear();
  return built_;
}

void ReachIndex::NextEpoch(size_t tasks) {
  if (mark_.size() < tasks) mark_.resize(tasks, 0);
  if (++epoch_ == 0) {  // wrapped: forget every old mark
    std::fill(mark_.begin(), mark_.end(), 0);
    epoch_ = 1;
  }
}

bool ReachIndex::Search(const Graph& g, TaskId from, TaskId to, bool bounded) {
  const Adjacency& adj = ReadAdjacency(g, &work_);
  const int64_t ceiling = bounded ? level_[to.value()] : std::numeric_limits<int64_t>::max();
  NextEpoch(g.task_count());
  stack_.clear();
  stack_.push_back(from.value());
  mark_[from.value()] = epoch_;
  bool found = false;
  while (!stack_.empty() && !found) {
    const TaskId t(stack_.back());
    stack_.pop_back();
    ++work_;
    g.ForEachDependent(adj, t, [&](TaskId d) {
      ++work_;
      if (found || mark_[d.value()] == epoch_) return;
      if (d == to) {
        found = true;
        return;
      }
      // A task at or above `to`'s level cannot lead to it.
      if (bounded && level_[d.value()] >= ceiling) return;
      mark_[d.value()] = epoch_;
      stack_.push_back(d.value());
    });
  }
  return found;
}

bool ReachIndex::Reaches(const Graph& g, TaskId from, TaskId to) {
  if (from == to) return true;
  // Edits keep a built index sized to the graph (Linked); a mismatch would
  // be tasks it was never told of, and builds it again too.
  const bool current = built_ && level_.size() == g.task_count();
  if (!current && !Build(g)) return Search(g, from, to, /*bounded=*/false);
  if (level_[from.value()] >= level_[to.value()]) return false;
  return Search(g, from, to, /*bounded=*/true);
}

void ReachIndex::Linked(const Graph& g, TaskId t) {
  if (!built_) return;
  if (level_.size() + 1 != g.task_count() || t.value() + 1 != g.task_count()) {
    Drop();  // not the one new task this index expected
    return;
  }
  const TaskId prev = g.prev_on_resource(t);
  const TaskId next = g.next_on_resource(t);
  if (!g.resource(g.resource_of(t)).ordered) {
    // No order to keep: edges added later place it.
    level_.push_back(prev.valid() ? level_[prev.value()] : 0);
    return;
  }
  int64_t level = 0;
  if (prev.valid() && next.valid()) {
    const int64_t lo = level_[prev.value()];
    const int64_t hi = level_[next.value()];
    level = hi - lo >= 2 ? lo + (hi - lo) / 2 : lo + 1;
  } else if (prev.valid()) {
    level = level_[prev.value()] + kSpacing;
  } else if (next.valid()) {
    level = level_[next.value()] - kSpacing;
  }
  if (level > kLevelLimit || level < -kLevelLimit) {
    Drop();
    return;
  }
  level_.push_back(level);
  // No room left between the neighbours: what follows moves up. The new
  // task has no edges yet, so nothing can lead back to it.
  if (next.valid() && level_[next.value()] <= level) Raise(g, next, level + 1, t);
}

void ReachIndex::EdgeAdded(const Graph& g, TaskId src, TaskId dst) {
  if (!built_) return;
  if (level_.size() != g.task_count()) {
    Drop();
    return;
  }
  const int64_t needed = level_[src.value()] + 1;
  if (level_[dst.value()] < needed) Raise(g, dst, needed, src);
}

void ReachIndex::Raise(const Graph& g, TaskId v, int64_t level, TaskId guard) {
  if (level > kLevelLimit) {
    Drop();
    return;
  }
  const Adjacency& adj = ReadAdjacency(g, &work_);
  // Worth at most a build: past that, building again is cheaper.
  const int64_t stop = work_ + BuildWork(g);
  level_[v.value()] = level;
  stack_.clear();
  stack_.push_back(v.value());
  bool dropped = false;
  while (!stack_.empty() && !dropped) {
    const TaskId t(stack_.back());
    stack_.pop_back();
    ++work_;
    const int64_t above = level_[t.value()] + 1;
    g.ForEachDependent(adj, t, [&](TaskId d) {
      ++work_;
      if (dropped || level_[d.value()] >= above) return;
      // Raising the edge's own source means it closed a cycle.
      if (d == guard || work_ > stop || above > kLevelLimit) {
        dropped = true;
        return;
      }
      level_[d.value()] = above;
      stack_.push_back(d.value());
    });
  }
  if (dropped) Drop();
}

}  // namespace reverie::depgraph
