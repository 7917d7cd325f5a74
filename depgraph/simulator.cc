// File: depgraph/simulator.cc
//
// Daydream's Algorithm 1 as an event-driven simulation.
//
// Why two frontiers: on an ordered resource (thread, stream) a task's start is
// fully determined once its parents are done: max(prev.end + prev.gap,
// parent.end + delay). The order in which such tasks are taken from the
// frontier cannot change any time, so they go through a LIFO work stack in
// O(1). Only an unordered resource (communication channel) has a real choice
// (Algorithm 1's schedule()), and that choice must see every task that is
// ready by the time the channel frees up; so channel arrivals and "channel
// free" decisions are events in a time-ordered heap, processed in time order,
// with each channel keeping its own ready queue ordered by the SchedulePolicy.
// Everything an event causes happens at or after the event's time, so when a
// channel picks at time T every arrival at or before T is already queued.
//
// Memory: besides the result's start_ns/end_ns (16 bytes a task), nothing per
// task. While a task waits, start_ns holds its ready time so far and end_ns
// holds kPending + (number of unfinished parents); both become the real
// times when it starts.
#include "depgraph/simulator.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "base/sv.h"

namespace reverie::depgraph {
namespace {

// end_ns of a live task that has not started: kPending + unfinished parents.
constexpr int64_t kPending = std::numeric_limits<int64_t>::min() / 2;

enum EventType : uint32_t {
  kArrival = 0,   // a channel task became ready: queue it on its channel
  kDispatch = 1,  // a channel may be free: start its best queued task
};

// Arrivals at time T are handled before dispatches at time T so that a
// channel choosing at T sees every task ready at T.
struct Event {
  int64_t time;
  uint32_t type;
  uint32_t id;  // task for arrivals, resource for dispatches
};
struct EventAfter {
  bool operator()(const Event& a, const Event& b) const {
    if (a.time != b.time) return a.time > b.time;
    if (a.type != b.type) return a.type > b.type;
    return a.id > b.id;
  }
};

struct Queued {
  int64_t key;
  uint32_t task;
};
struct QueuedAfter {
  bool operator()(const Queued& a, const Queued& b) const {
    return a.key != b.key ? a.key > b.key : a.task > b.task;
  }
};

struct Channel {
  std::vector<Queued> queue;  // heap by (policy key, task id)
  int64_t free_at = 0;
  bool dispatch_pending = false;
};

// kAllOrdered: every resource is ordered (no communication channel), the
// common case: the hot loops then read no task's resource at all and never
// touch the event heap (docs/PERFORMANCE.md measures the difference).
template <bool kAllOrdered>
class Run {
 public:
  Run(const Graph& g, const SchedulePolicy& policy, SimResult* r)
      : g_(g),
        policy_(policy),
        adj_(g.packed_adjacency()),
        edges_(g.edges()),
        start_(r->start_ns),
        end_(r->end_ns) {}

  absl::Status Execute() {
    const uint32_t n = static_cast<uint32_t>(g_.task_count());
    // Sized, not filled: the loop below writes every entry once (a reused
    // result buffer costs no extra pass over 16 bytes a task).
    start_.resize(n);
    end_.resize(n);
    if constexpr (!kAllOrdered) {
      ordered_.resize(g_.resource_count());
      channels_.resize(g_.resource_count());
      for (uint32_t r = 0; r < g_.resource_count(); ++r) {
        ordered_[r] = g_.resource(ResourceId(r)).ordered;
      }
    }
    // Count parents: the live edges into the task (the adjacency holds only
    // edges between live tasks: Graph removes a task's edges with it and
    // refuses an edge to a removed task), plus the resource predecessor.
    // A graph nothing was removed from (every freshly built one) skips the
    // flags column.
    const bool any_removed = g_.live_task_count() != n;
    for (uint32_t t = 0; t < n; ++t) {
      const TaskId id(t);
      if (any_removed && g_.removed(id)) {
        start_[t] = -1;
        end_[t] = -1;
        continue;
      }
      ++live_;
      int64_t parents = adj_.in_begin[t + 1] - adj_.in_begin[t];  // packed
      if (g_.prev_on_resource(id).valid() && Ordered(id)) ++parents;
      start_[t] = 0;
      end_[t] = kPending + parents;
      // The count is complete (it is local to t): a source is ready now.
      // The order sources are found in changes no time (the stack's order
      // is free on ordered resources; channels choose in event order).
      if (end_[t] == kPending) BecomeReady(t);
    }
    Drain();
    while (!events_.empty()) {
      std::pop_heap(events_.begin(), events_.end(), EventAfter());
      const Event ev = events_.back();
      events_.pop_back();
      now_ = ev.time;
      if (ev.type == kArrival) {
        Arrive(ev.id);
      } else {
        Dispatch(ev.id);
      }
      Drain();
    }
    if (started_ != live_) return CycleError();
    return absl::OkStatus();
  }

