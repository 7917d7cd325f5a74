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
    IndexProcesses();
  }

  const std::vector<Span>& spans(uint32_t t) const { return spans_[t]; }
  bool engine(uint32_t t) const { return engine_[t]; }
  bool hand_off(uint32_t t) const { return engine_[t] || has_engine_[t]; }

  // The thread of t's process other than t whose last activity mark at or
  // before r came last (the lowest-numbered such thread, as a loop over
  // the threads in order would pick), and that mark; kNone (and INT64_MIN)
  // when no other thread has a mark in (after, r].
  std::pair<uint32_t, int64_t> LatestOther(uint32_t t, int64_t r, int64_t after) const {
    const uint32_t p = process_[t];
    if (!Indexed(p)) {
      std::pair<uint32_t, int64_t> best = {kNone, std::numeric_limits<int64_t>::min()};
      for (uint32_t u : threads_of_[p]) {
        if (u == t) continue;
        const int64_t m = LastMark(u, r);
        if (m > after && m > best.second) best = {u, m};
      }
      return best;
    }
    const std::vector<Mark>& m = marks_[p];
    auto it = std::upper_bound(m.begin(), m.end(), r,
                               [](int64_t x, const Mark& k) { return x < k.time; });
    while (it != m.begin()) {
      --it;
      if (it->time <= after) break;
      if (it->thread != t) return {it->thread, it->time};
    }
    return {kNone, std::numeric_limits<int64_t>::min()};
  }

  // Among the other threads of t's process, the LastCall(u, by) that ended
  // last (the lowest-numbered thread's on a tie), or kNone. `seen` (one
  // slot per thread) and `stamp` (new for each query) mark the threads
  // already asked.
  uint32_t LatestOtherCall(uint32_t t, int64_t by, std::vector<uint32_t>& seen,
                           uint32_t stamp) const {
    const uint32_t p = process_[t];
    if (!Indexed(p)) {
      uint32_t best = kNone;
      for (uint32_t u : threads_of_[p]) {
        if (u == t) continue;
        const uint32_t x = LastCall(u, by);
        if (x != kNone && (best == kNone || ctx_.calls[x].end > ctx_.calls[best].end)) best = x;
      }
      return best;
    }
    const std::vector<CallEnd>& e = call_ends_[p];
    auto it = std::upper_bound(e.begin(), e.end(), by,
                               [](int64_t x, const CallEnd& k) { return x < k.end; });
    uint32_t best = kNone, best_thread = 0;
    int64_t best_end = 0;
    while (it != e.begin()) {
      --it;
      // Every thread not asked yet has its calls here or earlier: none of
      // them can end later, or as late on a lower-numbered thread.
      if (best != kNone &&
          (it->end < best_end || (it->end == best_end && it->thread > best_thread))) {
        break;
      }
      const uint32_t u = it->thread;
      if (u == t || seen[u] == stamp) continue;
      seen[u] = stamp;
      const uint32_t x = LastCall(u, by);
      if (x == kNone) continue;
      const int64_t end = ctx_.calls[x].end;
      if (best == kNone || end > best_end || (end == best_end && u < best_thread)) {
        best = x, best_end = end, best_thread = u;
      }
    }
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
  // Processes with more threads than this are indexed (IndexProcesses);
  // the others are asked thread by thread, which costs no memory and
  // little time at their size.
  static constexpr size_t kIndexedThreads = 16;

  bool Indexed(uint32_t p) const { return threads_of_[p].size() > kIndexedThreads; }

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

  struct Mark {
    int64_t time;
    uint32_t thread;
  };
  struct CallEnd {
    int64_t end;
    uint32_t thread;
    uint32_t call;
  };

  // Per process with many threads, every activity mark (a span's start, an
  // end) of its threads and every call's end, by time and, at one time, by
  // thread from the highest: a scan back from a time meets the lowest
  // thread first. A query then scans back from its time instead of looping
  // over the process's threads, which a trace may hold thousands of. Each
  // thread's marks are one sorted run already: the runs are merged, highest
  // thread first, and the merges keep that order at one time.
  void IndexProcesses() {
    absl::flat_hash_map<int64_t, uint32_t> process_of_pid;
    process_.resize(n_);
    for (uint32_t t = 0; t < n_; ++t) {
      const auto [it, added] = process_of_pid.try_emplace(
          ctx_.threads[t].pid, static_cast<uint32_t>(threads_of_.size()));
      if (added) threads_of_.emplace_back();
      process_[t] = it->second;
      threads_of_[it->second].push_back(t);
    }
    marks_.resize(threads_of_.size());
    call_ends_.resize(threads_of_.size());
    for (uint32_t p = 0; p < threads_of_.size(); ++p) {
      if (!Indexed(p)) continue;
      std::vector<Mark>& m = marks_[p];
      std::vector<CallEnd>& e = call_ends_[p];
      std::vector<size_t> mark_runs, end_runs;
      size_t marks = 0, calls = 0;
      for (uint32_t t : threads_of_[p]) {
        marks += spans_[t].size() + ends_[t].size();
        calls += ctx_.threads[t].end - ctx_.threads[t].begin;
      }
      m.reserve(marks);
      e.reserve(calls);
      for (auto t = threads_of_[p].rbegin(); t != threads_of_[p].rend(); ++t) {
        const std::vector<Span>& sp = spans_[*t];
        const std::vector<int64_t>& en = ends_[*t];
        mark_runs.push_back(m.size());
        for (size_t i = 0, j = 0; i < sp.size() || j < en.size();) {
          const bool start = j == en.size() || (i < sp.size() && sp[i].start <= en[j]);
          m.push_back({start ? sp[i++].start : en[j++], *t});
        }
        end_runs.push_back(e.size());
        for (uint32_t c = ctx_.threads[*t].begin; c < ctx_.threads[*t].end; ++c) {
          e.push_back({ctx_.calls[c].end, *t, c});
        }
      }
      SortRuns(m, std::move(mark_runs),
               [](const Mark& a, const Mark& b) { return a.time < b.time; });
      SortRuns(e, std::move(end_runs),
               [](const CallEnd& a, const CallEnd& b) { return a.end < b.end; });
    }
  }

  const Context& ctx_;
  size_t n_;
  std::vector<std::vector<Span>> spans_;
  std::vector<std::vector<int64_t>> ends_;  // the spans' ends, sorted
  std::vector<bool> engine_, has_engine_;
  std::vector<uint32_t> process_;  // thread -> index into threads_of_, marks_, call_ends_
  std::vector<std::vector<uint32_t>> threads_of_;  // per process, ascending
  std::vector<std::vector<Mark>> marks_;
  std::vector<std::vector<CallEnd>> call_ends_;
};

// Each thread's first call waits for the latest call of another thread of
// its process that ended before it.
void AnchorThreadStarts(Context& ctx, const ThreadActivity& a) {
  std::vector<uint32_t> seen(ctx.threads.size(), 0);
  for (uint32_t t = 0; t < ctx.threads.size(); ++t) {
    const ThreadInfo& th = ctx.threads[t];
    if (th.begin == th.end) continue;
    const CpuCall& first = ctx.calls[th.begin];
    const uint32_t anchor = a.LatestOtherCall(t, first.start, seen, t + 1);
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
  const auto [other, mark] = a.LatestOther(t, resumed, idle_from);
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
