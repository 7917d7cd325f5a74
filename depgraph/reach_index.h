// File: depgraph/reach_index.h
//
// ReachIndex: whether one task leads to another (through edges and the
// order of ordered resources) without searching the whole graph: the cycle
// check of every dependency or task a script adds one at a time.
//
// It keeps a level per task such that every dependency goes from a lower
// level to a higher one. A path from a to b climbs levels, so it exists
// only if level(a) < level(b), and every task on it has a level below b's:
// the search never leaves that band. Edits keep the levels true:
// - a new task takes a level between its neighbours on its resource (the
//   levels are spaced when built, so that there is room);
// - an edge whose source is not below its destination raises the
//   destination, and what follows it, just enough;
// - removing a task or an edge cannot break them.
// Built on the first query, by a topological sort. Dropped when an edit
// would cost more than a build (or closes a cycle); the next query builds
// it again, and on a graph with a cycle every search is a plain one.
#ifndef REVERIE_DEPGRAPH_REACH_INDEX_H_
#define REVERIE_DEPGRAPH_REACH_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "depgraph/ids.h"

namespace reverie::depgraph {

class Graph;

class ReachIndex {
 public:
  ReachIndex() = default;
  // A copy starts empty, as AdjacencyCache's does: it is a cache, and the
  // copy may be edited apart from the original.
  ReachIndex(const ReachIndex&) {}
  ReachIndex& operator=(const ReachIndex&) {
    Drop();
    return *this;
  }
  ReachIndex(ReachIndex&&) noexcept = default;
  ReachIndex& operator=(ReachIndex&&) noexcept = default;

  // Whether `to` depends on `from`, directly or not (true when they are
  // the same task). Both must be tasks of `g`.
  bool Reaches(const Graph& g, TaskId from, TaskId to);

  // Edits, told by Graph once made: task `t` was put on its resource; an
  // edge src -> dst was added.
  void Linked(const Graph& g, TaskId t);
  void EdgeAdded(const Graph& g, TaskId src, TaskId dst);
  void Drop();

  bool built() const { return built_; }
  // Steps taken so far (tasks and edges visited by builds, searches and
  // raises): what a caller with a budget charges for, before and after.
  int64_t work() const { return work_; }
  size_t MemoryBytes() const;

  // Test access: a task's level (built() only).
  int64_t level(TaskId t) const { return level_[t.value()]; }

 private:
  // Levels are built this far apart, so that about 20 tasks inserted one
  // after another between two neighbours still find room.
  static constexpr int64_t kSpacing = int64_t{1} << 20;

  bool Build(const Graph& g);
  // Raises `v` to at least `level` and every task after it as far as
  // needed; drops the index when it reaches `guard` (a cycle) or costs more
  // than a build.
  void Raise(const Graph& g, TaskId v, int64_t level, TaskId guard);
  // Depth-first from `from`; with `bounded`, through tasks below `to`'s level.
  bool Search(const Graph& g, TaskId from, TaskId to, bool bounded);
  void NextEpoch(size_t tasks);

  std::vector<int64_t> level_;
  std::vector<uint32_t> mark_;  // == epoch_: seen by the current search
  std::vector<uint32_t> stack_;
  uint32_t epoch_ = 0;
  bool built_ = false;
  int64_t work_ = 0;
};

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_REACH_INDEX_H_
