// File: depgraph/builder_sync.cc
//
// GPU -> CPU (sync) and GPU -> GPU (event) edges, from Sync records when the
// trace has them for a call, else inferred from the call's name and timing.
//
// Which GPU task a sync waits for: the last task *submitted* to the stream
// before the sync call started (a sync waits for work issued before it, not
// for work another thread issues meanwhile). When clock skew makes that task
// end after the call returned, the last task that ended before the return is
// used instead (counter sync_clock_skew).
#include <algorithm>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "depgraph/builder_internal.h"

namespace reverie::depgraph::internal {
namespace {

enum class Blocking { kNone, kDevice, kStream, kEvent, kStreamWaitEvent };

Blocking Classify(std::string_view name) {
  auto has = [&](std::string_view s) { return name.find(s) != std::string_view::npos; };
  if (has("DeviceSynchronize") || has("CtxSynchronize")) return Blocking::kDevice;
  if (has("StreamSynchronize")) return Blocking::kStream;
  if (has("EventSynchronize")) return Blocking::kEvent;
  if (has("StreamWaitEvent")) return Blocking::kStreamWaitEvent;
  return Blocking::kNone;
}

// The op submitted last before time t to a stream of `device` other than
// `exclude`, or kNone: what an event recorded at t covers, when the trace
// does not say on which stream it was recorded.
uint32_t LastSubmittedElsewhere(const Context& ctx, int32_t device, uint32_t exclude, int64_t t) {
  uint32_t producer = kNone;
  int64_t latest = std::numeric_limits<int64_t>::min();
  for (uint32_t s = 0; s < ctx.streams.size(); ++s) {
    if (s == exclude || ctx.streams[s].device != device) continue;
    const uint32_t o = ctx.LastSubmittedBefore(s, t);
    if (o == kNone) continue;
    const int64_t sub = ctx.streams[s].submitted[o - ctx.streams[s].begin];
    if (sub > latest) {
      latest = sub;
      producer = o;
    }
  }
  return producer;
}

class SyncPass {
 public:
  explicit SyncPass(Context& ctx) : ctx_(ctx) {
    for (uint32_t s = 0; s < ctx.streams.size(); ++s) {
      stream_index_[{ctx.streams[s].device, ctx.streams[s].stream}] = s;
    }
  }

  void Run() {
    std::vector<bool> recorded(ctx_.calls.size(), false);
    for (const proto::Sync& s : ctx_.trace.events().syncs()) {
      const uint32_t c = CallOf(s.correlation_id());
      if (c == kNone) {
        ctx_.stats.Add(BuildCounter::sync_without_call);
        continue;
      }
      recorded[c] = true;
      FromRecord(s, c);
    }
    for (uint32_t c = 0; c < ctx_.calls.size(); ++c) {
      if (recorded[c]) continue;
      const Blocking kind = Classify(ctx_.ApiName(ctx_.calls[c]));
      if (kind != Blocking::kNone) Infer(kind, c);
      if (ctx_.calls[c].first_launch != kNone) MaybeBlockingCopy(c);
    }
    AddLaunchQueueWaits(ctx_);
    ApplyResiduals();
  }

 private:
  uint32_t CallOf(uint64_t corr) const {
    if (corr == 0) return kNone;
    auto it = ctx_.call_by_corr.find(corr);
    return it == ctx_.call_by_corr.end() ? kNone : it->second;
  }
  uint32_t StreamOf(int32_t device, int64_t stream) const {
    auto it = stream_index_.find({device, stream});
    return it == stream_index_.end() ? kNone : it->second;
  }

  // The op on stream s that a wait issued at `issued` and returning by
  // `returned` waited for (see the file comment), or kNone.
  uint32_t Waited(uint32_t s, int64_t issued, int64_t returned) {
    const uint32_t o = ctx_.LastSubmittedBefore(s, issued);
    if (o == kNone || ctx_.ops[o].end <= returned) return o;
    ctx_.stats.Add(BuildCounter::sync_clock_skew);
    return ctx_.LastEndingBy(s, returned);
  }

