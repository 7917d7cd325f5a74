// File: depgraph/builder_annotate.cc
//
// Layer, phase and iteration of every task (Daydream §4.3, sync-free): a CPU
// call takes them from the Ranges / Iterations enclosing it on its thread; a
// GPU task takes its launching call's.
#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "depgraph/builder_internal.h"

namespace reverie::depgraph::internal {
namespace {

using ThreadKey = std::pair<int64_t, int64_t>;

// Layer for a dotted module path, creating its ancestors ("a", "a.b") first.
LayerId LayerFor(Graph& g, std::string_view path) {
  const LayerId known = g.FindLayer(path);
  if (known.valid()) return known;
  const size_t dot = path.rfind('.');
  const LayerId parent = dot == std::string_view::npos ? LayerId::Invalid()
                                                       : LayerFor(g, path.substr(0, dot));
  return g.AddLayer(path, parent);
}

struct Open {
  int64_t end;
  LayerId layer;
  Phase phase;
};

// Assigns layer and phase to the calls of one thread from its ranges (indices
// into trace ranges, sorted by start, outer first).
void AnnotateThread(Context& ctx, const ThreadInfo& th, const std::vector<uint32_t>& ranges,
                    absl::flat_hash_map<uint32_t, LayerId>& layer_of_sid) {
  const auto& all = ctx.trace.events().ranges();
  std::vector<Open> stack;
  size_t next = 0;
  for (uint32_t c = th.begin; c < th.end; ++c) {
    const int64_t t = ctx.calls[c].start;
    while (next < ranges.size() && all[static_cast<int>(ranges[next])].start_ns() <= t) {
      const proto::Range& r = all[static_cast<int>(ranges[next++])];
      while (!stack.empty() && stack.back().end <= r.start_ns()) stack.pop_back();
      Open o{r.end_ns(), stack.empty() ? LayerId::Invalid() : stack.back().layer,
             stack.empty() ? Phase::kUnknown : stack.back().phase};
      if (r.module_path_sid() != 0) {
        auto [it, fresh] = layer_of_sid.try_emplace(r.module_path_sid(), LayerId::Invalid());
        if (fresh) it->second = LayerFor(ctx.g, ctx.trace.String(r.module_path_sid()));
        o.layer = it->second;
      }
      if (r.phase() != proto::PHASE_UNKNOWN && r.phase() <= proto::OTHER) {
        o.phase = static_cast<Phase>(r.phase());
      }
      stack.push_back(o);
    }
    while (!stack.empty() && stack.back().end <= t) stack.pop_back();
    if (stack.empty()) continue;
    ctx.g.set_layer(ctx.calls[c].task, stack.back().layer);
    ctx.g.set_phase(ctx.calls[c].task, stack.back().phase);
  }
}

}  // namespace

void Annotate(Context& ctx) {
  const proto::TraceChunk& ev = ctx.trace.events();
  // ---- iterations ----
  std::vector<int> its(ev.iterations_size());
  for (int i = 0; i < ev.iterations_size(); ++i) its[i] = i;
  std::sort(its.begin(), its.end(), [&](int a, int b) {
    return std::make_pair(ev.iterations(a).start_ns(), a) <
           std::make_pair(ev.iterations(b).start_ns(), b);
  });
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  absl::flat_hash_map<ThreadKey, std::vector<int32_t>> its_on_thread;
  for (int i : its) {
    const proto::Iteration& it = ev.iterations(i);
    std::string name(ctx.trace.String(it.name_sid()));
    if (name.empty()) name = "ProfilerStep#" + std::to_string(it.index());
    const int32_t id = ctx.g.AddIteration({name, it.start_ns(), it.end_ns()});
    starts.push_back(it.start_ns());
    ends.push_back(it.end_ns());
    its_on_thread[{it.pid(), it.tid()}].push_back(id);
  }
  if (its.empty()) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const CpuCall& c : ctx.calls) lo = std::min(lo, c.start), hi = std::max(hi, c.end);
    for (const GpuOp& o : ctx.ops) lo = std::min(lo, o.start), hi = std::max(hi, o.end);
    ctx.g.AddIteration({"whole trace", lo, hi});
    ctx.stats.Add("trace_without_iterations");
  }
  // Iteration by time for threads that have no iteration markers: the latest
  // one started at or before t, or -1 before the first / after the last.
  auto by_time = [&](int64_t t) -> int32_t {
    if (its.empty()) return 0;
    const auto it = std::upper_bound(starts.begin(), starts.end(), t);
    if (it == starts.begin()) return -1;
    const int32_t i = static_cast<int32_t>(it - starts.begin()) - 1;
    if (static_cast<size_t>(i) + 1 == starts.size() && t > ends[i]) return -1;
    return i;
  };
  for (const ThreadInfo& th : ctx.threads) {
    auto own = its_on_thread.find({th.pid, th.tid});
    for (uint32_t c = th.begin; c < th.end; ++c) {
      CpuCall& call = ctx.calls[c];
      int32_t it = -1;
      if (own == its_on_thread.end()) {
        it = by_time(call.start);
      } else {
        // Markers on one thread do not overlap: the last one started by t.
        const std::vector<int32_t>& ids = own->second;
        auto after = std::upper_bound(ids.begin(), ids.end(), call.start,
                                      [&](int64_t t, int32_t id) { return t < starts[id]; });
        if (after != ids.begin() && call.start < ends[*(after - 1)]) it = *(after - 1);
      }
      call.iteration = it;
      ctx.g.set_iteration(call.task, it);
    }
  }
  // ---- layers and phases ----
  absl::flat_hash_map<ThreadKey, std::vector<uint32_t>> ranges;
  for (int i = 0; i < ev.ranges_size(); ++i) {
    const proto::Range& r = ev.ranges(i);
    if (r.kind() == proto::Range::GPU_ANNOTATION) continue;
    if (r.module_path_sid() == 0 && r.phase() == proto::PHASE_UNKNOWN) continue;
    ranges[{r.pid(), r.tid()}].push_back(static_cast<uint32_t>(i));
  }
  absl::flat_hash_map<uint32_t, LayerId> layer_of_sid;
  for (const ThreadInfo& th : ctx.threads) {
    auto it = ranges.find({th.pid, th.tid});
    if (it == ranges.end()) continue;
    std::vector<uint32_t>& list = it->second;
    std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      const proto::Range& x = ev.ranges(static_cast<int>(a));
      const proto::Range& y = ev.ranges(static_cast<int>(b));
      return std::make_tuple(x.start_ns(), -x.end_ns(), a) <
             std::make_tuple(y.start_ns(), -y.end_ns(), b);
    });
    AnnotateThread(ctx, th, list, layer_of_sid);
  }
  // ---- GPU tasks inherit from their launch ----
  for (const GpuOp& o : ctx.ops) {
    if (o.launch == kNone) {
      ctx.g.set_iteration(o.task, by_time(o.start));
      continue;
    }
    const TaskId call = ctx.calls[o.launch].task;
    ctx.g.set_iteration(o.task, ctx.calls[o.launch].iteration);
    ctx.g.set_layer(o.task, ctx.g.layer_of(call));
    ctx.g.set_phase(o.task, ctx.g.phase(call));
  }
}

}  // namespace reverie::depgraph::internal
