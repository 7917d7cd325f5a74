#include "transforms/structure.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/median.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "base/text.h"
#include "depgraph/runtime_api.h"

namespace reverie::transforms {
namespace {

using depgraph::ResourceKind;
using depgraph::TaskKind;

bool Contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

absl::Status CheckTimes(const TaskSpec& spec) {
  // The bound keeps the simulator's sums from overflowing (transforms/edit.h).
  if (spec.duration_ns < 0 || spec.gap_ns < 0 || spec.duration_ns > kMaxDurationNs ||
      spec.gap_ns > kMaxDurationNs) {
    return absl::InvalidArgumentError(absl::StrCat("task '", Sv(spec.name),
                                                   "' needs duration and gap in [0, 2^50 ns], got ",
                                                   spec.duration_ns, " and ", spec.gap_ns));
  }
  if (spec.bytes < 0) return absl::InvalidArgumentError("bytes must be >= 0");
  return absl::OkStatus();
}

// The resource a placement puts a task on, after checking the anchor.
absl::StatusOr<ResourceId> TargetResource(const Graph& g, const Where& w) {
  if (w.placement == Where::Placement::kAppend) {
    if (!w.resource.valid() || w.resource.value() >= g.resource_count()) {
      return absl::NotFoundError(absl::StrCat("no resource ", w.resource.value()));
    }
    return w.resource;
  }
  REVERIE_RETURN_IF_ERROR(CheckLive(g, w.anchor));
  return g.resource_of(w.anchor);
}

// The launch call of the nearest GPU task on `t`'s stream, walking
// backwards (forward when `forward`) from `t` itself.
TaskId NearestLauncher(const Graph& g, TaskId t, bool forward, int64_t* walked) {
  for (TaskId cur = t; cur.valid();
       cur = forward ? g.next_on_resource(cur) : g.prev_on_resource(cur)) {
    ++*walked;
    const TaskId l = LauncherOf(g, cur);
    if (l.valid()) return l;
  }
  return TaskId::Invalid();
}

}  // namespace

absl::Status CheckLive(const Graph& g, TaskId t) {
  if (!t.valid() || t.value() >= g.task_count()) {
    return absl::NotFoundError(absl::StrCat("no task ", t.valid() ? t.value() : -1));
  }
  if (g.removed(t)) {
    return absl::FailedPreconditionError(absl::StrCat("task ", t.value(), " (", Sv(g.name(t)),
                                                      ") was removed"));
  }
  return absl::OkStatus();
}

bool KindFitsResource(TaskKind tk, ResourceKind rk) {
  switch (rk) {
    case ResourceKind::kCpuThread: return depgraph::IsCpuKind(tk);
    case ResourceKind::kGpuStream: return depgraph::IsGpuKind(tk);
    case ResourceKind::kCommChannel: return tk == TaskKind::kComm;
  }
  return false;
}

absl::StatusOr<TaskId> InsertTask(Graph& g, const Where& w, const TaskSpec& spec) {
  REVERIE_ASSIGN_OR_RETURN(ResourceId r, TargetResource(g, w));
  REVERIE_RETURN_IF_ERROR(CheckTimes(spec));
  const depgraph::Resource& res = g.resource(r);
  if (!KindFitsResource(spec.kind, res.kind)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a ", Sv(depgraph::TaskKindName(spec.kind)), " task cannot run on ",
        Sv(depgraph::ResourceKindName(res.kind)), " '", res.name, "'"));
  }
  switch (w.placement) {
    case Where::Placement::kAfter: return g.InsertTaskAfter(w.anchor, spec);
    case Where::Placement::kBefore: return g.InsertTaskBefore(w.anchor, spec);
    case Where::Placement::kAppend: {
      TaskSpec s = spec;
      s.resource = r;
      return g.AppendTask(s);
    }
  }
  return absl::InternalError("bad placement");
}

LaunchModel InferLaunchModel(const Graph& g) {
  std::vector<int64_t> kernel, memcpy, memset, delay;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kCpuApi) continue;
    const std::string_view n = g.name(t);
    if (depgraph::IsKernelLaunchApi(n)) {
      kernel.push_back(g.duration_ns(t));
    } else if (Contains(n, "Memcpy") && Contains(n, "Async")) {
      memcpy.push_back(g.duration_ns(t));
    } else if (Contains(n, "Memset") && Contains(n, "Async")) {
      memset.push_back(g.duration_ns(t));
    }
  }
  for (const depgraph::Edge& e : g.edges()) {
    if (e.removed || e.kind != EdgeKind::kLaunch) continue;
    if (depgraph::IsKernelLaunchApi(g.name(e.src))) delay.push_back(e.delay_ns);
  }
  LaunchModel m;
  m.kernel_launch_samples = static_cast<int64_t>(kernel.size());
  m.kernel_launch_ns = UpperMedianInPlace(kernel, LaunchModel::kDefaultLaunchNs);
  m.memcpy_launch_ns = UpperMedianInPlace(memcpy, m.kernel_launch_ns);
  m.memset_launch_ns = UpperMedianInPlace(memset, m.kernel_launch_ns);
  m.launch_delay_ns = static_cast<int32_t>(UpperMedianInPlace(delay, 0));
  return m;
}