  void SyncOnStream(uint32_t s, uint32_t c, BuildCounter counter) {
    const CpuCall& call = ctx_.calls[c];
    const uint32_t o = Waited(s, call.start, call.end);
    if (o == kNone) return;
    ctx_.AddSyncEdge(o, c);
    ctx_.stats.Add(counter);
  }

  void SyncOnDevice(int32_t device, uint32_t c, BuildCounter counter) {
    for (uint32_t s = 0; s < ctx_.streams.size(); ++s) {
      if (device < 0 || ctx_.streams[s].device == device) SyncOnStream(s, c, counter);
    }
  }

  // GPU -> GPU: `producer` must finish before `consumer` starts.
  void EventEdge(uint32_t producer, uint32_t consumer, BuildCounter counter) {
    if (producer == kNone || consumer == kNone) return;
    GpuOp& p = ctx_.ops[producer];
    GpuOp& q = ctx_.ops[consumer];
    if (p.stream == q.stream) return;  // stream order already says so
    if (p.end > q.start) {
      ctx_.stats.Add(BuildCounter::event_edge_rejected);  // the trace contradicts the inference
      return;
    }
    const int64_t wait = q.start - p.end;
    const int64_t delay = std::min(wait, ctx_.opts.stream_gap_cap_ns);
    ctx_.g.AddEdge(p.task, q.task, EdgeKind::kEvent, static_cast<int32_t>(delay));
    if (wait <= ctx_.opts.stream_gap_cap_ns) q.explained = true;
    ctx_.stats.Add(counter);
  }

  void FromRecord(const proto::Sync& s, uint32_t c) {
    const CpuCall& call = ctx_.calls[c];
    switch (s.kind()) {
      case proto::Sync::DEVICE:
      case proto::Sync::CONTEXT:
        SyncOnDevice(s.device(), c, BuildCounter::sync_edge_device);
        return;
      case proto::Sync::STREAM: {
        const uint32_t st = StreamOf(s.device(), s.stream());
        if (st != kNone) SyncOnStream(st, c, BuildCounter::sync_edge_stream);
        return;
      }
      case proto::Sync::EVENT:
      case proto::Sync::STREAM_WAIT_EVENT: {
        const uint32_t consumer_stream = StreamOf(s.device(), s.stream());
        if (s.kind() == proto::Sync::STREAM_WAIT_EVENT && consumer_stream == kNone) {
          // The waiting stream runs nothing in the trace: nothing waits.
          ctx_.stats.Add(BuildCounter::event_wait_idle_stream);
          return;
        }
        const uint32_t producer = EventProducer(s);
        if (s.kind() == proto::Sync::EVENT) {
          if (producer == kNone) {
            Infer(Blocking::kEvent, c);
            return;
          }
          if (ctx_.ops[producer].end > call.end) {
            ctx_.stats.Add(BuildCounter::sync_clock_skew);
            return;
          }
          ctx_.AddSyncEdge(producer, c);
          ctx_.stats.Add(BuildCounter::sync_edge_event);
          return;
        }
        if (producer == kNone) {
          ctx_.stats.Add(BuildCounter::event_wait_unresolved);
          return;
        }
        EventEdge(producer, ctx_.FirstSubmittedFrom(consumer_stream, call.start),
                  BuildCounter::event_edge_recorded);
        return;
      }
      default:
        ctx_.stats.Add(BuildCounter::sync_unknown_kind);
    }
  }

