// File: depgraph/builder_queue.cc
//
// Launch calls the driver held because the device's queue of pending work
// was full. A GPU holds a bounded number of launched, unfinished tasks
// (1,024 on the NVIDIA drivers of the shared traces); once the CPU runs that
// far ahead, each launch call blocks until one of them finishes. HTA's V100
// DDP trace shows it: 1,230 of its 6,095 launches started with 1,022 tasks
// pending, waited (up to 2 ms; a launch takes 5 us) and returned a few
// microseconds after one finished.
//
// Such a call is a sync on the task whose completion released it: a kSync
// edge from that task, so a faster GPU releases it sooner and the CPU that
// the queue throttled speeds up with it (kept as measured durations, the
// wait pinned the CPU to the old GPU speed). The queue's depth is read off
// the trace, never assumed: the count of pending tasks the waiting launches
// piled up at, where enough of them did (below). A GPU made slower
// than the trace's could fill the queue where the trace did not: not
// modelled (the calls that did not block keep no queue edge).
#include <algorithm>
#include <cstdint>
#include <map>
#include <queue>
#include <utility>
#include <vector>

#include "base/median.h"
#include "depgraph/builder_internal.h"

namespace reverie::depgraph::internal {
namespace {

// A full queue must block this many launches before it counts as the
// device's limit: a workload's own peak of pending work, reached once, is
// not a queue limit.
constexpr int kMinBlockedLaunches = 8;
// Nor is a peak of a few tasks: drivers queue hundreds (NVIDIA's of the
// shared traces 1,024), so a shallower peak is the workload's concurrency,
// where a launch that returns as a short kernel ends is a coincidence.
constexpr size_t kMinQueueDepth = 64;
// At least 1 in this many waiting calls start at the depth (see below).
constexpr int kMinShareAtDepth = 4;

struct Pending {
  int64_t end;
  uint32_t op;
  bool operator>(const Pending& o) const { return end != o.end ? end > o.end : op > o.op; }
};

struct Blocked {
  uint32_t call;
  uint32_t released_by;
};

// What a launch that did not wait takes: the 10th percentile of the
// device's launch calls (the median can be a blocked one: on a GPU-bound
// step most launches wait once the queue has filled).
int64_t UnblockedDuration(const Context& ctx, const std::vector<uint32_t>& calls) {
  std::vector<int64_t> d;
  d.reserve(calls.size());
  for (uint32_t c : calls) d.push_back(ctx.calls[c].end - ctx.calls[c].start);
  return QuantileInPlace(d, 0.1, int64_t{0});
}

// The calls of one device (in start order) that started with its queue
// full and waited, each with the task whose completion released it.
// Pending: launched by an earlier call, not yet finished.
std::vector<Blocked> BlockedAtDepth(const Context& ctx, const std::vector<uint32_t>& calls) {
  const int64_t unblocked = UnblockedDuration(ctx, calls);
  const int64_t tolerance = ctx.opts.sync_tolerance_ns;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
  std::vector<std::pair<size_t, Blocked>> full;  // (pending count, call) of calls that waited
  for (uint32_t c : calls) {
    const CpuCall& call = ctx.calls[c];
    while (!pending.empty() && pending.top().end <= call.start) pending.pop();
    // Waited for the first pending task to finish (longer than a launch
    // takes) and returned after it did (within the sync tolerance).
    if (!pending.empty()) {
      const int64_t freed = pending.top().end;
      if (freed - call.start > unblocked && call.end >= freed && call.end - freed <= tolerance) {
        full.push_back({pending.size(), {c, pending.top().op}});
      }
    }
    const uint32_t o = call.first_launch;
    pending.push({ctx.ops[o].end, o});
  }
  // The queue's depth: the pending count most waiting calls started at
  // (launches pile up at the limit; a copy or memset may count apart, as
  // GPUPuzzlers' 1,027 pending at a few copies beside 275 launches at 1,022).
  // A limit holds a large share of the waits (42-61% at 1,022 in the
  // traces that hit it); calls that merely returned as some short kernel
  // ended scatter over many counts (2-7% at the most common one).
  std::map<size_t, int> at;
  for (const auto& f : full) ++at[f.first];
  size_t depth = 0;
  int most = 0;
  for (const auto& [n, k] : at) {
    if (k >= most) depth = n, most = k;
  }
  std::vector<Blocked> out;
  if (depth < kMinQueueDepth || most < kMinBlockedLaunches ||
      most * kMinShareAtDepth < static_cast<int>(full.size())) {
    return out;
  }
  for (const auto& [n, b] : full) {
    if (n >= depth) out.push_back(b);
  }
  return out;
}

}  // namespace

void AddLaunchQueueWaits(Context& ctx) {
  // Ordered by device, and calls of equal start by index: the edges come
  // out in the same order on every run.
  std::map<int32_t, std::vector<uint32_t>> by_device;
  for (uint32_t c = 0; c < ctx.calls.size(); ++c) {
    const uint32_t o = ctx.calls[c].first_launch;
    if (o == kNone) continue;
    by_device[ctx.streams[ctx.ops[o].stream].device].push_back(c);
  }
  for (auto& [device, calls] : by_device) {
    std::stable_sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
      return ctx.calls[a].start < ctx.calls[b].start;
    });
    for (const Blocked& b : BlockedAtDepth(ctx, calls)) {
      const CpuCall& call = ctx.calls[b.call];
      const GpuOp& op = ctx.ops[b.released_by];
      // The released task was launched before this call (it was pending at
      // its start), so it cannot depend on it: no cycle.
      ctx.AddSyncEdge(b.released_by, b.call);
      ctx.stats.Add(BuildCounter::launch_queue_wait);
      ctx.stats.Add(BuildCounter::launch_queue_wait_ns,
                    std::clamp(op.end, call.start, call.end) - call.start);
    }
  }
}

}  // namespace reverie::depgraph::internal
