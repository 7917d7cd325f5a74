// File: depgraph/builder_cpu_time.cc
//
// What a CPU thread does between its API calls, made explicit.
//
// A call's gap (the untraced CPU time until the next call) mixes three kinds
// of time: the rest of the framework op that issued the call (an aten op's
// dispatcher, shape checks, allocation), framework time between ops (Python,
// the data loader), and the start of the next op. Daydream keeps framework
// time as its own tasks; so do we, where the trace records op spans (Kineto
// `cpu_op`): each stretch of a gap becomes a kCpuWork task owned by the
// innermost op that issued calls and contains it (named after the op), or
// by no op (framework time, named after the innermost user annotation
// around it, "enumerate(DataLoader)#...", else "[framework]"). Removing an
// op's launches can then remove the op's own time and nothing else
// (transforms/remove.h). A thread without op spans keeps today's gaps
// (counter cpu_threads_without_ops).
//
// The profiler's step markers become zero-length tasks at the step's start
// and end on its thread (Graph::step_mark), cutting the gap there, so the
// simulated step span comes from the simulated timeline (step_time.h). A
// marker inside a call or inside a wait the graph models with an edge sits
// where the modelled CPU time ends (counter step_mark_moved).
//
// Only the gap windows [call end, call end + gap] are split, so the modelled
// time of every thread is unchanged: replay gives the same starts as before.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/median.h"
#include "depgraph/builder_internal.h"
#include "hardware/math_type.h"
#include "hardware/op_work.h"

namespace reverie::depgraph::internal {
namespace {

using ThreadKey = std::pair<int64_t, int64_t>;

// Record-function style names, which Kineto's 2021 schema files under the
// same category as ops: "ProfilerStep#3", "Optimizer.step#Adam.step",
// "enumerate(DataLoader)#...", "## forward ##". They are annotations, not ops.
bool IsAnnotationName(std::string_view name) {
  return name.find('#') != std::string_view::npos || name.substr(0, 10) == "enumerate(";
}

struct Span {
  int64_t start, end;
  uint32_t name_sid;
  bool op;            // a framework op (else an annotation or a layer)
  bool layer;         // a module (names no framework time)
  bool step;          // a ProfilerStep range (names no framework time either)
  bool issues = false;  // op that contains an API call of the thread
  OpId id;            // its graph op when it issues calls
  const proto::Range* range = nullptr;  // the trace's range (its recorded inputs)
};

struct Mark {
  int64_t time;
  int32_t step;
  StepMark kind;
};

// Innermost enclosing spans while sweeping a thread's time forward. Spans
// are sorted by (start, -end, annotation first), so a stack is the nesting.
class Sweep {
 public:
  explicit Sweep(const std::vector<Span>& spans) : spans_(spans) {}
  // Opens every span that started at or before t, closes the ones ended by t.
  void AdvanceTo(int64_t t) {
    while (next_ < spans_.size() && spans_[next_].start <= t) {
      Close(spans_[next_].start);
      stack_.push_back(static_cast<uint32_t>(next_++));
    }
    Close(t);
  }
  // The innermost open op (issuing calls, when `issuing`), or -1.
  int InnermostOp(bool issuing) const {
    for (size_t i = stack_.size(); i-- > 0;) {
      const Span& s = spans_[stack_[i]];
      if (s.op && (!issuing || s.issues)) return static_cast<int>(stack_[i]);
    }
    return -1;
  }
  // The innermost open annotation (not a layer), or -1.
  int Annotation() const {
    for (size_t i = stack_.size(); i-- > 0;) {
      const Span& s = spans_[stack_[i]];
      if (!s.op && !s.layer && !s.step) return static_cast<int>(stack_[i]);
    }
    return -1;
  }