  // The op that precedes the event's record on the recording stream. An
  // event recorded on a stream that runs no GPU work in the trace (cuDNN and
  // cuBLAS fork work onto a pool of streams and join back, and most of the
  // pool's streams stay empty: 840 of 3,040 recorded waits in an H100
  // ResNet-50 step sequence) completes when what that stream waited for
  // before the record does: the stream's latest recorded wait, followed.
  uint32_t EventProducer(const proto::Sync& s, int depth = 0) {
    const uint32_t rec = CallOf(s.event_record_correlation_id());
    if (rec == kNone) return kNone;
    const uint32_t st = StreamOf(s.device(), s.wait_on_stream());
    if (st != kNone) return ctx_.LastSubmittedBefore(st, ctx_.calls[rec].start);
    if (depth >= 8) return kNone;
    const proto::Sync* before = LatestWaitBy(s.device(), s.wait_on_stream(), ctx_.calls[rec].start);
    if (before == nullptr) return kNone;
    const uint32_t o = EventProducer(*before, depth + 1);
    if (o != kNone && depth == 0) ctx_.stats.Add(BuildCounter::event_wait_idle_stream);
    return o;
  }

  // The recorded stream wait by (device, stream) whose call started last
  // before `t`, or nullptr.
  const proto::Sync* LatestWaitBy(int32_t device, int64_t stream, int64_t t) {
    if (!waits_indexed_) IndexWaits();
    auto it = waits_by_stream_.find({device, stream});
    if (it == waits_by_stream_.end()) return nullptr;
    const std::vector<std::pair<int64_t, const proto::Sync*>>& v = it->second;
    auto w = std::lower_bound(v.begin(), v.end(), t,
                              [](const auto& x, int64_t y) { return x.first < y; });
    return w == v.begin() ? nullptr : (w - 1)->second;
  }

