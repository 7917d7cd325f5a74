#include "whatif/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/json_writer.h"
#include "base/sv.h"
#include "base/text.h"
#include "depgraph/builder.h"
#include "depgraph/step_time.h"

namespace reverie::whatif {
namespace {

using report::JoinByName;  // shared with the HTML report's tables
using report::SortByAbsDiff;

double Ms(double ns) { return ns / 1e6; }
double Us(double ns) { return ns / 1e3; }

void SortByTime(std::vector<Diff>& v) {
  std::stable_sort(v.begin(), v.end(), [](const Diff& x, const Diff& y) {
    return std::max(x.a_ns, x.b_ns) > std::max(y.a_ns, y.b_ns);
  });
}

void WriteDiffs(JsonWriter& w, std::string_view key, const std::vector<Diff>& v, int top_n) {
  w.Key(key).BeginArray();
  for (size_t i = 0; i < v.size() && static_cast<int>(i) < top_n; ++i) {
    w.BeginObject()
        .Field("name", v[i].name)
        .Field("a_us", Us(v[i].a_ns))
        .Field("b_us", Us(v[i].b_ns))
        .Field("diff_us", Us(v[i].diff_ns()))
        .Field("a_count", v[i].a_count)
        .Field("b_count", v[i].b_count)
        .EndObject();
  }
  w.EndArray();
}

void AppendDiffTable(std::string& out, const char* title, const std::vector<Diff>& v, int top_n) {
  absl::StrAppend(&out, "\n", title, " (ms per step, ", v.size(), " total)\n");
  if (v.empty()) {
    out += "  (none)\n";
    return;
  }
  absl::StrAppendFormat(&out, "  %-60s %10s %10s %10s\n", "name", "A", "B", "A-B");
  for (size_t i = 0; i < v.size() && static_cast<int>(i) < top_n; ++i) {
    absl::StrAppendFormat(&out, "  %-60s %10.3f %10.3f %+10.3f\n",
                  Ellipsize(v[i].name, 60).c_str(), Ms(v[i].a_ns), Ms(v[i].b_ns), Ms(v[i].diff_ns()));
  }
}

}  // namespace

namespace {

// The trace's events of process `pid` (and the GPU work its calls launched).
Trace OneProcess(const Trace& trace, int64_t pid) {
  Trace out;
  *out.events().mutable_strings() = trace.events().strings();
  absl::flat_hash_set<uint64_t> corr;
  for (const proto::ApiCall& a : trace.events().api_calls()) {
    if (a.pid() != pid) continue;
    *out.events().add_api_calls() = a;
    if (a.correlation_id() != 0) corr.insert(a.correlation_id());
  }
  for (const proto::GpuActivity& g : trace.events().gpu_activities()) {
    if (corr.contains(g.correlation_id())) *out.events().add_gpu_activities() = g;
  }
  for (const proto::Range& r : trace.events().ranges()) {
    if (r.pid() == pid && r.kind() != proto::Range::GPU_ANNOTATION) *out.events().add_ranges() = r;
  }
  for (const proto::Step& it : trace.events().steps()) {
    if (it.pid() == pid) *out.events().add_steps() = it;
  }
  out.Reindex();
  return out;
}

}  // namespace

// The classes every other command reports: by name and by context (a
// generic kernel inside Optimizer.step is the optimizer's).
void AddTaskClasses(const depgraph::Graph& g, TimeCount (&classes)[kKernelClassCount]) {
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const depgraph::TaskId t(i);
    const depgraph::TaskKind k = g.kind(t);
    if (g.removed(t) || (!depgraph::IsGpuKind(k) && k != depgraph::TaskKind::kComm)) continue;
    TimeCount& c = classes[static_cast<int>(depgraph::TaskClass(g, t))];
    c.total_ns += static_cast<double>(g.duration_ns(t));
    c.count += 1;
  }
}

absl::StatusOr<depgraph::Graph> GraphOf(const Trace& trace, int64_t pid) {
  return pid < 0 ? depgraph::BuildGraph(trace) : depgraph::BuildGraph(OneProcess(trace, pid));
}

