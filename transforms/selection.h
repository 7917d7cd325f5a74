// File: transforms/selection.h
//
// Selection: the set of tasks a transformation acts on (Daydream §4.4
// "Select"). Kept as a sorted, duplicate-free vector of TaskIds (4 bytes a
// task) so that and / or / minus are linear merges and applying an edit to
// every member is a forward scan over the graph's arrays.
//
// Invariants:
// - ids() is strictly increasing.
// - A selection is a value: it does not follow later graph edits. Members that
//   a later RemoveTasks() removed stay in it; every primitive skips removed
//   tasks (Live() drops them explicitly).
#ifndef REVERIE_TRANSFORMS_SELECTION_H_
#define REVERIE_TRANSFORMS_SELECTION_H_

#include <cstddef>
#include <vector>

#include "depgraph/graph.h"

namespace reverie::transforms {

using depgraph::TaskId;

class Selection {
 public:
  Selection() = default;
  // `ids` must already be strictly increasing (what a forward scan produces).
  static Selection FromSorted(std::vector<TaskId> ids);
  // Sorts and de-duplicates.
  static Selection FromUnsorted(std::vector<TaskId> ids);
  static Selection Of(TaskId t) { return FromSorted({t}); }

  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  const std::vector<TaskId>& ids() const { return ids_; }
  std::vector<TaskId>::const_iterator begin() const { return ids_.begin(); }
  std::vector<TaskId>::const_iterator end() const { return ids_.end(); }
  TaskId operator[](size_t i) const { return ids_[i]; }

  bool Contains(TaskId t) const;

  Selection Union(const Selection& o) const;
  Selection Intersect(const Selection& o) const;
  Selection Minus(const Selection& o) const;

  // Members not removed from `g`.
  Selection Live(const depgraph::Graph& g) const;

  friend bool operator==(const Selection& a, const Selection& b) { return a.ids_ == b.ids_; }

 private:
  std::vector<TaskId> ids_;
};

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_SELECTION_H_