  void IndexWaits() {
    waits_indexed_ = true;
    for (const proto::Sync& s : ctx_.trace.events().syncs()) {
      if (s.kind() != proto::Sync::STREAM_WAIT_EVENT) continue;
      const uint32_t c = CallOf(s.correlation_id());
      if (c != kNone) waits_by_stream_[{s.device(), s.stream()}].emplace_back(ctx_.calls[c].start, &s);
    }
    for (auto& [key, v] : waits_by_stream_) {
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
  }

  // No Sync record for a blocking call: infer what it waited for.
  void Infer(Blocking kind, uint32_t c) {
    const CpuCall& call = ctx_.calls[c];
    if (kind == Blocking::kDevice) {
      SyncOnDevice(-1, c, BuildCounter::inferred_sync);
      return;
    }
    if (kind == Blocking::kStreamWaitEvent) {
      InferStreamWait(c);
      return;
    }
    // Stream / event sync: the stream whose last-submitted work ended last,
    // shortly before the call returned, is the one it waited on.
    uint32_t best = kNone;
    for (uint32_t s = 0; s < ctx_.streams.size(); ++s) {
      const uint32_t o = ctx_.LastSubmittedBefore(s, call.start);
      if (o == kNone || ctx_.ops[o].end > call.end) continue;
      if (best == kNone || ctx_.ops[o].end > ctx_.ops[best].end) best = o;
    }
    if (best != kNone && call.end - ctx_.ops[best].end <= ctx_.opts.sync_tolerance_ns &&
        ctx_.ops[best].end > call.start) {
      ctx_.AddSyncEdge(best, c);
      ctx_.stats.Add(BuildCounter::inferred_sync);
      return;
    }
    // It did not wait. A stream sync still orders the call after the work on
    // the thread's current stream (the stream of its latest launch).
    ctx_.stats.Add(BuildCounter::sync_not_waiting);
    if (kind == Blocking::kStream) {
      const uint32_t cur = CurrentStream(c);
      if (cur != kNone) SyncOnStream(cur, c, BuildCounter::inferred_sync);
    }
  }

  // Stream of the latest GPU op launched from c's thread before c, or kNone.
  uint32_t CurrentStream(uint32_t c) const {
    const ThreadInfo& th = ctx_.threads[ctx_.calls[c].thread];
    for (uint32_t x = c; x > th.begin && c - x < 10'000; --x) {
      const uint32_t o = ctx_.calls[x - 1].first_launch;
      if (o != kNone) return ctx_.ops[o].stream;
    }
    return kNone;
  }

  // cudaStreamWaitEvent without a record: the waiting stream is the stream of
  // the next launch from the same thread; the event was recorded on the
  // other stream of the device that was submitted to most recently.
  void InferStreamWait(uint32_t c) {
    const CpuCall& call = ctx_.calls[c];
    const ThreadInfo& th = ctx_.threads[call.thread];
    uint32_t consumer_stream = kNone;
    for (uint32_t x = c + 1; x < th.end && x - c < 64; ++x) {
      if (ctx_.calls[x].first_launch != kNone) {
        consumer_stream = ctx_.ops[ctx_.calls[x].first_launch].stream;
        break;
      }
    }
    if (consumer_stream == kNone) {
      ctx_.stats.Add(BuildCounter::event_wait_unresolved);
      return;
    }
    const uint32_t producer = LastSubmittedElsewhere(ctx_, ctx_.streams[consumer_stream].device,
                                                     consumer_stream, call.start);
    if (producer == kNone) {
      ctx_.stats.Add(BuildCounter::event_wait_unresolved);
      return;
    }
    EventEdge(producer, ctx_.FirstSubmittedFrom(consumer_stream, call.start),
              BuildCounter::inferred_event_edge);
  }

  // A copy call that returned only after its own copy ran (cudaMemcpy, or an
  // async copy from/to pageable memory). Such a call cannot start its copy
  // before the work submitted earlier to the copy's stream ends, and cannot
  // return before the copy has run. Modelled without a cycle (the call
  // launches the copy):
  // - the wait for the earlier work is a sync edge from the last op
  //   submitted to the stream before the call (counter
  //   inferred_blocking_copy_wait / _ns), so a faster GPU shortens it;
  // - the call's own part ends where the copy started (own_end), so its
  //   residual duration is the staging/issue time after the wait;
  // - the copy itself is routed to the next call on the thread (a sync edge
  //   whose delay is the measured hand-off, often slightly negative: CUPTI
  //   stamps a staged copy's end tens of us after the call returns).
  void MaybeBlockingCopy(uint32_t c) {
    const std::string_view name = ctx_.ApiName(ctx_.calls[c]);
    if (name.find("emcpy") == std::string_view::npos) return;
    const CpuCall& call = ctx_.calls[c];
    const uint32_t o = call.first_launch;
    const GpuOp& op = ctx_.ops[o];
    const bool async = name.find("Async") != std::string_view::npos;
    const bool pageable =
        ctx_.trace.String(ctx_.Act(op).name_sid()).find("Pageable") != std::string_view::npos;
    if (async && !pageable) return;
    // The copy ran inside the call: started while it ran, ended by its return
    // (within the sync tolerance, or a tenth of the copy for long copies).
    const int64_t slack = std::max(ctx_.opts.sync_tolerance_ns, (op.end - op.start) / 10);
    if (op.start < call.start || op.start > call.end || op.end > call.end + slack) return;
    const uint32_t next = ctx_.NextOnThread(c);
    if (next == kNone) {
      ctx_.stats.Add(BuildCounter::blocking_copy_unrouted);
      return;
    }
    const uint32_t p = ctx_.LastSubmittedBefore(op.stream, call.start);
    if (p != kNone && p < o && ctx_.ops[p].end > call.start &&
        ctx_.ops[p].end <= op.start + ctx_.opts.stream_gap_cap_ns) {
      // Submitted before the call started, so it cannot depend on the call.
      ctx_.AddSyncEdge(p, c);
      ctx_.stats.Add(BuildCounter::inferred_blocking_copy_wait);
      ctx_.stats.Add(BuildCounter::inferred_blocking_copy_wait_ns, ctx_.ops[p].end - call.start);
    }
    ctx_.own_end[c] = std::clamp(op.start, call.start, call.end);
    const int64_t handoff = ctx_.calls[next].start - op.end;
    ctx_.g.AddEdge(op.task, ctx_.calls[next].task, EdgeKind::kSync, ClampDelay(handoff));
    ctx_.stats.Add(BuildCounter::inferred_blocking_copy);
    ctx_.blocking_copies.emplace_back(c, o);
  }

  // A call that blocked keeps only its own residual as duration: its
  // modelled span is [clamp(wait end, start, own end), own end].
  void ApplyResiduals() {
    for (uint32_t c = 0; c < ctx_.calls.size(); ++c) {
      const CpuCall& call = ctx_.calls[c];
      const int64_t own_end = ctx_.own_end[c];
      const int64_t w = ctx_.wait_end[c];
      if (w <= call.start && own_end == call.end) continue;
      const int64_t resumed = std::clamp(w, call.start, own_end);
      ctx_.g.set_duration_ns(call.task, own_end - resumed);
      ctx_.g.set_measured_start_ns(call.task, resumed);
      if (resumed > call.start) ctx_.stats.Add(BuildCounter::sync_wait_ns, resumed - call.start);
    }
  }

  Context& ctx_;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, uint32_t> stream_index_;
  // Recorded stream waits by waiting (device, stream), by call start.
  bool waits_indexed_ = false;
  absl::flat_hash_map<std::pair<int32_t, int64_t>, std::vector<std::pair<int64_t, const proto::Sync*>>>
      waits_by_stream_;
};

}  // namespace

void AddSyncEdges(Context& ctx) { SyncPass(ctx).Run(); }

void RouteBlockingCopies(Context& ctx) {
  for (const auto& [c, o] : ctx.blocking_copies) {
    const TaskId next = ctx.g.next_on_resource(ctx.calls[c].task);
    const uint32_t next_call = ctx.NextOnThread(c);
    // The next call already waits for the copy (MaybeBlockingCopy).
    if (!next.valid() || next_call == kNone || next == ctx.calls[next_call].task) continue;
    const int64_t measured = ctx.g.measured_start_ns(next);
    if (measured == kNotMeasured) continue;
    const GpuOp& op = ctx.ops[o];
    ctx.g.AddEdge(op.task, next, EdgeKind::kSync, ClampDelay(measured - op.end));
    ctx.stats.Add(BuildCounter::blocking_copy_return);
  }
}

bool InferWaitFromCall(Context& ctx, uint32_t o, int64_t after) {
  const GpuOp& op = ctx.ops[o];
  if (op.launch == kNone || op.anchored) return false;
  const CpuCall& launch = ctx.calls[op.launch];
  const ThreadInfo& th = ctx.threads[launch.thread];
  // The wait must lie between the stream predecessor's launch (when this
  // thread made it) and the op's: before that it ordered earlier work.
  uint32_t lo = th.begin;
  if (o > ctx.streams[op.stream].begin) {
    const uint32_t prev = ctx.ops[o - 1].launch;
    if (prev != kNone && !ctx.ops[o - 1].anchored && ctx.calls[prev].thread == launch.thread &&
        prev < op.launch) {
      lo = prev + 1;
    }
  }
  constexpr uint32_t kMaxCallsBack = 256;
  uint32_t wait = kNone;
  for (uint32_t c = op.launch; c > lo && op.launch - c < kMaxCallsBack; --c) {
    if (ctx.ApiName(ctx.calls[c - 1]).find("StreamWaitEvent") != std::string_view::npos) {
      wait = c - 1;
      break;
    }
  }
  if (wait == kNone) return false;
  // An event records the work submitted to its stream before it.
  const uint32_t producer =
      LastSubmittedElsewhere(ctx, ctx.streams[op.stream].device, op.stream, ctx.calls[wait].start);
  // It explains the wait only if it ended inside the idle stretch.
  if (producer == kNone || ctx.ops[producer].end > op.start || ctx.ops[producer].end <= after) {
    return false;
  }
  const int64_t residual = op.start - ctx.ops[producer].end;
  ctx.g.AddEdge(
      ctx.ops[producer].task, op.task, EdgeKind::kEvent,
      static_cast<int32_t>(std::min<int64_t>(residual, std::numeric_limits<int32_t>::max())));
  ctx.stats.Add(BuildCounter::stream_wait_from_call);
  ctx.stats.Add(BuildCounter::stream_wait_from_call_ns, ctx.ops[producer].end - after);
  return true;
}

}  // namespace reverie::depgraph::internal