double StepTimeNs(const Trace& trace, int64_t pid) {
  absl::StatusOr<depgraph::Graph> g = GraphOf(trace, pid);
  if (!g.ok()) return 0;
  return depgraph::MeanStepNs(depgraph::MeasuredSteps(*g));
}

KernelClass ClassifyKernel(std::string_view name, proto::GpuActivity::Kind kind) {
  if (kind == proto::GpuActivity::MEMCPY) return KernelClass::kMemcpy;
  if (kind == proto::GpuActivity::MEMSET) return KernelClass::kMemset;
  return depgraph::ClassifyKernelName(name);
}

std::vector<RecordedRun> RecordedRuns(const Trace& trace) {
  constexpr absl::string_view kPrefix = "reverieSteps.";
  std::vector<RecordedRun> out;
  for (const auto& [key, value] : trace.header().metadata()) {
    if (!absl::StartsWith(key, kPrefix)) continue;
    RecordedRun run;
    const size_t bar = value.find('|');
    if (!absl::SimpleAtoi(key.substr(kPrefix.size()), &run.pid) || bar == std::string::npos) continue;
    run.label = value.substr(0, bar);
    bool ok = true;
    for (absl::string_view step : absl::StrSplit(absl::string_view(value).substr(bar + 1), ';',
                                                 absl::SkipEmpty())) {
      const std::pair<absl::string_view, absl::string_view> f = absl::StrSplit(step, ',');
      double us = 0;
      ok = ok && absl::SimpleAtod(f.first, &us) && std::isfinite(us) && us >= 0;
      run.step_us.push_back(us);
      run.counted.push_back(f.second != "0");
    }
    if (ok) out.push_back(std::move(run));
  }
  std::sort(out.begin(), out.end(),
            [](const RecordedRun& a, const RecordedRun& b) { return a.pid < b.pid; });
  return out;
}

absl::StatusOr<int64_t> DefaultRun(const Trace& trace, std::string_view path) {
  const std::vector<RecordedRun> runs = RecordedRuns(trace);
  if (runs.empty()) return -1;
  std::vector<int64_t> predicted;
  std::string names;
  for (const RecordedRun& r : runs) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", r.pid, " ", r.label);
    if (absl::StartsWith(r.label, "predicted")) predicted.push_back(r.pid);
  }
  if (predicted.size() == 1) return predicted[0];
  return absl::InvalidArgumentError(absl::StrCat(
      Sv(path), ": a reverie timeline with runs ", names, " and no single predicted run: ",
      "choose one with --a-pid / --b-pid"));
}

