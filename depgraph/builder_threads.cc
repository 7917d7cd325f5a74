// File: depgraph/builder_threads.cc
//
// Inter-thread edges (Lumos' rule; Chakra uses the same 1 ms threshold).
// Kineto does not record why a thread sat idle, but in training the long idle
// stretches of one thread are waits for another: the autograd engine thread
// waits for loss.backward() on the main thread, and the main thread waits for
// the engine to finish. When a thread has a gap longer than
// inter_thread_gap_ns between two calls, its idle stretch is the longest
// part of the gap with no activity on the thread (CPU ranges starting inside
// the gap are work: the autograd thread runs a last AccumulateGrad after its
// last launch, then idles). If that stretch is longer than
// inter_thread_gap_ns, and another thread of the process was active during
// it and its last activity (an API call or a CPU range starting or ending)
// came at most inter_thread_window_ns before the resume (the first activity
// after the stretch, often a CPU op starting before the next API call), the
// resumed call depends on that thread: an edge from the other thread's last
// API call that ended before it, with the measured hand-off as its delay
// (the other thread's untraced work after that call, the wake-up, and the
// resumed thread's CPU work up to its call). The waiting thread's gap keeps
// only its CPU work before the idle stretch, so the thread moves when the
// other thread moves. Counters: inferred_inter_thread (+ _wait_ns),
// inter_thread_gap_busy, inter_thread_gap_unexplained (+ _ns).
//
// The autograd engine hands work back and forth with the thread that called
// backward() in waits far shorter than that: gaps longer than
// autograd_gap_ns on an engine thread (one that runs
// `autograd::engine::evaluate_function` ops), or on another thread of its
// process when the engine was the last thread active, get the same edge
// (counted the same; a shorter gap without such a hand-off is not a wait).
//
// A thread's first call is anchored on the latest call of another thread that
// ended before it (any distance): otherwise a thread that started mid-trace
// would start at time 0 in the simulation. The anchor delay is the one
// measured offset the model keeps per thread (counter thread_start_anchor).
#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "depgraph/builder_internal.h"

namespace reverie::depgraph::internal {
namespace {

int32_t Delay(int64_t d) {
  return static_cast<int32_t>(std::clamp<int64_t>(d, 0, std::numeric_limits<int32_t>::max()));
}

struct Span {
  int64_t start, end;
};

// What each thread did, for the rules above: its activities (API calls, CPU
// ranges) sorted by start, their ends sorted, and whether it is (or shares a
// process with) the autograd engine.
class ThreadActivity {
 public:
  explicit ThreadActivity(const Context& ctx) : ctx_(ctx), n_(ctx.threads.size()) {
    spans_.resize(n_);
    ends_.resize(n_);
    engine_.assign(n_, false);
    has_engine_.assign(n_, false);
    absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> thread_of;
    for (uint32_t t = 0; t < n_; ++t) {
      thread_of[{ctx.threads[t].pid, ctx.threads[t].tid}] = t;
      for (uint32_t c = ctx.threads[t].begin; c < ctx.threads[t].end; ++c) {
        spans_[t].push_back({ctx.calls[c].start, ctx.calls[c].end});
        ends_[t].push_back(ctx.calls[c].end);
      }
    }
    for (const proto::Range& r : ctx.trace.events().ranges()) {
      if (r.kind() == proto::Range::GPU_ANNOTATION) continue;
      auto it = thread_of.find({r.pid(), r.tid()});
      if (it == thread_of.end()) continue;
      spans_[it->second].push_back({r.start_ns(), std::max(r.start_ns(), r.end_ns())});
      ends_[it->second].push_back(std::max(r.start_ns(), r.end_ns()));
      if (r.kind() == proto::Range::CPU_OP && !engine_[it->second]) {
        engine_[it->second] =
            ctx.trace.String(r.name_sid()).starts_with("autograd::engine::evaluate_function");
      }
    }
    // The calls come first, sorted by start; the ranges after them, sorted
    // too when the importer wrote them (one merge then, not a sort).
    absl::flat_hash_map<int64_t, uint32_t> engines_in_pid;
    for (uint32_t t = 0; t < n_; ++t) {
      const size_t calls = ctx.threads[t].end - ctx.threads[t].begin;
      SortRuns(spans_[t], {0, calls},
               [](const Span& a, const Span& b) { return a.start < b.start; });
      std::sort(ends_[t].begin() + static_cast<std::ptrdiff_t>(calls), ends_[t].end());
      SortRuns(ends_[t], {0, calls}, std::less<int64_t>());
      if (engine_[t]) ++engines_in_pid[ctx.threads[t].pid];
    }
    // Another thread of the process is the engine (linear in threads: a
    // trace may hold many).
    for (uint32_t t = 0; t < n_; ++t) {
      const auto it = engines_in_pid.find(ctx.threads[t].pid);
      has_engine_[t] = it != engines_in_pid.end() && it->second > (engine_[t] ? 1u : 0u);
    }
  }

