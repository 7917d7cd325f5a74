// File: depgraph/builder.cc
//
// BuildGraph() and the passes that create tasks and launch edges. See
// builder.h for the model and builder_internal.h for the shared state.
#include "depgraph/builder.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/median.h"
#include "base/sv.h"
#include "depgraph/builder_internal.h"

namespace reverie::depgraph {
namespace internal {

int32_t ClampDelay(int64_t d) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(std::clamp(d, -kMax, kMax));
}

namespace {

TaskKind KindOf(const proto::GpuActivity& a) {
  switch (a.kind()) {
    case proto::GpuActivity::MEMCPY: return TaskKind::kMemcpy;
    case proto::GpuActivity::MEMSET: return TaskKind::kMemset;
    default: return TaskKind::kKernel;
  }
}

}  // namespace

uint32_t Context::LastSubmittedBefore(uint32_t s, int64_t t) const {
  const std::vector<int64_t>& sub = streams[s].submitted;
  const auto it = std::lower_bound(sub.begin(), sub.end(), t);
  if (it == sub.begin()) return kNone;
  return streams[s].begin + static_cast<uint32_t>(it - sub.begin()) - 1;
}

uint32_t Context::FirstSubmittedFrom(uint32_t s, int64_t t) const {
  const std::vector<int64_t>& sub = streams[s].submitted;
  const auto it = std::lower_bound(sub.begin(), sub.end(), t);
  if (it == sub.end()) return kNone;
  return streams[s].begin + static_cast<uint32_t>(it - sub.begin());
}

uint32_t Context::LastEndingBy(uint32_t s, int64_t t) const {
  // Ops on one stream do not overlap, so their ends are sorted like their starts.
  const StreamInfo& st = streams[s];
  uint32_t lo = st.begin, hi = st.end;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (ops[mid].end <= t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo == st.begin ? kNone : lo - 1;
}

void Context::AddSyncEdge(uint32_t o, uint32_t c) {
  g.AddEdge(ops[o].task, calls[c].task, EdgeKind::kSync, 0);
  wait_end[c] = std::max(wait_end[c], ops[o].end);
}

// Calls (and GPU activities) of equal times are ordered by correlation id,
// the order the runtime issued them, then by their place in the file: the
// graph does not depend on the order the profiler wrote its events in
// (issue 29, metamorphic tests: two calls of one instant swapped names).
void BuildCpuTasks(Context& ctx) {
  const auto& api = ctx.trace.events().api_calls();
  struct Key {
    int64_t pid, tid, start, neg_end;
    uint64_t corr;
    uint32_t idx;
  };
  std::vector<Key> keys;
  keys.reserve(api.size());
  for (int i = 0; i < api.size(); ++i) {
    const proto::ApiCall& a = api[i];
    if (a.end_ns() < a.start_ns()) {
      ctx.stats.Add(BuildCounter::negative_duration_api_call);
    }
    keys.push_back({a.pid(), a.tid(), a.start_ns(), -std::max(a.end_ns(), a.start_ns()),
                    a.correlation_id(), static_cast<uint32_t>(i)});
  }
  const std::vector<size_t> threads =
      GroupStable(keys, [](const Key& k) { return std::pair(k.pid, k.tid); });
  for (size_t t = 0; t + 1 < threads.size(); ++t) {
    SortNatural(keys.begin() + threads[t], keys.begin() + threads[t + 1],
                [](const Key& x, const Key& y) {
                  return std::tie(x.start, x.neg_end, x.corr, x.idx) <
                         std::tie(y.start, y.neg_end, y.corr, y.idx);
                });
  }
  ctx.calls.reserve(keys.size());
  for (size_t i = 0; i < keys.size();) {
    ThreadInfo th;
    th.pid = keys[i].pid;
    th.tid = keys[i].tid;
    th.resource = ctx.g.AddResource({ResourceKind::kCpuThread, th.pid, th.tid, -1,
                                     absl::StrCat("thread ", th.tid, " (pid ", th.pid, ")"),
                                     true});
    th.begin = static_cast<uint32_t>(ctx.calls.size());
    const uint32_t thread_index = static_cast<uint32_t>(ctx.threads.size());
    for (; i < keys.size() && keys[i].pid == th.pid && keys[i].tid == th.tid; ++i) {
      const Key& k = keys[i];
      const int64_t end = -k.neg_end;
      const uint64_t corr = api[static_cast<int>(k.idx)].correlation_id();
      if (!ctx.calls.empty() && ctx.calls.size() > th.begin) {
        CpuCall& outer = ctx.calls.back();
        if (k.start >= outer.start && end <= outer.end) {
          // A driver call inside its runtime call: the same CPU time, one task.
          ctx.stats.Add(BuildCounter::nested_api_call);
          if (corr != 0) ctx.call_by_corr.emplace(corr, static_cast<uint32_t>(ctx.calls.size() - 1));
          continue;
        }
        if (k.start < outer.end) ctx.stats.Add(BuildCounter::overlapping_api_call);
      }
      CpuCall c;
      c.start = k.start;
      c.end = end;
      c.api = k.idx;
      c.thread = thread_index;
      const uint32_t index = static_cast<uint32_t>(ctx.calls.size());
      if (corr != 0 && !ctx.call_by_corr.emplace(corr, index).second) {
        ctx.call_by_corr[corr] = index;
        ctx.stats.Add(BuildCounter::duplicate_correlation);
      }
      ctx.calls.push_back(c);
    }
    th.end = static_cast<uint32_t>(ctx.calls.size());
    ctx.threads.push_back(th);
  }
  for (const ThreadInfo& th : ctx.threads) {
    for (uint32_t c = th.begin; c < th.end; ++c) {
      CpuCall& call = ctx.calls[c];
      TaskSpec s{
          .kind = TaskKind::kCpuApi, .name = ctx.ApiName(call), .resource = th.resource,
          .duration_ns = call.end - call.start,
          .gap_ns = c + 1 < th.end ? std::max<int64_t>(0, ctx.calls[c + 1].start - call.end) : 0,
          .measured_start_ns = call.start};
      call.task = ctx.g.AppendTask(s);
    }
  }
  ctx.wait_end.assign(ctx.calls.size(), std::numeric_limits<int64_t>::min());
  ctx.own_end.resize(ctx.calls.size());
  for (size_t c = 0; c < ctx.calls.size(); ++c) ctx.own_end[c] = ctx.calls[c].end;
}

void BuildGpuTasks(Context& ctx) {
  const auto& acts = ctx.trace.events().gpu_activities();
  struct Key {
    int32_t device;
    int64_t stream, start, end;
    uint64_t corr;
    uint32_t idx;
  };
  std::vector<Key> keys;
  keys.reserve(acts.size());
  for (int i = 0; i < acts.size(); ++i) {
    const proto::GpuActivity& a = acts[i];
    if (a.end_ns() < a.start_ns()) ctx.stats.Add(BuildCounter::negative_duration_gpu_op);
    keys.push_back({a.device(), a.stream(), a.start_ns(), std::max(a.end_ns(), a.start_ns()),
                    a.correlation_id(), static_cast<uint32_t>(i)});
  }
  const std::vector<size_t> streams =
      GroupStable(keys, [](const Key& k) { return std::pair(k.device, k.stream); });
  for (size_t s = 0; s + 1 < streams.size(); ++s) {
    SortNatural(
        keys.begin() + streams[s], keys.begin() + streams[s + 1], [](const Key& x, const Key& y) {
          return std::tie(x.start, x.end, x.corr, x.idx) < std::tie(y.start, y.end, y.corr, y.idx);
        });
  }
  ctx.ops.reserve(keys.size());
  for (size_t i = 0; i < keys.size();) {
    StreamInfo st;
    st.device = keys[i].device;
    st.stream = keys[i].stream;
    st.resource = ctx.g.AddResource(
        {ResourceKind::kGpuStream, 0, st.stream, st.device,
         absl::StrCat("stream ", st.stream, " (gpu ", st.device, ")"), true});
    st.begin = static_cast<uint32_t>(ctx.ops.size());
    const uint32_t stream_index = static_cast<uint32_t>(ctx.streams.size());
    for (; i < keys.size() && keys[i].device == st.device && keys[i].stream == st.stream; ++i) {
      GpuOp o;
      o.start = keys[i].start;
      o.end = keys[i].end;
      if (!ctx.ops.empty() && ctx.ops.size() > st.begin && o.start < ctx.ops.back().end) {
        // CUPTI timestamps of back-to-back work can overlap by a few ns.
        ctx.stats.Add(BuildCounter::overlapping_gpu_op);
        o.start = ctx.ops.back().end;
        o.end = std::max(o.end, o.start);
      }
      o.act = keys[i].idx;
      o.stream = stream_index;
      ctx.ops.push_back(o);
    }
    st.end = static_cast<uint32_t>(ctx.ops.size());
    ctx.streams.push_back(std::move(st));
  }
  const int64_t cap = ctx.opts.stream_gap_cap_ns;
  for (const StreamInfo& st : ctx.streams) {
    for (uint32_t o = st.begin; o < st.end; ++o) {
      GpuOp& op = ctx.ops[o];
      const proto::GpuActivity& a = ctx.Act(op);
      TaskSpec s{
          .kind = KindOf(a), .name = ctx.trace.String(a.name_sid()), .resource = st.resource,
          .duration_ns = op.end - op.start};
      if (o + 1 < st.end) s.gap_ns = std::clamp<int64_t>(ctx.ops[o + 1].start - op.end, 0, cap);
      s.measured_start_ns = op.start;
      s.bytes = a.bytes();
      if (a.kind() == proto::GpuActivity::KERNEL) {
        // Unset y/z dimensions count as 1; an unset x means unknown.
        s.geometry.blocks = a.grid_x() <= 0 ? 0
                                            : int64_t{a.grid_x()} * std::max(a.grid_y(), 1) *
                                                  std::max(a.grid_z(), 1);
        s.geometry.threads_per_block =
            a.block_x() <= 0 ? 0 : a.block_x() * std::max(a.block_y(), 1) * std::max(a.block_z(), 1);
        s.geometry.registers_per_thread = a.registers_per_thread();
        s.geometry.shared_memory_bytes = a.shared_memory_bytes();
      }
      op.task = ctx.g.AppendTask(s);
      // Back-to-back with its predecessor: the stream explains its start.
      if (o > st.begin && op.start - ctx.ops[o - 1].end <= cap) op.explained = true;
    }
  }
}

void AddLaunchEdges(Context& ctx) {
  // Calls sorted by end, to anchor GPU work whose launch was not traced
  // (a thread's calls end in the order they start, bar nested ones).
  std::vector<uint32_t> by_end(ctx.calls.size());
  for (uint32_t c = 0; c < by_end.size(); ++c) by_end[c] = c;
  SortNatural(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(ctx.calls[a].end, a) < std::tie(ctx.calls[b].end, b);
  });
  for (uint32_t o = 0; o < ctx.ops.size(); ++o) {
    GpuOp& op = ctx.ops[o];
    const uint64_t corr = ctx.Act(op).correlation_id();
    uint32_t c = kNone;
    if (corr != 0) {
      auto it = ctx.call_by_corr.find(corr);
      if (it != ctx.call_by_corr.end()) {
        c = it->second;
      } else {
        ctx.stats.Add(BuildCounter::unmatched_correlation);
      }
    }
    if (c == kNone) {
      // Anchor on the last CPU call that ended before the op started, so the op
      // cannot run before the program got that far.
      ctx.stats.Add(BuildCounter::kernel_without_launch);
      auto it = std::upper_bound(by_end.begin(), by_end.end(), op.start,
                                 [&](int64_t t, uint32_t x) { return t < ctx.calls[x].end; });
      if (it == by_end.begin()) continue;
      c = *(it - 1);
      op.anchored = true;
    }
    op.launch = c;
    if (ctx.calls[c].first_launch == kNone) ctx.calls[c].first_launch = o;
    op.launch_edge = ctx.g.AddEdge(ctx.calls[c].task, op.task, EdgeKind::kLaunch, 0);
  }
  // Submission order per stream, for the sync and event passes.
  for (StreamInfo& st : ctx.streams) {
    st.submitted.resize(st.end - st.begin);
    int64_t last = std::numeric_limits<int64_t>::min();
    for (uint32_t o = st.begin; o < st.end; ++o) {
      const GpuOp& op = ctx.ops[o];
      const int64_t t = op.launch != kNone ? ctx.calls[op.launch].start : op.start;
      last = std::max(last, t);
      st.submitted[o - st.begin] = last;
    }
  }
  // Typical launch latency per device, from ops that found their stream idle
  // (latencies beyond max_launch_latency_ns are waits, not latencies).
  absl::flat_hash_map<int32_t, std::vector<int64_t>> samples;
  for (const GpuOp& op : ctx.ops) {
    if (op.launch == kNone || op.explained) continue;
    const int64_t latency = op.start - ctx.calls[op.launch].end;
    if (latency > ctx.opts.max_launch_latency_ns) continue;
    samples[ctx.streams[op.stream].device].push_back(latency);
  }
  for (auto& [device, v] : samples) ctx.typical_latency[device] = UpperMedianInPlace(v);
}

void AnchorRoots(Context& ctx) {
  Graph& g = ctx.g;
  std::vector<uint8_t> has_parent(g.task_count(), 0);
  for (const Edge& e : g.edges()) {
    if (!e.removed) has_parent[e.dst.value()] = 1;
  }
  std::vector<TaskId> roots;
  int64_t t0 = std::numeric_limits<int64_t>::max();
  for (uint32_t r = 0; r < g.resource_count(); ++r) {
    const TaskId first = g.first_on_resource(ResourceId(r));
    if (!first.valid() || has_parent[first.value()]) continue;
    roots.push_back(first);
    t0 = std::min(t0, g.measured_start_ns(first));
  }
  if (roots.size() < 2) return;
  // Roots are the tasks whose causes precede the trace window (work already
  // running, threads already started). One zero-length task at the window's
  // start releases each at its measured offset, so they keep their relative
  // timing instead of all starting at 0.
  const ResourceId r = g.AddResource({ResourceKind::kCpuThread, -1, -1, -1, "trace window start", true});
  TaskSpec s{
      .kind = TaskKind::kCpuWork, .name = "trace window start", .resource = r,
      .measured_start_ns = t0};
  const TaskId start = g.AppendTask(s);
  for (TaskId root : roots) {
    g.AddEdge(start, root, EdgeKind::kUser, ClampDelay(g.measured_start_ns(root) - t0));
  }
  ctx.stats.Add(BuildCounter::root_anchor, static_cast<int64_t>(roots.size()));
}

// Ends of GPU work per device, in time order, to find what another stream
// finished just before an op started (InferCrossStreamWait).
struct DeviceEnds {
  absl::flat_hash_map<int32_t, std::vector<std::pair<int64_t, uint32_t>>> by_device;