TraceProfile ProfileTrace(const Trace& trace, std::string_view path, int64_t pid) {
  TraceProfile p;
  p.path = pid >= 0 ? absl::StrCat(Sv(path), " (pid ", pid, ")") : std::string(path);
  const proto::TraceChunk& ev = trace.events();
  absl::flat_hash_set<uint64_t> correlations;
  if (pid >= 0) {
    for (const proto::ApiCall& a : ev.api_calls()) {
      if (a.pid() == pid && a.correlation_id() != 0) correlations.insert(a.correlation_id());
    }
  }
  auto keep_api = [&](const proto::ApiCall& a) { return pid < 0 || a.pid() == pid; };
  auto keep_gpu = [&](const proto::GpuActivity& g) {
    return pid < 0 || correlations.contains(g.correlation_id());
  };
  double iter_sum = 0;
  for (const proto::Step& it : ev.steps()) {
    if (it.end_ns() <= it.start_ns() || (pid >= 0 && it.pid() != pid)) continue;
    ++p.steps;
    iter_sum += static_cast<double>(it.end_ns() - it.start_ns());
  }
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  auto extend = [&](int64_t s, int64_t e) {
    if (e < s) return;
    lo = std::min(lo, s);
    hi = std::max(hi, e);
  };
  for (const proto::ApiCall& a : ev.api_calls()) {
    if (keep_api(a)) extend(a.start_ns(), a.end_ns());
  }
  for (const proto::GpuActivity& g : ev.gpu_activities()) {
    if (keep_gpu(g)) extend(g.start_ns(), g.end_ns());
  }
  const absl::StatusOr<depgraph::Graph> graph = GraphOf(trace, pid);
  const std::vector<RecordedRun> recorded = RecordedRuns(trace);
  auto run = std::find_if(recorded.begin(), recorded.end(),
                          [&](const RecordedRun& r) { return r.pid == pid; });
  if (run != recorded.end() && !run->step_us.empty()) {
    // The steps reverie reported for this run (a prediction's in its
    // baseline's frame), not the rule re-read on the shifted copy.
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < run->step_us.size(); ++i) {
      if (!run->counted[i]) continue;
      sum += run->step_us[i];
      ++n;
    }
    p.steps = static_cast<int64_t>(run->step_us.size());
    p.step_ns = n > 0 ? sum / n * 1e3 : 0;
    p.path = absl::StrCat(Sv(path), " (pid ", pid, ": ", run->label, ")");
  } else if (const double step =
                 graph.ok() ? depgraph::MeanStepNs(depgraph::MeasuredSteps(*graph)) : 0;
             step > 0) {
    p.step_ns = step;
  } else if (p.steps > 0) {
    p.step_ns = iter_sum / static_cast<double>(p.steps);
  } else if (hi > lo) {
    p.step_ns = static_cast<double>(hi - lo);
  }
  const double per = 1.0 / static_cast<double>(std::max<int64_t>(p.steps, 1));
  for (const proto::GpuActivity& g : ev.gpu_activities()) {
    if (!keep_gpu(g)) continue;
    const double d = static_cast<double>(std::max<int64_t>(g.end_ns() - g.start_ns(), 0));
    const std::string name(trace.String(g.name_sid()));
    TimeCount& k = p.kernels[name];
    k.total_ns += d;
    k.count += 1;
    TimeCount& c = p.name_classes[static_cast<int>(ClassifyKernel(name, g.kind()))];
    c.total_ns += d;
    c.count += 1;
    p.gpu_busy_ns += d;
  }
  p.classes_in_context = graph.ok() && run == recorded.end();
  if (p.classes_in_context) {
    AddTaskClasses(*graph, p.classes);
  } else {
    std::copy(std::begin(p.name_classes), std::end(p.name_classes), std::begin(p.classes));
  }
  for (const proto::Range& r : ev.ranges()) {
    if (r.kind() != proto::Range::LAYER || r.end_ns() < r.start_ns()) continue;
    if (pid >= 0 && r.pid() != pid) continue;
    std::string name(trace.String(r.module_path_sid()));
    if (name.empty()) name = std::string(trace.String(r.name_sid()));
    if (r.phase() == proto::BACKWARD) name += " [backward]";
    TimeCount& l = p.layers[name];
    l.total_ns += static_cast<double>(r.end_ns() - r.start_ns());
    l.count += 1;
  }
  // Totals are summed whole and divided once, so that a count per step is
  // 8, not the sum of 24 thirds.
  const auto per_step = [per](TimeCount& tc) {
    tc.total_ns *= per;
    tc.count *= per;
  };
  for (auto& [name, tc] : p.kernels) per_step(tc);
  for (TimeCount& tc : p.classes) per_step(tc);
  for (TimeCount& tc : p.name_classes) per_step(tc);
  for (auto& [name, tc] : p.layers) per_step(tc);
  p.gpu_busy_ns *= per;
  return p;
}