TaskId LauncherOf(const Graph& g, TaskId gpu) {
  const depgraph::EdgeId e = g.launch_edge_in(gpu);
  return e.valid() ? g.edge(e).src : TaskId::Invalid();
}

absl::StatusOr<InsertedGpuTask> InsertGpuTask(Graph& g, const Where& w, const TaskSpec& spec,
                                              const LaunchOptions& o, const LaunchModel& model,
                                              int64_t* walked) {
  int64_t walked_here = 0;
  if (walked == nullptr) walked = &walked_here;
  if (!depgraph::IsGpuKind(spec.kind)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "InsertGpuTask needs a kernel, memcpy or memset, not ", Sv(TaskKindName(spec.kind))));
  }
  REVERIE_ASSIGN_OR_RETURN(ResourceId r, TargetResource(g, w));
  REVERIE_RETURN_IF_ERROR(CheckTimes(spec));
  if (g.resource(r).kind != ResourceKind::kGpuStream) {
    return absl::InvalidArgumentError(
        absl::StrCat("GPU task '", Sv(spec.name), "' must go on a stream, not on '",
                     g.resource(r).name, "'"));
  }
  // Find where the launch call goes before changing anything.
  TaskId launch_anchor;
  bool launch_before = false;
  // Next to the anchor's own launch call (or an earlier one on the stream) the
  // new edge cannot close a cycle: the launch call's only predecessor is a
  // call that already precedes the anchor. An explicit anchor, or the next
  // launch call after the anchor, can, so those are checked.
  bool check_cycle = false;
  if (o.with_launch) {
    if (o.launch_after.valid()) {
      REVERIE_RETURN_IF_ERROR(CheckLive(g, o.launch_after));
      if (g.resource(g.resource_of(o.launch_after)).kind != ResourceKind::kCpuThread) {
        return absl::InvalidArgumentError(absl::StrCat(
            "launch_after task ", o.launch_after.value(), " is not on a CPU thread"));
      }
      launch_anchor = o.launch_after;
      check_cycle = true;
    } else if (w.placement == Where::Placement::kBefore) {
      launch_anchor = NearestLauncher(g, w.anchor, /*forward=*/true, walked);
      launch_before = true;
      check_cycle = launch_anchor != LauncherOf(g, w.anchor);
    } else {
      const TaskId from = w.placement == Where::Placement::kAfter ? w.anchor
                                                                  : g.last_on_resource(r);
      if (from.valid()) launch_anchor = NearestLauncher(g, from, /*forward=*/false, walked);
    }
    if (!launch_anchor.valid()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no launch call to place the launch of '", Sv(spec.name),
          "' next to (no GPU task near the anchor has one); give launch_after"));
    }
    if (o.launch_gap_ns < 0 || o.launch_duration_ns < -1) {
      return absl::InvalidArgumentError("launch duration and gap must be >= 0");
    }
  }
  TaskSpec gpu_spec = spec;
  gpu_spec.measured_start_ns = depgraph::kNotMeasured;
  REVERIE_ASSIGN_OR_RETURN(TaskId gpu, InsertTask(g, w, gpu_spec));
  InsertedGpuTask out{gpu, TaskId::Invalid()};
  if (!o.with_launch) return out;

  TaskSpec launch;
  launch.kind = TaskKind::kCpuApi;
  std::string name = o.launch_name;
  int64_t duration = o.launch_duration_ns;
  switch (spec.kind) {
    case TaskKind::kMemcpy:
      if (name.empty()) name = "cudaMemcpyAsync";
      if (duration < 0) duration = model.memcpy_launch_ns;
      break;
    case TaskKind::kMemset:
      if (name.empty()) name = "cudaMemsetAsync";
      if (duration < 0) duration = model.memset_launch_ns;
      break;
    default:
      if (name.empty()) name = "cudaLaunchKernel";
      if (duration < 0) duration = model.kernel_launch_ns;
      break;
  }
  launch.name = name;
  launch.duration_ns = duration;
  launch.gap_ns = o.launch_gap_ns;
  launch.layer = spec.layer;
  launch.phase = spec.phase;
  launch.step = spec.step;
  out.launch = launch_before ? g.InsertTaskBefore(launch_anchor, launch)
                             : g.InsertTaskAfter(launch_anchor, launch);
  // E.g. a launch placed after a call that waits for work behind the new GPU
  // task. Undo leaves only removed (never reused) task ids behind.
  if (check_cycle && g.Reaches(out.gpu, out.launch)) {
    g.RemoveTasks({out.gpu, out.launch});
    return absl::FailedPreconditionError(absl::StrCat(
        "launching '", Sv(spec.name), "' from task ", launch_anchor.value(),
        " would create a dependency cycle"));
  }
  g.AddEdge(out.launch, out.gpu, EdgeKind::kLaunch, model.launch_delay_ns);
  return out;
}

