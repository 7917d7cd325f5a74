// File: transforms/session.h
//
// EditSession: makes a set of transformations atomic. It edits a COPY of the
// graph; Commit() validates the copy (Graph::Validate: no cycle, no dangling
// edge) and only then replaces the target, so a failed script leaves the
// caller's graph exactly as it was.
//
// It also records the schedule policy the transformations chose (Daydream's
// `schedule` override), which is not part of the graph, and reports what
// changed (ChangeSummary, by diffing the copy against the original).
//
// Invariants:
// - base() is never modified; graph() started as a copy of it, so TaskIds
//   below base().task_count() name the same tasks in both.
// - Commit() succeeds at most once; after it the session is spent.
#ifndef REVERIE_TRANSFORMS_SESSION_H_
#define REVERIE_TRANSFORMS_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "depgraph/graph.h"
#include "depgraph/simulator.h"

namespace reverie::transforms {

// What a transformation changed, counted on tasks (and edges).
struct ChangeSummary {
  int64_t added = 0;     // live tasks that did not exist before
  int64_t removed = 0;   // tasks that existed and are gone
  int64_t modified = 0;  // tasks that exist in both with any attribute changed
  int64_t edges_added = 0;
  int64_t edges_removed = 0;
  int64_t resources_added = 0;

  ChangeSummary& operator+=(const ChangeSummary& o);
  bool empty() const {
    return added == 0 && removed == 0 && modified == 0 && edges_added == 0 &&
           edges_removed == 0 && resources_added == 0;
  }
};

// `after` must have started as a copy of `before` (ids are shared).
// O(V + E): compares the task arrays element by element.
ChangeSummary Diff(const depgraph::Graph& before, const depgraph::Graph& after);

// The schedule policy chosen for unordered resources. Custom policies (a Lua
// key function) are owned elsewhere and must outlive every simulation.
struct ScheduleChoice {
  enum class Kind : uint8_t { kEarliestReady, kPriority, kCustom };
  Kind kind = Kind::kEarliestReady;
  std::shared_ptr<const depgraph::SchedulePolicy> custom;
  std::string description = "earliest_ready";

  // nullptr means the simulator's default (earliest ready).
  const depgraph::SchedulePolicy* policy() const;
};

class EditSession {
 public:
  explicit EditSession(const depgraph::Graph& base, ScheduleChoice schedule = {});
  EditSession(const EditSession&) = delete;
  EditSession& operator=(const EditSession&) = delete;

  const depgraph::Graph& base() const { return base_; }
  depgraph::Graph& graph() { return work_; }
  const depgraph::Graph& graph() const { return work_; }
  ScheduleChoice& schedule() { return schedule_; }

  // Validates the working copy when its structure may have changed.
  absl::Status Validate() const;

  // Validates, fills `changes` and moves the working copy into *target
  // (which may be the same object as base()). On error nothing is touched.
  absl::Status Commit(depgraph::Graph* target, ChangeSummary* changes);
  bool committed() const { return committed_; }

 private:
  const depgraph::Graph& base_;
  depgraph::Graph work_;
  ScheduleChoice schedule_;
  bool committed_ = false;
};

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_SESSION_H_