 private:
  void Close(int64_t t) {
    while (!stack_.empty() && spans_[stack_.back()].end <= t) stack_.pop_back();
  }
  const std::vector<Span>& spans_;
  size_t next_ = 0;
  std::vector<uint32_t> stack_;
};

// The recorded inputs of an op range as the cost model reads them; nullopt
// when they contradict themselves (list ranks that do not add up to the
// dims, from a hand-made .pb). Sizes are clamped to [0, 2^40].
std::optional<hardware::OpArgs> OpArgsOf(const Trace& trace, const proto::Range& r) {
  constexpr int64_t kMaxDim = int64_t{1} << 40;
  hardware::OpArgs out;
  out.reserve(r.inputs_size());
  for (const proto::OpInput& in : r.inputs()) {
    hardware::OpArg a;
    a.type = std::string(trace.String(in.type_sid()));
    a.concrete = std::string(trace.String(in.concrete_sid()));
    a.is_list = in.is_list();
    auto dim = [&](int i) { return std::clamp<int64_t>(in.dims(i), 0, kMaxDim); };
    if (in.is_list()) {
      int at = 0;
      for (int32_t rank : in.list_ranks()) {
        if (rank < 0 || at + rank > in.dims_size()) return std::nullopt;
        std::vector<int64_t>& s = a.shapes.emplace_back();
        for (int i = 0; i < rank; ++i) s.push_back(dim(at + i));
        at += rank;
      }
      if (at != in.dims_size()) return std::nullopt;
    } else if (in.dims_size() > 0 || hardware::ElementBytes(a.type) > 0) {
      // [] of a tensor type is a 0-d tensor; [] of "Scalar" is no tensor.
      std::vector<int64_t>& s = a.shapes.emplace_back();
      for (int i = 0; i < in.dims_size(); ++i) s.push_back(dim(i));
    }
    out.push_back(std::move(a));
  }
  return out;
}

class ThreadSplitter {
 public:
  ThreadSplitter(Context& ctx, uint32_t thread, std::vector<Span> spans, std::vector<Mark> marks)
      : ctx_(ctx), th_(ctx.threads[thread]), thread_(thread), spans_(std::move(spans)),
        marks_(std::move(marks)), owners_(spans_) {}

  void Run() {
    if (ctx_.opts.cpu_ops) {
      MarkIssuingOps();
      CountOpsWithoutCalls();
    }
    CollectBounds();
    if (!op_mode_) ctx_.stats.Add(BuildCounter::cpu_threads_without_ops);
    size_t m = OpenWithMarks();
    Sweep calls(spans_);
    for (uint32_t c = th_.begin; c < th_.end; ++c) {
      const CpuCall& call = ctx_.calls[c];
      calls.AdvanceTo(call.start);
      const int owner = calls.InnermostOp(true);
      if (owner >= 0) ctx_.g.set_op(call.task, spans_[owner].id);
      const bool last = c + 1 == th_.end;
      const int64_t w0 = call.end;
      int64_t w1 = call.end + std::max<int64_t>(0, ctx_.g.gap_ns(call.task));
      const int64_t next_start = last ? INT64_MAX : ctx_.calls[c + 1].start;
      size_t m_end = m;
      while (m_end < marks_.size() && marks_[m_end].time < next_start) ++m_end;
      // The last call's window runs to the last marker: the CPU time of the
      // step after its last call.
      if (last && m_end > m) w1 = std::max(w1, marks_[m_end - 1].time);
      for (size_t i = m; i < m_end; ++i) {
        if (marks_[i].time < w0 || marks_[i].time > w1) ctx_.stats.Add(BuildCounter::step_mark_moved);
      }
      SplitWindow(call.task, w0, w1, m, m_end);
      m = m_end;
    }
  }

 private:
  TaskSpec MarkSpec(const Mark& mk, std::string* name) const {
    TaskSpec s;
    s.kind = TaskKind::kCpuWork;
    *name = ctx_.g.step_info(mk.step).name;
    if (mk.kind == StepMark::kEnd) *name += " end";
    s.name = *name;
    s.measured_start_ns = mk.time;
    s.step_mark = mk.kind;
    s.step = mk.step;
    return s;
  }

  TaskId AddMark(const Mark& mk, TaskId after, TaskId before) {
    std::string name;
    const TaskSpec s = MarkSpec(mk, &name);
    const TaskId t = after.valid() ? ctx_.g.InsertTaskAfter(after, s)
                                   : ctx_.g.InsertTaskBefore(before, s);
    ctx_.pieces.push_back({t, mk.time, mk.time, thread_});
    return t;
  }