absl::StatusOr<EdgeId> AddDependency(Graph& g, TaskId src, TaskId dst, EdgeKind kind,
                                     int32_t delay_ns) {
  REVERIE_RETURN_IF_ERROR(CheckLive(g, src));
  REVERIE_RETURN_IF_ERROR(CheckLive(g, dst));
  if (src == dst) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", src.value(), " cannot depend on itself"));
  }
  if (g.Reaches(dst, src)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "dependency ", src.value(), " (", Abbreviate(g.name(src), 80), ") -> ", dst.value(),
        " (", Abbreviate(g.name(dst), 80), ") would create a cycle: ", dst.value(),
        " already leads to ",
        src.value()));
  }
  return g.AddEdge(src, dst, kind, delay_ns);
}

absl::Status AddDependencies(Graph& g, const std::vector<Dependency>& deps) {
  for (const Dependency& d : deps) {
    REVERIE_RETURN_IF_ERROR(CheckLive(g, d.src));
    REVERIE_RETURN_IF_ERROR(CheckLive(g, d.dst));
    if (d.src == d.dst) {
      return absl::FailedPreconditionError(
          absl::StrCat("task ", d.src.value(), " cannot depend on itself"));
    }
  }
  std::vector<EdgeId> added;
  added.reserve(deps.size());
  for (const Dependency& d : deps) added.push_back(g.AddEdge(d.src, d.dst, d.kind, d.delay_ns));
  absl::Status v = g.Validate();
  if (v.ok()) return v;
  for (EdgeId e : added) g.RemoveEdge(e);
  return absl::FailedPreconditionError(
      absl::StrCat("the ", deps.size(), " new dependencies would create a cycle: ", v.message()));
}

absl::StatusOr<int> RemoveDependency(Graph& g, TaskId src, TaskId dst) {
  REVERIE_RETURN_IF_ERROR(CheckLive(g, src));
  REVERIE_RETURN_IF_ERROR(CheckLive(g, dst));
  const depgraph::Adjacency& adj = g.adjacency();
  std::vector<EdgeId> doomed;
  for (const auto edge : adj.out(src)) {
    if (g.edge(edge).dst == dst) doomed.push_back(edge);
  }
  if (doomed.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no dependency ", src.value(), " -> ", dst.value()));
  }
  for (EdgeId e : doomed) g.RemoveEdge(e);
  return static_cast<int>(doomed.size());
}

ResourceId AddCommChannel(Graph& g, std::string_view name) {
  return ResourceNumbering().AddCommChannel(g, name);
}

ResourceId AddGpuStream(Graph& g, int32_t device, std::string_view name) {
  return ResourceNumbering().AddGpuStream(g, device, name);
}

ResourceId AddCpuThread(Graph& g, std::string_view name) {
  return ResourceNumbering().AddCpuThread(g, name);
}

void ResourceNumbering::Scan(const Graph& g) {
  if (scanned_) return;
  scanned_ = true;
  for (uint32_t r = 0; r < g.resource_count(); ++r) {
    const depgraph::Resource& res = g.resource(ResourceId(r));
    switch (res.kind) {
      case ResourceKind::kCommChannel: ++channels_; break;
      case ResourceKind::kGpuStream: {
        Streams& s = streams_[res.device];
        s.next_id = std::max(s.next_id, res.native_id + 1);
        s.pid = res.pid;  // the last stream's, as before
        break;
      }
      case ResourceKind::kCpuThread:
        if (!have_thread_pid_) thread_pid_ = res.pid;  // the first thread's
        have_thread_pid_ = true;
        break;
    }
  }
}

ResourceId ResourceNumbering::AddCommChannel(Graph& g, std::string_view name) {
  Scan(g);
  depgraph::Resource res;
  res.kind = ResourceKind::kCommChannel;
  res.native_id = channels_++;
  res.name = std::string(name);
  res.ordered = false;
  return g.AddResource(std::move(res));
}

ResourceId ResourceNumbering::AddGpuStream(Graph& g, int32_t device, std::string_view name) {
  Scan(g);
  Streams& s = streams_[device];
  depgraph::Resource res;
  res.kind = ResourceKind::kGpuStream;
  res.pid = s.pid;
  res.native_id = s.next_id++;
  res.device = device;
  res.name = name.empty() ? absl::StrCat("stream ", res.native_id, " (gpu ", device, ", added)")
                          : std::string(name);
  return g.AddResource(std::move(res));
}

ResourceId ResourceNumbering::AddCpuThread(Graph& g, std::string_view name) {
  Scan(g);
  depgraph::Resource res;
  res.kind = ResourceKind::kCpuThread;
  res.pid = thread_pid_;
  res.native_id = -static_cast<int64_t>(g.resource_count()) - 1;  // not a real tid
  res.name = name.empty() ? std::string("added thread") : std::string(name);
  have_thread_pid_ = true;
  return g.AddResource(std::move(res));
}

}  // namespace reverie::transforms
