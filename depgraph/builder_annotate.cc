// File: depgraph/builder_annotate.cc
//
// Layer, phase and step of every task (Daydream §4.3, sync-free): a CPU
// task takes layer and phase from the Ranges enclosing it on its thread; its
// step is the one whose CPU span contains it whole, on any thread (the
// profiler overview's rule, depgraph/step_time.h); a GPU task takes its
// launching call's (none when it was only anchored on a call).
#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "depgraph/builder_internal.h"
#include "depgraph/step_time.h"

namespace reverie::depgraph::internal {
namespace {

using ThreadKey = std::pair<int64_t, int64_t>;

}  // namespace

// Layer for a dotted module path, creating its ancestors ("a", "a.b") first.
// Iterative: the longest known ancestor is found from the path's end, then
// the missing ones are made outward in. Paths are within the bounds of
// proto/trace_validate.h (kMaxModulePathDepth levels, kMaxModulePathBytes),
// so this hashes at most depth x bytes of text (issue 29, D22: recursion
// on a path of 100,000 levels).
LayerId LayerFor(Graph& g, std::string_view path) {
  std::vector<size_t> ends;  // prefix lengths still to make, longest first
  LayerId parent;
  for (size_t end = path.size();;) {
    if (const LayerId known = g.FindLayer(path.substr(0, end)); known.valid()) {
      parent = known;
      break;
    }
    ends.push_back(end);
    const size_t dot = end == 0 ? std::string_view::npos : path.rfind('.', end - 1);
    if (dot == std::string_view::npos) break;
    end = dot;
  }
  for (auto it = ends.rbegin(); it != ends.rend(); ++it) parent = g.AddLayer(path.substr(0, *it), parent);
  return parent;
}

namespace {

struct Open {
  int64_t end;
  LayerId layer;
  Phase phase;
  bool optimizer_step;  // inside PyTorch's `Optimizer.step#<Class>.step`
};

bool IsOptimizerStep(std::string_view range_name) {
  return range_name.substr(0, 15) == "Optimizer.step#" || range_name == "Optimizer.step";
}

// Assigns layer and phase to the CPU tasks of one thread (in time order)
// from its ranges (indices into trace ranges, sorted by start, outer first).
void AnnotateThread(Context& ctx, const std::vector<Timed>& tasks,
                    const std::vector<uint32_t>& ranges,
                    absl::flat_hash_map<uint32_t, LayerId>& layer_of_sid) {
  const auto& all = ctx.trace.events().ranges();
  std::vector<Open> stack;
  size_t next = 0;
  for (const Timed& task : tasks) {
    const int64_t t = task.start;
    while (next < ranges.size() && all[static_cast<int>(ranges[next])].start_ns() <= t) {
      const proto::Range& r = all[static_cast<int>(ranges[next++])];
      while (!stack.empty() && stack.back().end <= r.start_ns()) stack.pop_back();
      Open o{r.end_ns(), stack.empty() ? LayerId::Invalid() : stack.back().layer,
             stack.empty() ? Phase::kUnknown : stack.back().phase,
             (!stack.empty() && stack.back().optimizer_step) ||
                 IsOptimizerStep(ctx.trace.String(r.name_sid()))};
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
    ctx.g.set_layer(task.task, stack.back().layer);
    ctx.g.set_phase(task.task, stack.back().phase);
    if (stack.back().optimizer_step) ctx.g.set_in_optimizer_step(task.task);
  }
}

// The step whose CPU span contains [s, e] whole, or -1.
int32_t StepContaining(const std::vector<StepInfo>& steps, const std::vector<int64_t>& starts,
                       int64_t s, int64_t e) {
  auto it = std::upper_bound(starts.begin(), starts.end(), s);
  // Spans of different threads may overlap: try the few latest started.
  for (int k = 0; k < 4 && it != starts.begin(); ++k) {
    --it;
    const size_t i = static_cast<size_t>(it - starts.begin());
    if (e <= steps[i].end) return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace

void Annotate(Context& ctx) {
  const proto::TraceChunk& ev = ctx.trace.events();
  // ---- steps ----
  std::vector<int64_t> starts;
  for (const StepInfo& st : ctx.steps) starts.push_back(st.start);
  auto step_of = [&](int64_t s, int64_t e) -> int32_t {
    if (ctx.steps.empty()) return 0;  // the whole-trace step
    return StepContaining(ctx.steps, starts, s, e);
  };
  for (CpuCall& call : ctx.calls) {
    call.step = step_of(call.start, call.end);
    ctx.g.set_step(call.task, call.step);
  }
  for (const CpuPiece& p : ctx.pieces) {
    if (!ctx.g.is_step_mark(p.task)) ctx.g.set_step(p.task, step_of(p.start, p.end));
  }
  // ---- layers and phases ----
  absl::flat_hash_map<ThreadKey, std::vector<uint32_t>> ranges;
  for (int i = 0; i < ev.ranges_size(); ++i) {
    const proto::Range& r = ev.ranges(i);
    if (r.kind() == proto::Range::GPU_ANNOTATION) continue;
    if (r.module_path_sid() == 0 && r.phase() == proto::PHASE_UNKNOWN) continue;
    ranges[{r.pid(), r.tid()}].push_back(static_cast<uint32_t>(i));
  }
  std::vector<std::vector<Timed>> pieces(ctx.threads.size());
  for (const CpuPiece& p : ctx.pieces) {
    if (p.thread != kNone) pieces[p.thread].push_back({p.start, p.task});
  }
  absl::flat_hash_map<uint32_t, LayerId> layer_of_sid;
  for (uint32_t t = 0; t < ctx.threads.size(); ++t) {
    const ThreadInfo& th = ctx.threads[t];
    auto it = ranges.find({th.pid, th.tid});
    if (it == ranges.end()) continue;
    std::vector<uint32_t>& list = it->second;
    SortUnlessSorted(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      const proto::Range& x = ev.ranges(static_cast<int>(a));
      const proto::Range& y = ev.ranges(static_cast<int>(b));
      return std::make_tuple(x.start_ns(), -x.end_ns(), a) <
             std::make_tuple(y.start_ns(), -y.end_ns(), b);
    });
    std::vector<Timed> tasks = std::move(pieces[t]);
    const size_t mid = tasks.size();
    for (uint32_t c = th.begin; c < th.end; ++c) tasks.push_back({ctx.calls[c].start, ctx.calls[c].task});
    SortRuns(tasks, {0, mid}, StartsBefore);
    AnnotateThread(ctx, tasks, list, layer_of_sid);
  }
  // ---- GPU tasks inherit from their launch ----
  for (const GpuOp& o : ctx.ops) {
    if (o.launch == kNone) {
      ctx.g.set_step(o.task, ctx.steps.empty() ? 0 : -1);
      continue;
    }
    const TaskId call = ctx.calls[o.launch].task;
    ctx.g.set_step(o.task, o.anchored && !ctx.steps.empty() ? -1 : ctx.calls[o.launch].step);
    ctx.g.set_layer(o.task, ctx.g.layer_of(call));
    ctx.g.set_phase(o.task, ctx.g.phase(call));
    ctx.g.set_op(o.task, ctx.g.op_of(call));
    if (ctx.g.in_optimizer_step(call)) ctx.g.set_in_optimizer_step(o.task);
  }
  if (const int dropped = MarkCountedSteps(&ctx.g); dropped > 0) {
    ctx.stats.Add(BuildCounter::steps_not_counted, dropped);
  }
}

}  // namespace reverie::depgraph::internal