  // Markers before the thread's first call come first on the thread; the
  // time from the first of them to the call is split like any gap.
  size_t OpenWithMarks() {
    const CpuCall& first = ctx_.calls[th_.begin];
    size_t m_end = 0;
    while (m_end < marks_.size() && marks_[m_end].time < first.start) ++m_end;
    if (m_end == 0) return 0;
    const TaskId head = AddMark(marks_[0], TaskId::Invalid(), first.task);
    SplitWindow(head, marks_[0].time, first.start, 1, m_end);
    return m_end;
  }

  // An op that contains an API call issues calls, and so do the ops around
  // it; those become graph ops, parents first (spans_ is in pre-order).
  void MarkIssuingOps() {
    std::vector<int> parent(spans_.size(), -1);
    std::vector<int> open;
    for (size_t i = 0; i < spans_.size(); ++i) {
      while (!open.empty() && spans_[open.back()].end <= spans_[i].start) open.pop_back();
      for (size_t j = open.size(); j-- > 0;) {
        if (spans_[open[j]].op) {
          parent[i] = open[j];
          break;
        }
      }
      open.push_back(static_cast<int>(i));
    }
    std::vector<uint8_t> hit(spans_.size(), 0);
    Sweep sweep(spans_);
    for (uint32_t c = th_.begin; c < th_.end; ++c) {
      sweep.AdvanceTo(ctx_.calls[c].start);
      const int op = sweep.InnermostOp(false);
      if (op >= 0) hit[op] = 1;
    }
    for (size_t i = spans_.size(); i-- > 0;) {
      if (hit[i] && parent[i] >= 0) hit[parent[i]] = 1;
    }
    for (size_t i = 0; i < spans_.size(); ++i) {
      if (!hit[i]) continue;
      spans_[i].issues = true;
      const OpId p = parent[i] >= 0 ? spans_[parent[i]].id : OpId();
      spans_[i].id = ctx_.g.AddOp(ctx_.trace.String(spans_[i].name_sid), p, 0);
      if (spans_[i].range != nullptr && spans_[i].range->inputs_size() > 0) {
        if (std::optional<hardware::OpArgs> in = OpArgsOf(ctx_.trace, *spans_[i].range)) {
          ctx_.g.set_op_inputs(spans_[i].id, *std::move(in));
        } else {
          ctx_.stats.Add(BuildCounter::op_inputs_inconsistent);
        }
      }
      op_mode_ = true;
      ctx_.stats.Add(BuildCounter::cpu_ops);
    }
  }

  // The durations of the ops that issued no call, by name (their median
  // becomes Graph::op_cost_without_calls).
  void CountOpsWithoutCalls() {
    for (const Span& s : spans_) {
      if (s.op && !s.issues) ctx_.op_ns_without_calls[s.name_sid].push_back(s.end - s.start);
    }
  }