  // The latest end and earliest start of the live tasks (0 and 0 when none).
  int64_t makespan() const { return makespan_; }
  int64_t first_start() const { return started_ == 0 ? 0 : first_start_; }

 private:
  static int64_t NonNegative(int64_t v) { return v < 0 ? 0 : v; }

  [[gnu::always_inline]] bool Ordered(TaskId t) const {
    if constexpr (kAllOrdered) {
      return true;
    } else {
      return ordered_[g_.resource_of(t).value()];
    }
  }

  // Inlined: called once per task on the hot path (docs/PERFORMANCE.md).
  [[gnu::always_inline]] void BecomeReady(uint32_t t) {
    if (Ordered(TaskId(t))) {
      stack_.push_back(t);
    } else {
      Push({std::max(start_[t], now_), kArrival, t});
    }
  }

  void Push(Event e) {
    events_.push_back(e);
    std::push_heap(events_.begin(), events_.end(), EventAfter());
  }

  // Starts every ordered-resource task whose parents are all done.
  void Drain() {
    while (!stack_.empty()) {
      const uint32_t t = stack_.back();
      stack_.pop_back();
      Start(t, start_[t]);
    }
  }

  [[gnu::always_inline]] void Start(uint32_t t, int64_t at) {
    const TaskId id(t);
    start_[t] = at;
    // Saturating (base/checked_math.h): durations are bounded, but a path
    // of enough of them must stop at a huge time rather than wrap around.
    const int64_t end = SatAddNs(at, NonNegative(g_.duration_ns(id)));
    end_[t] = end;
    ++started_;
    // The run's span, kept here rather than in a second pass over the tasks.
    if (end > makespan_) makespan_ = end;
    if (at < first_start_) first_start_ = at;
    const std::vector<Edge>& edges = edges_;
    for (const auto edge : adj_.out(TaskId(t))) {
      const Edge& e = edges[edge.value()];
      Release(e.dst.value(), SatAddNs(end, e.delay_ns));
    }
    const int64_t free_at = SatAddNs(end, NonNegative(g_.gap_ns(id)));
    if (Ordered(id)) {
      const TaskId next = g_.next_on_resource(id);
      if (next.valid()) Release(next.value(), free_at);
    } else {
      const uint32_t r = g_.resource_of(id).value();
      Channel& ch = channels_[r];
      ch.free_at = free_at;
      ch.dispatch_pending = true;
      Push({free_at, kDispatch, r});
    }
  }

  // `c` is live: edges join live tasks, and a live task's neighbours on its
  // resource are live (removal unlinks).
  [[gnu::always_inline]] void Release(uint32_t c, int64_t ready) {
    if (ready > start_[c]) start_[c] = ready;
    if (--end_[c] == kPending) BecomeReady(c);
  }

  void Arrive(uint32_t t) {
    const uint32_t r = g_.resource_of(TaskId(t)).value();
    Channel& ch = channels_[r];
    ch.queue.push_back({policy_.Key(g_, TaskId(t), start_[t]), t});
    std::push_heap(ch.queue.begin(), ch.queue.end(), QueuedAfter());
    if (!ch.dispatch_pending) {
      ch.dispatch_pending = true;
      Push({std::max(now_, ch.free_at), kDispatch, r});
    }
  }

  void Dispatch(uint32_t r) {
    Channel& ch = channels_[r];
    ch.dispatch_pending = false;
    if (ch.queue.empty()) return;
    std::pop_heap(ch.queue.begin(), ch.queue.end(), QueuedAfter());
    const uint32_t t = ch.queue.back().task;
    ch.queue.pop_back();
    Start(t, std::max(now_, ch.free_at));
  }

