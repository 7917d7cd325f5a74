#include "report/summary.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "depgraph/breakdown.h"
#include "depgraph/critical_path.h"

namespace reverie::report {
namespace {

using depgraph::Graph;
using depgraph::TaskId;

double Steps(const Graph& g) {
  return static_cast<double>(std::max<size_t>(g.step_count(), 1));
}

TimeByName ByLayer(const Graph& g) {
  TimeByName m;
  const double per = 1.0 / Steps(g);
  for (size_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(static_cast<uint32_t>(i));
    if (g.removed(t)) continue;
    const std::string name =
        g.layer_of(t).valid() ? g.layer(g.layer_of(t)).path : std::string("(no layer)");
    TimeCount& tc = m[name];
    tc.total_ns += static_cast<double>(g.duration_ns(t)) * per;
    tc.count += per;
  }
  return m;
}

TimeByName ByKernel(const Graph& g) {
  TimeByName m;
  const double per = 1.0 / Steps(g);
  for (size_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(static_cast<uint32_t>(i));
    if (g.removed(t) || depgraph::IsCpuKind(g.kind(t))) continue;
    TimeCount& tc = m[std::string(g.name(t))];
    tc.total_ns += static_cast<double>(g.duration_ns(t)) * per;
    tc.count += per;
  }
  return m;
}

std::vector<Diff> Deltas(const TimeByName& a, const TimeByName& b) {
  std::vector<Diff> out;
  JoinByName(a, b, &out, nullptr, nullptr);
  SortByAbsDiff(out);
  return out;
}

}  // namespace

std::vector<BreakdownRow> SimulatedBreakdown(const Graph& g, const depgraph::SimResult& sim) {
  std::vector<BreakdownRow> rows;
  for (const depgraph::StepBreakdown& it : depgraph::ComputeBreakdown(g, sim).steps) {
    BreakdownRow r;
    r.label = it.name.empty() ? absl::StrCat("step ", it.step) : it.name;
    r.cpu_only_ns = static_cast<double>(it.simulated.cpu_only_ns);
    r.gpu_only_ns = static_cast<double>(it.simulated.gpu_only_ns);
    r.both_ns = static_cast<double>(it.simulated.overlap_ns);
    r.idle_ns = static_cast<double>(it.simulated.idle_ns);
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<std::pair<std::string, std::string>> CriticalPathSummary(const Graph& g,
                                                                     const depgraph::SimResult& sim,
                                                                     int max_steps) {
  std::vector<std::pair<std::string, std::string>> rows;
  const std::vector<depgraph::CriticalPath> paths = depgraph::CriticalPaths(g, sim);
  auto pct = [](int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  auto top = [](const std::vector<depgraph::PathShare>& v, size_t n) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < n; ++i) {
      absl::StrAppend(&out, i > 0 ? ", " : "", v[i].name, absl::StrFormat(" %.1f%%", v[i].pct));
    }
    return out.empty() ? std::string("-") : out;
  };
  int shown = 0;
  for (const depgraph::CriticalPath& p : paths) {
    if (shown++ >= max_steps) break;
    const std::string name = p.name.empty() ? absl::StrCat("step ", p.step) : p.name;
    rows.emplace_back(absl::StrCat(name, ": length"),
                      absl::StrFormat("%.3f ms, %d tasks, %s-bound", p.length_ns / 1e6,
                                      p.tasks.size(), std::string(depgraph::BoundName(p.verdict))));
    rows.emplace_back(absl::StrCat(name, ": CPU / GPU / comm / latency"),
                      absl::StrFormat("%.1f%% / %.1f%% / %.1f%% / %.1f%%",
                                      pct(p.cpu_ns, p.length_ns), pct(p.gpu_ns, p.length_ns),
                                      pct(p.comm_ns, p.length_ns), pct(p.latency_ns, p.length_ns)));
    rows.emplace_back(absl::StrCat(name, ": top kernel classes"), top(p.by_kernel_class, 4));
    rows.emplace_back(absl::StrCat(name, ": top layers"), top(p.by_layer, 4));
  }
  if (paths.size() > static_cast<size_t>(max_steps)) {
    rows.emplace_back("more steps", absl::StrCat(paths.size() - max_steps, " not shown"));
  }
  return rows;
}

std::vector<Diff> LayerDeltas(const Graph& base, const Graph& other) {
  return Deltas(ByLayer(base), ByLayer(other));
}

std::vector<Diff> KernelDeltas(const Graph& base, const Graph& other) {
  return Deltas(ByKernel(base), ByKernel(other));
}

}  // namespace reverie::report