  // Splits the gap window [w0, w1] after `call` at issuing ops' boundaries
  // (op mode) and at markers m..m_end (their times clamped into the window).
  void SplitWindow(TaskId call, int64_t w0, int64_t w1, size_t m, size_t m_end) {
    std::vector<std::pair<int64_t, int>>& cuts = cuts_;  // time, marker index or -1
    cuts.clear();
    for (size_t i = m; i < m_end; ++i) {
      cuts.push_back({std::clamp(marks_[i].time, w0, w1), static_cast<int>(i)});
    }
    if (op_mode_) {
      auto from = std::lower_bound(bounds_.begin(), bounds_.end(), w0 + 1);
      for (; from != bounds_.end() && *from < w1; ++from) cuts.push_back({*from, -1});
    }
    if (cuts.empty() && !op_mode_) {
      ctx_.g.set_gap_ns(call, w1 - w0);
      return;
    }
    std::stable_sort(cuts.begin(), cuts.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    cuts.push_back({w1, -1});
    TaskId prev = call;
    int64_t at = w0;
    ctx_.g.set_gap_ns(call, 0);
    for (const auto& [time, mark] : cuts) {
      if (time > at) {
        if (op_mode_) {
          prev = AddStretch(prev, at, time);
        } else {
          ctx_.g.set_gap_ns(prev, time - at);
        }
        at = time;
      }
      if (mark >= 0) {
        prev = AddMark(marks_[mark], prev, TaskId::Invalid());
        ctx_.g.set_gap_ns(prev, 0);
      }
    }
  }

  // A task for [from, to) owned by the innermost issuing op around it, or
  // the previous stretch grown when it has the same owner and name.
  TaskId AddStretch(TaskId prev, int64_t from, int64_t to) {
    owners_.AdvanceTo(from);
    const int owner = owners_.InnermostOp(true);
    const OpId op = owner >= 0 ? spans_[owner].id : OpId();
    if (op.valid()) ctx_.g.set_op_own_ns(op, ctx_.g.op(op).own_ns + (to - from));
    const int note = owner >= 0 ? -1 : owners_.Annotation();
    const std::string_view name =
        owner >= 0 ? ctx_.trace.String(spans_[owner].name_sid)
                   : (note >= 0 ? ctx_.trace.String(spans_[note].name_sid)
                                : std::string_view("[framework]"));
    if (prev == last_stretch_ && ctx_.g.op_of(prev) == op && ctx_.g.name(prev) == name) {
      ctx_.g.set_duration_ns(prev, ctx_.g.duration_ns(prev) + (to - from));
      ctx_.pieces.back().end = to;
      return prev;
    }
    TaskSpec s{
        .kind = TaskKind::kCpuWork, .name = name, .duration_ns = to - from,
        .measured_start_ns = from, .op = op};
    last_stretch_ = ctx_.g.InsertTaskAfter(prev, s);
    ctx_.pieces.push_back({last_stretch_, from, to, thread_});
    return last_stretch_;
  }

  // Where a stretch of CPU time changes owner, name, phase or layer: the
  // boundaries of issuing ops, annotations and layers (op mode only; an op
  // that issues no call is part of its owner's or the framework's time).
  void CollectBounds() {
    // The starts come sorted (spans_ is), so only the ends are sorted
    // before the two runs are merged.
    std::vector<int64_t> ends;
    for (const Span& s : spans_) {
      if (s.op && !s.issues) continue;
      bounds_.push_back(s.start);
      ends.push_back(s.end);
    }
    const size_t starts = bounds_.size();
    std::sort(ends.begin(), ends.end());
    bounds_.insert(bounds_.end(), ends.begin(), ends.end());
    SortRuns(bounds_, {0, starts}, std::less<int64_t>());
  }

  Context& ctx_;
  const ThreadInfo& th_;
  uint32_t thread_;
  std::vector<Span> spans_;
  std::vector<Mark> marks_;
  Sweep owners_;
  std::vector<int64_t> bounds_;
  // SplitWindow's cuts, kept between calls: one window per API call.
  std::vector<std::pair<int64_t, int>> cuts_;
  bool op_mode_ = false;
  TaskId last_stretch_;
};

}  // namespace

void AddSteps(Context& ctx) {
  const proto::TraceChunk& ev = ctx.trace.events();
  std::vector<int> order(ev.steps_size());
  for (int i = 0; i < ev.steps_size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return std::make_pair(ev.steps(a).start_ns(), a) <
           std::make_pair(ev.steps(b).start_ns(), b);
  });
  for (int i : order) {
    const proto::Step& it = ev.steps(i);
    std::string name(ctx.trace.String(it.name_sid()));
    if (name.empty()) name = "ProfilerStep#" + std::to_string(it.index());
    const int64_t end = std::max(it.start_ns(), it.end_ns());
    ctx.g.AddStep({name, it.start_ns(), end});
    ctx.steps.push_back({it.start_ns(), end, it.pid(), it.tid()});
  }
  if (!ctx.steps.empty()) return;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const CpuCall& c : ctx.calls) lo = std::min(lo, c.start), hi = std::max(hi, c.end);
  for (const GpuOp& o : ctx.ops) lo = std::min(lo, o.start), hi = std::max(hi, o.end);
  ctx.g.AddStep({"whole trace", lo, hi});
  ctx.stats.Add(BuildCounter::trace_without_steps);
}

}  // namespace reverie::depgraph::internal

