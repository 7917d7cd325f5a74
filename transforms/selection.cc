#include "transforms/selection.h"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace reverie::transforms {

Selection Selection::FromSorted(std::vector<TaskId> ids) {
  assert(std::adjacent_find(ids.begin(), ids.end(),
                            [](TaskId a, TaskId b) { return !(a < b); }) == ids.end());
  Selection s;
  s.ids_ = std::move(ids);
  return s;
}

Selection Selection::FromUnsorted(std::vector<TaskId> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  Selection s;
  s.ids_ = std::move(ids);
  return s;
}

bool Selection::Contains(TaskId t) const {
  return std::binary_search(ids_.begin(), ids_.end(), t);
}

Selection Selection::Union(const Selection& o) const {
  Selection r;
  r.ids_.reserve(ids_.size() + o.ids_.size());
  std::set_union(ids_.begin(), ids_.end(), o.ids_.begin(), o.ids_.end(),
                 std::back_inserter(r.ids_));
  return r;
}

Selection Selection::Intersect(const Selection& o) const {
  Selection r;
  r.ids_.reserve(std::min(ids_.size(), o.ids_.size()));
  std::set_intersection(ids_.begin(), ids_.end(), o.ids_.begin(), o.ids_.end(),
                        std::back_inserter(r.ids_));
  return r;
}

Selection Selection::Minus(const Selection& o) const {
  Selection r;
  r.ids_.reserve(ids_.size());
  std::set_difference(ids_.begin(), ids_.end(), o.ids_.begin(), o.ids_.end(),
                      std::back_inserter(r.ids_));
  return r;
}

Selection Selection::Live(const depgraph::Graph& g) const {
  Selection r;
  r.ids_.reserve(ids_.size());
  for (TaskId t : ids_) {
    if (t.value() < g.task_count() && !g.removed(t)) r.ids_.push_back(t);
  }
  return r;
}

}  // namespace reverie::transforms