CompareResult Compare(const TraceProfile& a, const TraceProfile& b) {
  CompareResult r;
  r.a_path = a.path;
  r.b_path = b.path;
  r.a_steps = a.steps;
  r.b_steps = b.steps;
  r.a_step_ns = a.step_ns;
  r.b_step_ns = b.step_ns;
  r.relative_error = b.step_ns > 0 ? (a.step_ns - b.step_ns) / b.step_ns : 0;
  // Both sides read the same way: by name alone when either cannot read
  // context (a timeline against its own trace showed Adam's kernels as
  // `elementwise` on one side and `optimizer` on the other).
  const bool context = a.classes_in_context && b.classes_in_context;
  const TimeCount* ac = context ? a.classes : a.name_classes;
  const TimeCount* bc = context ? b.classes : b.name_classes;
  r.classes_by_name_only = !context;
  for (int c = 0; c < kKernelClassCount; ++c) {
    r.classes.push_back({std::string(KernelClassName(static_cast<KernelClass>(c))), ac[c].total_ns,
                         bc[c].total_ns, ac[c].count, bc[c].count});
  }
  JoinByName(a.layers, b.layers, &r.layers, nullptr, nullptr);
  SortByAbsDiff(r.layers);
  JoinByName(a.kernels, b.kernels, &r.kernels, &r.only_in_a, &r.only_in_b);
  SortByAbsDiff(r.kernels);
  SortByTime(r.only_in_a);
  SortByTime(r.only_in_b);
  return r;
}

std::string CompareText(const CompareResult& r, int top_n) {
  std::string out;
  absl::StrAppendFormat(&out,
                "A: %s (%lld steps)\nB: %s (%lld steps)\n"
                "step time: A %.3f ms, B %.3f ms, A-B %+.3f ms, error %+.2f%%\n",
                r.a_path.c_str(), r.a_steps, r.b_path.c_str(),
                r.b_steps, Ms(r.a_step_ns), Ms(r.b_step_ns),
                Ms(r.a_step_ns - r.b_step_ns), 100.0 * r.relative_error);
  out += r.classes_by_name_only ? "\nkernel classes by name alone (a timeline keeps no op spans; "
                                  "GPU ms per step)\n"
                                : "\nkernel classes (GPU ms per step)\n";
  absl::StrAppendFormat(&out, "  %-14s %10s %10s %10s %9s %9s\n", "class", "A", "B", "A-B",
                "A count", "B count");
  for (const Diff& d : r.classes) {
    absl::StrAppendFormat(&out, "  %-14s %10.3f %10.3f %+10.3f %9.0f %9.0f\n", d.name.c_str(),
                  Ms(d.a_ns), Ms(d.b_ns), Ms(d.diff_ns()), d.a_count, d.b_count);
  }
  AppendDiffTable(out, "layers", r.layers, top_n);
  AppendDiffTable(out, "kernels in both", r.kernels, top_n);
  AppendDiffTable(out, "kernels only in A", r.only_in_a, top_n);
  AppendDiffTable(out, "kernels only in B", r.only_in_b, top_n);
  return out;
}

std::string CompareJson(const CompareResult& r, int top_n) {
  JsonWriter w(0);
  w.BeginObject();
  w.Key("a").BeginObject().Field("path", r.a_path).Field("steps", r.a_steps);
  w.Field("step_us", Us(r.a_step_ns)).EndObject();
  w.Key("b").BeginObject().Field("path", r.b_path).Field("steps", r.b_steps);
  w.Field("step_us", Us(r.b_step_ns)).EndObject();
  w.Field("step_diff_us", Us(r.a_step_ns - r.b_step_ns)).Field("relative_error", r.relative_error);
  w.Field("classes_by_name_only", r.classes_by_name_only);
  WriteDiffs(w, "classes", r.classes, kKernelClassCount);
  WriteDiffs(w, "layers", r.layers, top_n);
  w.Field("layer_count", static_cast<int64_t>(r.layers.size()));
  WriteDiffs(w, "kernels", r.kernels, top_n);
  w.Field("kernel_count", static_cast<int64_t>(r.kernels.size()));
  WriteDiffs(w, "only_in_a", r.only_in_a, top_n);
  w.Field("only_in_a_count", static_cast<int64_t>(r.only_in_a.size()));
  WriteDiffs(w, "only_in_b", r.only_in_b, top_n);
  w.Field("only_in_b_count", static_cast<int64_t>(r.only_in_b.size()));
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace reverie::whatif
