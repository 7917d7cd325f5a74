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

}  // namespace

void AddInterThreadEdges(Context& ctx) {
  if (ctx.threads.size() < 2) return;
  // Every thread's activities (API calls, CPU ranges) sorted by start, and
  // their ends sorted.
  struct Span {
    int64_t start, end;
  };
  const size_t n_threads = ctx.threads.size();
  std::vector<std::vector<Span>> spans(n_threads);
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> thread_of;
  for (uint32_t t = 0; t < n_threads; ++t) {
    thread_of[{ctx.threads[t].pid, ctx.threads[t].tid}] = t;
    for (uint32_t c = ctx.threads[t].begin; c < ctx.threads[t].end; ++c) {
      spans[t].push_back({ctx.calls[c].start, ctx.calls[c].end});
    }
  }
  for (const proto::Range& r : ctx.trace.events().ranges()) {
    if (r.kind() == proto::Range::GPU_ANNOTATION) continue;
    auto it = thread_of.find({r.pid(), r.tid()});
    if (it != thread_of.end()) {
      spans[it->second].push_back({r.start_ns(), std::max(r.start_ns(), r.end_ns())});
    }
  }
  // Threads of the autograd engine.
  std::vector<bool> engine(n_threads, false);
  for (const proto::Range& r : ctx.trace.events().ranges()) {
    if (r.kind() != proto::Range::CPU_OP) continue;
    auto it = thread_of.find({r.pid(), r.tid()});
    if (it == thread_of.end() || engine[it->second]) continue;
    engine[it->second] = ctx.trace.String(r.name_sid()).starts_with("autograd::engine::evaluate_function");
  }
  std::vector<bool> has_engine(n_threads, false);  // a thread of a process with an engine thread
  for (uint32_t t = 0; t < n_threads; ++t) {
    for (uint32_t u = 0; u < n_threads; ++u) {
      if (engine[u] && u != t && ctx.threads[u].pid == ctx.threads[t].pid) has_engine[t] = true;
    }
  }
  std::vector<std::vector<int64_t>> ends(n_threads);
  for (uint32_t t = 0; t < n_threads; ++t) {
    std::sort(spans[t].begin(), spans[t].end(),
              [](const Span& a, const Span& b) { return a.start < b.start; });
    for (const Span& sp : spans[t]) ends[t].push_back(sp.end);
    std::sort(ends[t].begin(), ends[t].end());
  }
  // The latest activity mark (start or end) of thread u at or before t.
  auto last_mark = [&](uint32_t u, int64_t t) {
    int64_t best = std::numeric_limits<int64_t>::min();
    auto s = std::upper_bound(spans[u].begin(), spans[u].end(), t,
                              [](int64_t x, const Span& sp) { return x < sp.start; });
    if (s != spans[u].begin()) best = (s - 1)->start;
    auto e = std::upper_bound(ends[u].begin(), ends[u].end(), t);
    if (e != ends[u].begin()) best = std::max(best, *(e - 1));
    return best;
  };
  // The last call on thread u that ended at or before `by`, or kNone.
  auto last_call = [&](uint32_t u, int64_t by) {
    const ThreadInfo& th = ctx.threads[u];
    uint32_t lo = th.begin, hi = th.end;
    // Calls on a thread are sorted by start; ends are non-decreasing except
    // for overlaps, so search by start and step back over the stragglers.
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (ctx.calls[mid].start <= by) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (uint32_t c = lo; c > th.begin && lo - c < 64; --c) {
      if (ctx.calls[c - 1].end <= by) return c - 1;
    }
    return kNone;
  };
  for (uint32_t t = 0; t < ctx.threads.size(); ++t) {
    const ThreadInfo& th = ctx.threads[t];
    if (th.begin == th.end) continue;
    // Thread start anchor.
    const CpuCall& first = ctx.calls[th.begin];
    uint32_t anchor = kNone;
    for (uint32_t u = 0; u < ctx.threads.size(); ++u) {
      if (u == t || ctx.threads[u].pid != th.pid) continue;
      const uint32_t x = last_call(u, first.start);
      if (x != kNone && (anchor == kNone || ctx.calls[x].end > ctx.calls[anchor].end)) anchor = x;
    }
    if (anchor != kNone) {
      ctx.g.AddEdge(ctx.calls[anchor].task, first.task, EdgeKind::kInterThread,
                    Delay(first.start - ctx.calls[anchor].end));
      ctx.stats.Add(BuildCounter::thread_start_anchor);
    }
  }
  // Long gaps between calls. The thread may have done CPU work without API
  // calls in the gap (CPU ops), so the wait is its longest stretch with no
  // activity at all: [idle_from, resumed).
  for (uint32_t t = 0; t < n_threads; ++t) {
    const ThreadInfo& th = ctx.threads[t];
    const bool hand_off = engine[t] || has_engine[t];
    const int64_t min_gap =
        hand_off ? std::min(ctx.opts.autograd_gap_ns, ctx.opts.inter_thread_gap_ns) : ctx.opts.inter_thread_gap_ns;
    for (uint32_t c = th.begin + 1; c < th.end; ++c) {
      const CpuCall& prev = ctx.calls[c - 1];
      const CpuCall& cur = ctx.calls[c];
      if (cur.start - prev.end <= min_gap) continue;
      // Between the two thresholds only a hand-off with the engine counts.
      const bool short_gap = cur.start - prev.end <= ctx.opts.inter_thread_gap_ns;
      const std::vector<Span>& v = spans[t];
      size_t k = static_cast<size_t>(
          std::upper_bound(v.begin(), v.end(), prev.end,
                           [](int64_t x, const Span& sp) { return x < sp.start; }) -
          v.begin());
      // Activities that began before the gap (enclosing ranges, a CPU op that
      // spills over) do not count: they would hide the wait.
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
        continue;
      }
      // The other thread of the process whose last activity came last before
      // the resume, within the window, and after the thread went idle.
      uint32_t other = kNone;
      int64_t mark = std::numeric_limits<int64_t>::min();
      for (uint32_t u = 0; u < n_threads; ++u) {
        if (u == t || ctx.threads[u].pid != th.pid) continue;
        const int64_t m = last_mark(u, resumed);
        if (m > idle_from && m > mark) {
          mark = m;
          other = u;
        }
      }
      if (short_gap && other != kNone && !engine[t] && !engine[other]) continue;
      if (other == kNone || resumed - mark > ctx.opts.inter_thread_window_ns) {
        if (short_gap) continue;
        ctx.stats.Add(BuildCounter::inter_thread_gap_unexplained);
        ctx.stats.Add(BuildCounter::inter_thread_gap_unexplained_ns, resumed - idle_from);
        continue;
      }
      const uint32_t x = last_call(other, cur.start);
      if (x == kNone) continue;
      ctx.g.AddEdge(ctx.calls[x].task, cur.task, EdgeKind::kInterThread,
                    Delay(cur.start - ctx.calls[x].end));
      // The gap keeps only the CPU work done before the thread went idle.
      ctx.g.set_gap_ns(prev.task, idle_from - prev.end);
      ctx.stats.Add(BuildCounter::inferred_inter_thread);
      ctx.stats.Add(BuildCounter::inferred_inter_thread_wait_ns, resumed - idle_from);
    }
  }
}

}  // namespace reverie::depgraph::internal
