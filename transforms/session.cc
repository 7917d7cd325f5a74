#include "transforms/session.h"

#include "base/status_macros.h"

namespace reverie::transforms {

using depgraph::Graph;
using depgraph::TaskId;

ChangeSummary& ChangeSummary::operator+=(const ChangeSummary& o) {
  added += o.added;
  removed += o.removed;
  modified += o.modified;
  edges_added += o.edges_added;
  edges_removed += o.edges_removed;
  resources_added += o.resources_added;
  return *this;
}

ChangeSummary Diff(const Graph& before, const Graph& after) {
  ChangeSummary c;
  const size_t old_n = before.task_count();
  for (uint32_t i = 0; i < after.task_count(); ++i) {
    const TaskId t(i);
    if (i >= old_n) {
      if (!after.removed(t)) ++c.added;
      continue;
    }
    if (before.removed(t)) continue;
    if (after.removed(t)) {
      ++c.removed;
      continue;
    }
    if (before.duration_ns(t) != after.duration_ns(t) || before.gap_ns(t) != after.gap_ns(t) ||
        before.priority(t) != after.priority(t) || before.name_id(t) != after.name_id(t) ||
        before.resource_of(t) != after.resource_of(t) || before.layer_of(t) != after.layer_of(t) ||
        before.phase(t) != after.phase(t) || before.step_of(t) != after.step_of(t) ||
        before.bytes(t) != after.bytes(t) || before.kind(t) != after.kind(t)) {
      ++c.modified;
    }
  }
  const std::vector<depgraph::Edge>& be = before.edges();
  const std::vector<depgraph::Edge>& ae = after.edges();
  for (size_t i = 0; i < ae.size(); ++i) {
    if (i >= be.size()) {
      if (!ae[i].removed) ++c.edges_added;
    } else if (!be[i].removed && ae[i].removed) {
      ++c.edges_removed;
    } else if (!be[i].removed && ae[i].delay_ns != be[i].delay_ns) {
      // A changed delay is a changed dependency: count its target as modified
      // only through the edge counters (the task itself is unchanged).
      ++c.edges_added;
      ++c.edges_removed;
    }
  }
  c.resources_added = static_cast<int64_t>(after.resource_count()) -
                      static_cast<int64_t>(before.resource_count());
  return c;
}

const depgraph::SchedulePolicy* ScheduleChoice::policy() const {
  static const depgraph::PriorityPolicy kPriority;
  switch (kind) {
    case Kind::kEarliestReady: return nullptr;
    case Kind::kPriority: return &kPriority;
    case Kind::kCustom: return custom.get();
  }
  return nullptr;
}

EditSession::EditSession(const Graph& base, ScheduleChoice schedule)
    : base_(base), schedule_(std::move(schedule)) {
  // Room for what a script adds before the copy: a copy's columns are
  // exactly full, and the first task or edge added would copy each again
  // (and fault in twice its pages). Assignment keeps the room.
  auto with_room = [](size_t n) { return n + n / 8 + 64; };
  work_.Reserve(with_room(base.task_count()), with_room(base.edge_count()));
  work_ = base;
}

absl::Status EditSession::Validate() const {
  // Durations, gaps and priorities cannot break the structure; only skip the
  // O(V + E) check when no task, edge or resource was added or removed.
  const bool same_shape = work_.task_count() == base_.task_count() &&
                          work_.live_task_count() == base_.live_task_count() &&
                          work_.edge_count() == base_.edge_count() &&
                          work_.live_edge_count() == base_.live_edge_count() &&
                          work_.resource_count() == base_.resource_count();
  if (same_shape) return absl::OkStatus();
  return work_.Validate();
}

absl::Status EditSession::Commit(Graph* target, ChangeSummary* changes) {
  if (committed_) return absl::FailedPreconditionError("edit session already committed");
  REVERIE_RETURN_IF_ERROR(Validate());
  ChangeSummary c = Diff(base_, work_);
  if (changes != nullptr) *changes = c;
  *target = std::move(work_);
  committed_ = true;
  return absl::OkStatus();
}

}  // namespace reverie::transforms