  explicit DeviceEnds(const Context& ctx) {
    for (uint32_t o = 0; o < ctx.ops.size(); ++o) {
      const GpuOp& op = ctx.ops[o];
      if (op.end > op.start) by_device[ctx.streams[op.stream].device].push_back({op.end, o});
    }
    for (auto& [device, v] : by_device) std::sort(v.begin(), v.end());
  }
};

// An op whose start nothing recorded explains (no launch, stream order or
// event bound it) and that started right after work on another stream of
// its device ended: the stream waited for that work through an event the
// trace did not record (DDP's copy-back after an RCCL all-reduce, an
// all-reduce after its bucket's last gradient; HTA reads communication
// overlap the same way). Adds that dependency, with the measured residual
// as its delay, when work ended within the window after `after` (what
// otherwise bound the op); returns whether it did.
bool InferCrossStreamWait(Context& ctx, const DeviceEnds& ends, uint32_t o, int64_t after) {
  const GpuOp& op = ctx.ops[o];
  const int64_t window = ctx.opts.cross_stream_window_ns;
  auto it = ends.by_device.find(ctx.streams[op.stream].device);
  if (window <= 0 || it == ends.by_device.end()) return false;
  const auto& v = it->second;
  auto pos = std::upper_bound(v.begin(), v.end(), std::make_pair(op.start, UINT32_MAX));
  while (pos != v.begin()) {
    --pos;
    const auto [end, src] = *pos;
    if (end < op.start - window || end <= after) break;
    if (ctx.ops[src].stream == op.stream) continue;
    ctx.g.AddEdge(ctx.ops[src].task, op.task, EdgeKind::kEvent, ClampDelay(op.start - end));
    ctx.stats.Add(BuildCounter::cross_stream_wait_inferred);
    if (after != std::numeric_limits<int64_t>::min()) {
      ctx.stats.Add(BuildCounter::cross_stream_wait_inferred_ns, end - after);
    }
    return true;
  }
  return false;
}

void FinishLaunchDelays(Context& ctx) {
  // Earliest start each op's non-launch constraints allow, on measured times:
  // stream predecessor end + gap, event parents' end + delay.
  const Graph& g = ctx.g;
  std::vector<int64_t> other(ctx.ops.size(), std::numeric_limits<int64_t>::min());
  absl::flat_hash_map<uint32_t, uint32_t> op_of_task;
  op_of_task.reserve(ctx.ops.size());
  for (uint32_t o = 0; o < ctx.ops.size(); ++o) op_of_task[ctx.ops[o].task.value()] = o;
  for (const StreamInfo& st : ctx.streams) {
    for (uint32_t o = st.begin + 1; o < st.end; ++o) {
      other[o] = ctx.ops[o - 1].end + g.gap_ns(ctx.ops[o - 1].task);
    }
  }
  // Which edge set other[o] (invalid: the stream predecessor, or nothing).
  std::vector<EdgeId> binding(ctx.ops.size(), EdgeId::Invalid());
  for (uint32_t i = 0; i < g.edges().size(); ++i) {
    const Edge& e = g.edges()[i];
    if (e.removed || e.kind == EdgeKind::kLaunch) continue;
    auto dst = op_of_task.find(e.dst.value());
    if (dst == op_of_task.end()) continue;
    const int64_t src_end = g.measured_start_ns(e.src) + g.duration_ns(e.src);
    if (src_end + e.delay_ns > other[dst->second]) {
      other[dst->second] = src_end + e.delay_ns;
      binding[dst->second] = EdgeId(i);
    }
  }
  const int64_t cap = ctx.opts.max_launch_latency_ns;
  const DeviceEnds ends(ctx);
  for (uint32_t o = 0; o < ctx.ops.size(); ++o) {
    const GpuOp& op = ctx.ops[o];
    // Before calling a start unexplained, look for work on another stream
    // that ended just before it (the wait its trace did not record).
    const int64_t launch_bound =
        op.launch_edge.valid()
            ? g.measured_start_ns(ctx.calls[op.launch].task) +
                  g.duration_ns(ctx.calls[op.launch].task) + cap
            : std::numeric_limits<int64_t>::min();
    if (other[o] < op.start - ctx.opts.explain_tolerance_ns && launch_bound < op.start) {
      const int64_t window = ctx.opts.cross_stream_window_ns;
      if (other[o] >= op.start - window && binding[o].valid()) {
        // An event or sync edge lands just short of the start: the wait's
        // own latency (an event's signal, a copy engine's start), carried
        // by that edge rather than kept as an unexplained gap.
        const Edge& e = g.edge(binding[o]);
        ctx.g.set_edge_delay_ns(binding[o], ClampDelay(e.delay_ns + (op.start - other[o])));
        other[o] = op.start;
      } else if (const int64_t after = std::max(other[o], launch_bound);
                 InferCrossStreamWait(ctx, ends, o, after) || InferWaitFromCall(ctx, o, after)) {
        other[o] = op.start;  // the new edge's end + delay
      }
    }
    if (!op.launch_edge.valid()) {
      // Nothing launched it that we can see (it ran before any call ended):
      // only its stream places it, so an idle stretch before it stays.
      if (o > ctx.streams[op.stream].begin && other[o] < op.start) {
        const GpuOp& prev = ctx.ops[o - 1];
        ctx.g.set_gap_ns(prev.task, op.start - prev.end);
        ctx.g.set_pinned_gap(prev.task);
        ctx.stats.Add(BuildCounter::unexplained_stream_gap);
        ctx.stats.Add(BuildCounter::unexplained_stream_gap_ns, op.start - other[o]);
      }
      continue;
    }
    const TaskId call = ctx.calls[op.launch].task;
    // The call's end as modelled (a blocking call may have been shortened).
    const int64_t call_end = g.measured_start_ns(call) + g.duration_ns(call);
    const int64_t latency = op.start - call_end;
    int64_t delay;
    if (other[o] >= op.start - ctx.opts.explain_tolerance_ns) {
      // Something else held the op back; the launch must not bind.
      auto it = ctx.typical_latency.find(ctx.streams[op.stream].device);
      delay = std::min(latency, it == ctx.typical_latency.end() ? 0 : it->second);
    } else if (latency <= cap) {
      delay = latency;  // an ordinary launch latency on an idle stream
    } else if (o > ctx.streams[op.stream].begin) {
      // Launched long before and not held by anything we can see: the stream
      // was busy with untraced GPU-side work (CUDA graph nodes, contention).
      // That time stays with the stream, as a gap, not with the CPU.
      const GpuOp& prev = ctx.ops[o - 1];
      ctx.g.set_gap_ns(prev.task, op.start - prev.end);
      ctx.g.set_pinned_gap(prev.task);
      ctx.stats.Add(BuildCounter::unexplained_stream_gap);
      ctx.stats.Add(BuildCounter::unexplained_stream_gap_ns, op.start - std::max(other[o], call_end + cap));
      auto it = ctx.typical_latency.find(ctx.streams[op.stream].device);
      delay = std::min(latency, it == ctx.typical_latency.end() ? 0 : it->second);
    } else {
      delay = latency;  // first on its stream: only the launch can place it
      ctx.g.set_edge_pinned(op.launch_edge);
      ctx.stats.Add(BuildCounter::unexplained_launch_wait);
      ctx.stats.Add(BuildCounter::unexplained_launch_wait_ns, latency - cap);
    }
    ctx.g.set_edge_delay_ns(op.launch_edge, ClampDelay(delay));
  }
}

}  // namespace internal