  // Walks from a task that never started through parents that never started
  // until one repeats: that task lies on a cycle.
  absl::Status CycleError() {
    const uint32_t n = static_cast<uint32_t>(g_.task_count());
    std::vector<uint32_t> parent_in(n, UINT32_MAX);  // one unstarted parent per task
    const std::vector<Edge>& edges = edges_;
    for (const Edge& e : edges) {
      if (e.removed || g_.removed(e.src) || g_.removed(e.dst)) continue;
      if (end_[e.src.value()] < -1 && end_[e.dst.value()] < -1) {
        parent_in[e.dst.value()] = e.src.value();
      }
    }
    uint32_t t = UINT32_MAX;
    for (uint32_t i = 0; i < n; ++i) {
      if (end_[i] >= -1) continue;
      if (t == UINT32_MAX) t = i;
      const TaskId p = g_.prev_on_resource(TaskId(i));
      if (Ordered(TaskId(i)) && p.valid() && end_[p.value()] < -1) {
        parent_in[i] = p.value();
      }
    }
    std::vector<bool> seen(n, false);
    while (t != UINT32_MAX && !seen[t]) {
      seen[t] = true;
      t = parent_in[t];
    }
    if (t == UINT32_MAX) {
      return absl::FailedPreconditionError("dependency cycle: some tasks never became ready");
    }
    return depgraph::CycleError(g_, TaskId(t));
  }

  const Graph& g_;
  const SchedulePolicy& policy_;
  const Adjacency& adj_;
  const std::vector<Edge>& edges_;
  std::vector<int64_t>& start_;
  std::vector<int64_t>& end_;
  std::vector<uint8_t> ordered_;
  std::vector<Channel> channels_;
  std::vector<uint32_t> stack_;
  std::vector<Event> events_;
  int64_t now_ = 0;
  int64_t makespan_ = 0;
  int64_t first_start_ = std::numeric_limits<int64_t>::max();
  size_t live_ = 0;
  size_t started_ = 0;
};

}  // namespace

double SimResult::mean_step_ns() const { return MeanStepNs(steps); }

namespace {

void FillSteps(const Graph& g, const std::vector<StepTime>* frame, SimResult* r) {
  r->steps = frame != nullptr ? StepSpansInFrame(g, r->start_ns, r->end_ns, *frame)
                                   : std::move(StepSpans(g, r->start_ns, r->end_ns, {}, 1)[0]);
}

}  // namespace

std::vector<std::vector<StepTime>> StepSpansByGroup(
    const Graph& graph, const SimResult& sim, std::span<const int32_t> group_of_resource,
    int groups, std::span<const std::vector<StepTime>> frames) {
  return StepSpans(graph, sim.start_ns, sim.end_ns, group_of_resource, groups, frames);
}

namespace {

template <bool kAllOrdered>
absl::Status RunOnce(const Graph& graph, const SchedulePolicy& policy, SimResult* result) {
  Run<kAllOrdered> run(graph, policy, result);
  REVERIE_RETURN_IF_ERROR(run.Execute());
  result->makespan_ns = run.makespan();
  result->first_start_ns = run.first_start();
  return absl::OkStatus();
}

}  // namespace

absl::Status SimulateInto(const Graph& graph, const SimOptions& options, SimResult* result) {
  static const EarliestReadyPolicy kDefaultPolicy;
  const SchedulePolicy& policy = options.policy ? *options.policy : kDefaultPolicy;
  bool all_ordered = true;
  for (uint32_t r = 0; r < graph.resource_count(); ++r) {
    all_ordered = all_ordered && graph.resource(ResourceId(r)).ordered;
  }
  if (all_ordered) {
    REVERIE_RETURN_IF_ERROR(RunOnce<true>(graph, policy, result));
  } else {
    REVERIE_RETURN_IF_ERROR(RunOnce<false>(graph, policy, result));
  }
  FillSteps(graph, options.step_frame, result);
  return absl::OkStatus();
}

absl::StatusOr<SimResult> Simulate(const Graph& graph, const SimOptions& options) {
  SimResult result;
  REVERIE_RETURN_IF_ERROR(SimulateInto(graph, options, &result));
  return result;
}

}  // namespace reverie::depgraph