  size_t threads() const { return n_; }
  const std::vector<Span>& spans(uint32_t t) const { return spans_[t]; }
  bool engine(uint32_t t) const { return engine_[t]; }
  bool hand_off(uint32_t t) const { return engine_[t] || has_engine_[t]; }

  // The latest activity mark (start or end) of thread u at or before t.
  int64_t LastMark(uint32_t u, int64_t t) const {
    int64_t best = std::numeric_limits<int64_t>::min();
    auto s = std::upper_bound(spans_[u].begin(), spans_[u].end(), t,
                              [](int64_t x, const Span& sp) { return x < sp.start; });
    if (s != spans_[u].begin()) best = (s - 1)->start;
    auto e = std::upper_bound(ends_[u].begin(), ends_[u].end(), t);
    if (e != ends_[u].begin()) best = std::max(best, *(e - 1));
    return best;
  }

  // The last call on thread u that ended at or before `by`, or kNone.
  uint32_t LastCall(uint32_t u, int64_t by) const {
    const ThreadInfo& th = ctx_.threads[u];
    uint32_t lo = th.begin, hi = th.end;
    // Calls on a thread are sorted by start; ends are non-decreasing except
    // for overlaps, so search by start and step back over the stragglers.
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (ctx_.calls[mid].start <= by) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (uint32_t c = lo; c > th.begin && lo - c < 64; --c) {
      if (ctx_.calls[c - 1].end <= by) return c - 1;
    }
    return kNone;
  }