namespace reverie::depgraph::internal {

void SplitCpuTime(Context& ctx) {
  const proto::TraceChunk& ev = ctx.trace.events();
  absl::flat_hash_map<ThreadKey, std::vector<Span>> spans;
  for (const proto::Range& r : ev.ranges()) {
    if (r.kind() == proto::Range::GPU_ANNOTATION || r.end_ns() <= r.start_ns()) continue;
    const std::string_view name = ctx.trace.String(r.name_sid());
    const bool op = r.kind() == proto::Range::CPU_OP && !IsAnnotationName(name);
    const bool layer = r.kind() == proto::Range::LAYER;
    const bool step = name.substr(0, 13) == "ProfilerStep#";
    spans[{r.pid(), r.tid()}].push_back(
        {r.start_ns(), r.end_ns(), r.name_sid(), op, layer, step, false, OpId(), &r});
  }
  absl::flat_hash_map<ThreadKey, std::vector<Mark>> marks;
  for (size_t i = 0; i < ctx.steps.size(); ++i) {
    const StepInfo& st = ctx.steps[i];
    std::vector<Mark>& v = marks[{st.pid, st.tid}];
    v.push_back({st.start, static_cast<int32_t>(i), StepMark::kBegin});
    v.push_back({st.end, static_cast<int32_t>(i), StepMark::kEnd});
  }
  for (auto& [key, v] : marks) {
    // By time; at one time an end before the next step's begin.
    std::sort(v.begin(), v.end(), [](const Mark& a, const Mark& b) {
      return std::make_tuple(a.time, a.kind == StepMark::kBegin, a.step) <
             std::make_tuple(b.time, b.kind == StepMark::kBegin, b.step);
    });
  }
  for (auto& [key, v] : spans) {
    // Spans that tie (an op and its only child) keep the trace's order, in
    // which the importer put the parent first (kineto_ranges.h): sorting them
    // unstably could make the child the owner of the parent's time.
    const auto before = [](const Span& a, const Span& b) {
      return std::make_tuple(a.start, -a.end, a.op) < std::make_tuple(b.start, -b.end, b.op);
    };
    SortRuns(v, {0}, before);
  }
  for (uint32_t t = 0; t < ctx.threads.size(); ++t) {
    const ThreadInfo& th = ctx.threads[t];
    if (th.begin == th.end) continue;
    auto sp = spans.find({th.pid, th.tid});
    auto mk = marks.find({th.pid, th.tid});
    ThreadSplitter(ctx, t, sp == spans.end() ? std::vector<Span>() : std::move(sp->second),
                   mk == marks.end() ? std::vector<Mark>() : std::move(mk->second))
        .Run();
    if (mk != marks.end()) marks.erase(mk);
  }
  for (auto& [sid, v] : ctx.op_ns_without_calls) {
    ctx.g.SetOpCostWithoutCalls(ctx.trace.String(sid), UpperMedianInPlace(v));
  }
  // Steps on a thread without API calls: a thread of markers alone.
  for (auto& [key, v] : marks) {
    if (v.empty()) continue;
    const ResourceId r = ctx.g.AddResource(
        {ResourceKind::kCpuThread, key.first, key.second, -1,
         absl::StrCat("thread ", key.second, " (pid ", key.first, ", steps only)"), true});
    for (size_t i = 0; i < v.size(); ++i) {
      TaskSpec s;
      std::string name = ctx.g.step_info(v[i].step).name;
      if (v[i].kind == StepMark::kEnd) name += " end";
      s.kind = TaskKind::kCpuWork;
      s.name = name;
      s.resource = r;
      s.measured_start_ns = v[i].time;
      s.step_mark = v[i].kind;
      s.step = v[i].step;
      s.gap_ns = i + 1 < v.size() ? v[i + 1].time - v[i].time : 0;
      const TaskId task = ctx.g.AppendTask(s);
      ctx.pieces.push_back({task, v[i].time, v[i].time, kNone});
    }
    ctx.stats.Add(BuildCounter::steps_on_thread_without_calls);
  }
}

}  // namespace reverie::depgraph::internal