absl::StatusOr<Graph> BuildGraph(const Trace& trace, const BuildOptions& opts,
                                 BuildStats* stats) {
  BuildStats local;
  BuildStats& st = stats ? *stats : local;
  const proto::TraceChunk& ev = trace.events();
  if (ev.api_calls_size() == 0 && ev.gpu_activities_size() == 0) {
    return absl::InvalidArgumentError(
        "trace has no CUDA/HIP API calls and no GPU activity: nothing to simulate");
  }
  Graph g;
  internal::Context ctx(trace, opts, st, g);
  internal::BuildCpuTasks(ctx);
  internal::BuildGpuTasks(ctx);
  internal::AddLaunchEdges(ctx);
  if (opts.infer_dependencies) {
    internal::AddSyncEdges(ctx);
    internal::AddInterThreadEdges(ctx);
  }
  internal::AddSteps(ctx);
  internal::SplitCpuTime(ctx);
  internal::RouteBlockingCopies(ctx);
  internal::AnchorRoots(ctx);
  internal::FinishLaunchDelays(ctx);
  internal::Annotate(ctx);
  internal::AddMemory(ctx);
  st.Add(BuildCounter::cpu_tasks, static_cast<int64_t>(ctx.calls.size()));
  st.Add(BuildCounter::gpu_tasks, static_cast<int64_t>(ctx.ops.size()));
  st.Add(BuildCounter::threads, static_cast<int64_t>(ctx.threads.size()));
  st.Add(BuildCounter::streams, static_cast<int64_t>(ctx.streams.size()));
  st.Add(BuildCounter::edges, static_cast<int64_t>(g.live_edge_count()));
  return g;
}

}  // namespace reverie::depgraph