 private:
  const Context& ctx_;
  size_t n_;
  std::vector<std::vector<Span>> spans_;
  std::vector<std::vector<int64_t>> ends_;
  std::vector<bool> engine_, has_engine_;
};

// Each thread's first call waits for the latest call of another thread of
// its process that ended before it.
void AnchorThreadStarts(Context& ctx, const ThreadActivity& a) {
  for (uint32_t t = 0; t < ctx.threads.size(); ++t) {
    const ThreadInfo& th = ctx.threads[t];
    if (th.begin == th.end) continue;
    const CpuCall& first = ctx.calls[th.begin];
    uint32_t anchor = kNone;
    for (uint32_t u = 0; u < ctx.threads.size(); ++u) {
      if (u == t || ctx.threads[u].pid != th.pid) continue;
      const uint32_t x = a.LastCall(u, first.start);
      if (x != kNone && (anchor == kNone || ctx.calls[x].end > ctx.calls[anchor].end)) anchor = x;
    }
    if (anchor != kNone) {
      ctx.g.AddEdge(ctx.calls[anchor].task, first.task, EdgeKind::kInterThread,
                    Delay(first.start - ctx.calls[anchor].end));
      ctx.stats.Add(BuildCounter::thread_start_anchor);
    }
  }
}

// The gap between calls c-1 and c of thread t: an edge from the thread it
// waited for, when the rules above say it waited.
void ExplainGap(Context& ctx, const ThreadActivity& a, uint32_t t, uint32_t c, int64_t min_gap) {
  const CpuCall& prev = ctx.calls[c - 1];
  const CpuCall& cur = ctx.calls[c];
  // Between the two thresholds only a hand-off with the engine counts.
  const bool short_gap = cur.start - prev.end <= ctx.opts.inter_thread_gap_ns;
  // The thread may have done CPU work without API calls in the gap (CPU
  // ops), so the wait is its longest stretch with no activity at all:
  // [idle_from, resumed). Activities that began before the gap (enclosing
  // ranges, a CPU op that spills over) do not count: they would hide it.
  const std::vector<Span>& v = a.spans(t);
  size_t k = static_cast<size_t>(
      std::upper_bound(v.begin(), v.end(), prev.end,
                       [](int64_t x, const Span& sp) { return x < sp.start; }) -
      v.begin());
  int64_t running = prev.end;
  int64_t idle_from = prev.end, resumed = cur.start, longest = -1;
  for (; k < v.size() && v[k].start <= cur.start; ++k) {
    if (v[k].start - running > longest) {
      longest = v[k].start - running;
      idle_from = running;
      resumed = v[k].start;
    }
    running = std::max(running, v[k].end);
  }
  if (longest <= (short_gap ? min_gap : ctx.opts.inter_thread_gap_ns)) {
    if (!short_gap) ctx.stats.Add(BuildCounter::inter_thread_gap_busy);  // CPU work, not a wait
    return;
  }
  // The other thread of the process whose last activity came last before
  // the resume, within the window, and after the thread went idle.
  uint32_t other = kNone;
  int64_t mark = std::numeric_limits<int64_t>::min();
  for (uint32_t u = 0; u < a.threads(); ++u) {
    if (u == t || ctx.threads[u].pid != ctx.threads[t].pid) continue;
    const int64_t m = a.LastMark(u, resumed);
    if (m > idle_from && m > mark) {
      mark = m;
      other = u;
    }
  }
  if (short_gap && other != kNone && !a.engine(t) && !a.engine(other)) return;
  if (other == kNone || resumed - mark > ctx.opts.inter_thread_window_ns) {
    if (short_gap) return;
    ctx.stats.Add(BuildCounter::inter_thread_gap_unexplained);
    ctx.stats.Add(BuildCounter::inter_thread_gap_unexplained_ns, resumed - idle_from);
    return;
  }
  const uint32_t x = a.LastCall(other, cur.start);
  if (x == kNone) return;
  ctx.g.AddEdge(ctx.calls[x].task, cur.task, EdgeKind::kInterThread, Delay(cur.start - ctx.calls[x].end));
  // The gap keeps only the CPU work done before the thread went idle.
  ctx.g.set_gap_ns(prev.task, idle_from - prev.end);
  ctx.stats.Add(BuildCounter::inferred_inter_thread);
  ctx.stats.Add(BuildCounter::inferred_inter_thread_wait_ns, resumed - idle_from);
}

}  // namespace

void AddInterThreadEdges(Context& ctx) {
  if (ctx.threads.size() < 2) return;
  const ThreadActivity activity(ctx);
  AnchorThreadStarts(ctx, activity);
  for (uint32_t t = 0; t < ctx.threads.size(); ++t) {
    const ThreadInfo& th = ctx.threads[t];
    const int64_t min_gap = activity.hand_off(t)
                                ? std::min(ctx.opts.autograd_gap_ns, ctx.opts.inter_thread_gap_ns)
                                : ctx.opts.inter_thread_gap_ns;
    for (uint32_t c = th.begin + 1; c < th.end; ++c) {
      if (ctx.calls[c].start - ctx.calls[c - 1].end > min_gap) ExplainGap(ctx, activity, t, c, min_gap);
    }
  }
}

}  // namespace reverie::depgraph::internal
