#include "whatif/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/checked_math.h"
#include "base/json_writer.h"
#include "base/status_macros.h"
#include "depgraph/host_speed.h"
#include "depgraph/memory_replay.h"
#include "depgraph/simulator.h"
#include "depgraph/step_time.h"
#include "whatif/step_report.h"

namespace reverie::whatif {

using depgraph::Graph;
using depgraph::StepTime;
using depgraph::TaskId;

StepProfile ProfileSteps(const Graph& g, std::span<const int64_t> start,
                         std::span<const int64_t> end, const std::vector<StepTime>& steps) {
  StepProfile p;
  p.steps = steps;
  p.stats = depgraph::SummarizeSteps(steps);
  const double n = std::max(1, p.stats.counted);
  std::vector<StepTime> counted;
  std::vector<uint8_t> in_step(steps.size() + 1, 0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!steps[i].counted) continue;
    counted.push_back(steps[i]);
    in_step[i] = 1;
  }
  const std::vector<int64_t> s(start.begin(), start.end()), e(end.begin(), end.end());
  for (const depgraph::TimeSplit& t : depgraph::SplitTime(g, s, e, counted)) {
    p.gpu_busy_ns += static_cast<double>(t.gpu_only_ns + t.overlap_ns) / n;
    p.cpu_busy_ns += static_cast<double>(t.cpu_only_ns + t.overlap_ns) / n;
  }
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || end[i] == depgraph::kNotMeasured || !depgraph::IsGpuKind(g.kind(t))) continue;
    const int32_t it = g.step_count() == 0 ? 0 : g.step_of(t);
    if (it < 0 || static_cast<size_t>(it) >= steps.size() || !in_step[it]) continue;
    const double d = static_cast<double>(std::max<int64_t>(0, g.duration_ns(t))) / n;
    if (g.kind(t) == depgraph::TaskKind::kKernel) p.kernels += 1 / n;
    p.class_ns[static_cast<int>(depgraph::TaskClass(g, t))] += d;
    auto& [count, ns] = p.by_name[std::string(g.name(t))];
    count += 1 / n;
    ns += d;
  }
  return p;
}

namespace {

std::string Verdict(const depgraph::StepStats& before, const depgraph::StepStats& after,
                    double predicted_ns) {
  const double eb = before.mean_error_ns(), ea = after.mean_error_ns();
  const double effect = after.mean_ns - before.mean_ns;
  if (before.counted > 1 && after.counted > 1 &&
      std::fabs(effect) <= depgraph::TwoMeansNoise(eb, ea)) {
    return "cannot decide: the measured effect is within the noise of the two means";
  }
  if (after.counted < 2) {
    return "one measured step: no noise band, judge by the error";
  }
  return std::fabs(predicted_ns - after.mean_ns) <= 2 * ea ? "inside the noise band"
                                                           : "outside the noise band";
}

}  // namespace

Validation Validate(const StepProfile& b, const StepProfile& p, const StepProfile& m,
                    const std::vector<std::string>& names, int top_kernels) {
  Validation v;
  v.baseline = b.stats;
  v.predicted = p.stats;
  v.measured = m.stats;
  for (size_t i = 0; i < m.steps.size() && i < p.steps.size() && i < b.steps.size(); ++i) {
    if (!m.steps[i].counted) continue;
    v.step_names.push_back(i < names.size() ? names[i] : absl::StrFormat("step %d", i));
    v.baseline_us.push_back(b.steps[i].duration_ns() / 1e3);
    v.predicted_us.push_back(p.steps[i].duration_ns() / 1e3);
    v.measured_us.push_back(m.steps[i].duration_ns() / 1e3);
  }
  v.verdict = Verdict(b.stats, m.stats, p.stats.mean_ns);
  if (b.stats.mean_ns > 0) {
    v.measured_effect_pct = (m.stats.mean_ns - b.stats.mean_ns) / b.stats.mean_ns * 100;
    v.predicted_effect_pct = (p.stats.mean_ns - b.stats.mean_ns) / b.stats.mean_ns * 100;
  }
  if (m.stats.mean_ns > 0) v.error_pct = (p.stats.mean_ns - m.stats.mean_ns) / m.stats.mean_ns * 100;
  v.metrics = {{"step_us", b.stats.mean_ns / 1e3, p.stats.mean_ns / 1e3, m.stats.mean_ns / 1e3},
               {"gpu_busy_us", b.gpu_busy_ns / 1e3, p.gpu_busy_ns / 1e3, m.gpu_busy_ns / 1e3},
               {"cpu_busy_us", b.cpu_busy_ns / 1e3, p.cpu_busy_ns / 1e3, m.cpu_busy_ns / 1e3},
               {"kernels", b.kernels, p.kernels, m.kernels}};
  for (int c = 0; c < depgraph::kKernelClassCount; ++c) {
    if (b.class_ns[c] == 0 && p.class_ns[c] == 0 && m.class_ns[c] == 0) continue;
    v.classes.push_back({std::string(depgraph::KernelClassName(static_cast<depgraph::KernelClass>(c))),
                         b.class_ns[c] / 1e3, p.class_ns[c] / 1e3, m.class_ns[c] / 1e3});
  }
  absl::flat_hash_map<std::string, KernelDelta> all;
  auto add = [&](const StepProfile& s, int side) {
    for (const auto& [name, cn] : s.by_name) {
      KernelDelta& k = all[name];
      k.name = name;
      (side == 0 ? k.baseline_count : side == 1 ? k.predicted_count : k.measured_count) = cn.first;
      (side == 0 ? k.baseline_us : side == 1 ? k.predicted_us : k.measured_us) = cn.second / 1e3;
    }
  };
  add(b, 0);
  add(p, 1);
  add(m, 2);
  for (auto& [name, k] : all) v.kernels.push_back(k);
  std::sort(v.kernels.begin(), v.kernels.end(), [](const KernelDelta& x, const KernelDelta& y) {
    const double dx = std::fabs(x.measured_us - x.baseline_us);
    const double dy = std::fabs(y.measured_us - y.baseline_us);
    return dx != dy ? dx > dy : x.name < y.name;
  });
  if (static_cast<int>(v.kernels.size()) > top_kernels) v.kernels.resize(top_kernels);
  for (KernelDelta& k : v.kernels) {
    k.change = k.baseline_count == 0 ? "added" : (k.measured_count == 0 ? "removed" : "changed");
  }
  return v;
}

namespace {

// One line on the two hosts' speeds, or nothing when they are not comparable.
// The share of `before`'s distinct op names that `after` has too; -1
// when `before` has no ops.
double OpNameOverlap(const depgraph::Graph& before, const depgraph::Graph& after) {
  absl::flat_hash_set<std::string_view> b, a;
  for (uint32_t i = 0; i < before.op_count(); ++i) b.insert(before.op_name(depgraph::OpId(i)));
  for (uint32_t i = 0; i < after.op_count(); ++i) a.insert(after.op_name(depgraph::OpId(i)));
  if (b.empty()) return -1;
  size_t both = 0;
  for (std::string_view n : b) both += a.contains(n);
  return static_cast<double>(both) / static_cast<double>(b.size());
}

// A pair of two programs validates nothing; say so rather than judge it.
std::string SameProgramText(const Validation& v) {
  if (v.op_overlap < 0 || v.op_overlap >= kSameProgramOps) return "";
  return absl::StrFormat(
      "warning: only %.0f%% of BEFORE's op names appear in AFTER (the validation corpus' pairs "
      "keep 90-100%%): is AFTER the same program? (a compile or a fusion also removes ops)\n",
      v.op_overlap * 100);
}

// Within 5%: the two processes' launch medians on the same program
// (N2, N3 of docs/ACCURACY.md) differ by 1-14%, so smaller is read as the same.
std::string SpeedWords(double r, std::string_view what) {
  if (std::fabs(r - 1) < 0.05) return ": about the same host speed";
  return absl::StrFormat(": its %s ran %s, which nothing in BEFORE shows", what,
                         r < 1 ? "faster" : "slower");
}

std::string HostSpeedText(const Validation& v) {
  const depgraph::SpeedRatio& h = v.host.launches;
  const depgraph::SpeedRatio& c = v.host.pageable_copies;
  std::string out;
  if (const std::string bound = depgraph::HostBoundPhrase(v.host_sensitivity_pct); !bound.empty()) {
    out = absl::StrCat("host speed: ", bound, ": its error follows the two hosts' speeds\n");
  } else if (v.host_sensitivity_pct >= 0) {
    out = absl::StrFormat("host speed: with the CPU %.0f%% slower the predicted step is %+.1f%%\n",
                          depgraph::kHostProbe * 100, v.host_sensitivity_pct);
  }
  if (!v.host.known()) return out;
  std::vector<std::string> scaled;
  if (h.known()) {
    out += absl::StrFormat(
        "host: AFTER's kernel launches took %.2fx as long as BEFORE's (%s median %.1f us against "
        "%.1f us)%s\n",
        h.ratio, h.name, h.after_median_ns / 1e3, h.before_median_ns / 1e3,
        SpeedWords(h.ratio, "CPU"));
    scaled.push_back(absl::StrFormat("every CPU task scaled by %.2f", h.ratio));
  }
  if (c.known()) {
    absl::StrAppend(
        &out, absl::StrFormat("host: AFTER's pageable copies took %.2fx as long as BEFORE's (%s of "
                              "%.2f MiB, median %.1f us against %.1f us)%s\n",
                              c.ratio, c.name, static_cast<double>(c.bytes) / (1 << 20),
                              c.after_median_ns / 1e3, c.before_median_ns / 1e3,
                              SpeedWords(c.ratio, "host memory")));
    scaled.push_back(absl::StrFormat("every pageable copy scaled by %.2f", c.ratio));
  }
  if (v.at_after_host_us > 0) {
    out.pop_back();
    absl::StrAppend(&out,
                    absl::StrFormat("; with %s the prediction would be %.1f us (error %+.1f%%)\n",
                                    absl::StrJoin(scaled, " and "), v.at_after_host_us,
                                    v.at_after_host_error_pct));
  }
  return out;
}

}  // namespace

std::string ValidationText(const Validation& v) {
  std::string out;
  auto band = [](const depgraph::StepStats& s) {
    if (s.counted < 2) return absl::StrFormat("%.1f us (1 step)", s.mean_ns / 1e3);
    return absl::StrFormat("%.1f us (%.1f-%.1f, sd %.1f, %d steps)", s.mean_ns / 1e3,
                           s.min_ns / 1e3, s.max_ns / 1e3, s.stddev_ns / 1e3, s.counted);
  };
  absl::StrAppend(&out, "baseline (BEFORE, simulated)  ", band(v.baseline), "\n");
  absl::StrAppend(&out, "predicted                     ", band(v.predicted), "\n");
  absl::StrAppend(&out, "measured (AFTER)              ", band(v.measured), "\n");
  absl::StrAppend(&out, absl::StrFormat("effect: predicted %+.1f%%, measured %+.1f%%; error of the "
                                        "predicted step %+.1f%%\n",
                                        v.predicted_effect_pct, v.measured_effect_pct, v.error_pct));
  absl::StrAppend(&out, "verdict: ", v.verdict, "\n");
  absl::StrAppend(&out, SameProgramText(v));
  absl::StrAppend(&out, HostSpeedText(v));
  if (v.step_names.size() > 1) {
    absl::StrAppend(&out, absl::StrFormat("\n%-24s %12s %12s %12s %8s\n", "step", "baseline_us",
                                          "predicted_us", "measured_us", "error"));
    for (size_t i = 0; i < v.step_names.size(); ++i) {
      const double e = v.measured_us[i] > 0
                           ? (v.predicted_us[i] - v.measured_us[i]) / v.measured_us[i] * 100
                           : 0;
      absl::StrAppend(&out, absl::StrFormat("%-24.24s %12.1f %12.1f %12.1f %+7.1f%%\n",
                                            v.step_names[i], v.baseline_us[i], v.predicted_us[i],
                                            v.measured_us[i], e));
    }
  }
  auto table = [&](const char* title, const std::vector<Metric>& rows) {
    absl::StrAppend(&out, absl::StrFormat("\n%-24s %12s %12s %12s %8s\n", title, "baseline",
                                          "predicted", "measured", "error"));
    for (const Metric& r : rows) {
      absl::StrAppend(&out, absl::StrFormat("%-24.24s %12.1f %12.1f %12.1f %+7.1f%%\n", r.name,
                                            r.baseline, r.predicted, r.measured, r.error_pct()));
    }
  };
  table("per step", v.metrics);
  table("us per step by class", v.classes);
  if (!v.kernels.empty()) {
    absl::StrAppend(&out, absl::StrFormat(
                              "\nlargest measured kernel changes (count and us per step: baseline "
                              "-> predicted | measured)\n"));
    for (const KernelDelta& k : v.kernels) {
      absl::StrAppend(&out, absl::StrFormat("  %-7s %5.0f x %9.1f -> %5.0f x %9.1f | %5.0f x %9.1f  %.60s\n",
                                            k.change, k.baseline_count, k.baseline_us,
                                            k.predicted_count, k.predicted_us, k.measured_count,
                                            k.measured_us, k.name));
    }
  }
  return out;
}

std::string ValidationJson(const Validation& v, const std::string& before,
                           const std::string& after, const std::string& cpu_model,
                           const std::vector<std::string>& scripts) {
  JsonWriter w;
  w.BeginObject();
  w.Field("before", before).Field("after", after);
  w.Field("cpu_model", cpu_model);
  w.Key("scripts").BeginArray();
  for (const std::string& s : scripts) w.String(s);
  w.EndArray();
  w.Field("step_definition", kStepDefinition);
  w.Key("step").BeginObject();
  w.Field("baseline_us", v.baseline.mean_ns / 1e3);
  w.Field("predicted_us", v.predicted.mean_ns / 1e3);
  w.Field("measured_us", v.measured.mean_ns / 1e3);
  w.Field("error_pct", v.error_pct);
  w.Field("predicted_effect_pct", v.predicted_effect_pct);
  w.Field("measured_effect_pct", v.measured_effect_pct);
  w.Field("verdict", v.verdict);
  w.Key("baseline_noise");
  WriteStepJson(w, v.baseline);
  w.Key("measured_noise");
  WriteStepJson(w, v.measured);
  w.EndObject();
  w.Key("steps").BeginArray();
  for (size_t i = 0; i < v.step_names.size(); ++i) {
    w.BeginObject().Field("name", v.step_names[i]);
    w.Field("baseline_us", v.baseline_us[i]).Field("predicted_us", v.predicted_us[i]);
    w.Field("measured_us", v.measured_us[i]).EndObject();
  }
  w.EndArray();
  auto metrics = [&](const char* key, const std::vector<Metric>& rows) {
    w.Key(key).BeginArray();
    for (const Metric& m : rows) {
      w.BeginObject().Field("name", m.name).Field("baseline", m.baseline);
      w.Field("predicted", m.predicted).Field("measured", m.measured);
      w.Field("error_pct", m.error_pct()).EndObject();
    }
    w.EndArray();
  };
  if (v.op_overlap >= 0) w.Field("op_overlap", v.op_overlap);
  if (v.host_sensitivity_pct >= 0) w.Field("host_sensitivity_pct", v.host_sensitivity_pct);
  if (v.host.known()) {
    w.Key("host").BeginObject();
    if (const depgraph::SpeedRatio& l = v.host.launches; l.known()) {
      w.Field("launch_time_ratio", l.ratio).Field("launch_api", l.name);
      w.Field("before_median_us", l.before_median_ns / 1e3);
      w.Field("after_median_us", l.after_median_ns / 1e3);
      w.Field("before_launches", l.before_count).Field("after_launches", l.after_count);
    }
    if (const depgraph::SpeedRatio& c = v.host.pageable_copies; c.known()) {
      w.Key("pageable_copies").BeginObject();
      w.Field("time_ratio", c.ratio).Field("name", c.name).Field("bytes", c.bytes);
      w.Field("before_median_us", c.before_median_ns / 1e3);
      w.Field("after_median_us", c.after_median_ns / 1e3);
      w.Field("before_copies", c.before_count).Field("after_copies", c.after_count);
      w.EndObject();
    }
    if (v.at_after_host_us > 0) {
      w.Field("predicted_at_after_host_us", v.at_after_host_us);
      w.Field("error_at_after_host_pct", v.at_after_host_error_pct);
    }
    w.EndObject();
  }
  metrics("per_step", v.metrics);
  metrics("kernel_classes_us", v.classes);
  w.Key("kernels").BeginArray();
  for (const KernelDelta& k : v.kernels) {
    w.BeginObject().Field("name", k.name).Field("change", k.change);
    w.Field("baseline_count", k.baseline_count).Field("predicted_count", k.predicted_count);
    w.Field("measured_count", k.measured_count).Field("baseline_us", k.baseline_us);
    w.Field("predicted_us", k.predicted_us).Field("measured_us", k.measured_us).EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str();
}

namespace {

// The largest peak allocated over the GPUs, in MiB; -1 without GPU
// memory events (depgraph/memory_replay.h).
double GpuPeakMiB(const depgraph::Graph& g, std::span<const int64_t> start, std::span<const int64_t> end) {
  double peak = -1;
  for (const depgraph::DevicePeak& d : depgraph::ReplayMemory(g, start, end)) {
    if (d.device >= 0 && d.absolute) peak = std::max(peak, static_cast<double>(d.peak) / (1 << 20));
  }
  return peak;
}

// The prediction with every CPU task's duration and gap scaled by the
// hosts' launch-time ratio and every pageable copy by their copy-time
// ratio (1 where one is not known), simulated as Predict did (0 when it
// cannot be: a script chose its own schedule, which is not kept past the
// scripts). `p`'s graph is scaled in place and given back.
double StepAtAfterHost(const LoadedTrace& before, Prediction& p, const depgraph::HostSpeed& h) {
  if (p.schedule_kind != transforms::ScheduleChoice::Kind::kEarliestReady) return 0;
  depgraph::SimOptions opts;
  opts.step_frame = &before.baseline.steps;
  return depgraph::StepAtHostSpeed(p.graph, opts, h.launches.known() ? h.launches.ratio : 1,
                                   h.pageable_copies.known() ? h.pageable_copies.ratio : 1);
}

bool HasMarkers(const depgraph::Graph& g) {
  return !(g.step_count() == 1 && g.step_info(0).name == "whole trace");
}

}  // namespace

absl::StatusOr<Validation> ValidatePrediction(const LoadedTrace& before,
                                                      const LoadedTrace& after,
                                                      const ScriptSpec& spec, int top_kernels,
                                                      std::string* traceback) {
  const depgraph::Graph& bg = before.graph;
  const depgraph::Graph& ag = after.graph;
  if (HasMarkers(bg) != HasMarkers(ag)) {
    return absl::FailedPreconditionError(
        absl::StrCat(HasMarkers(bg) ? after.path : before.path,
                     ": has no ProfilerStep markers while the other trace has them: "
                     "the pair cannot be compared step by step"));
  }
  const depgraph::StepStats bs = depgraph::SummarizeSteps(depgraph::MeasuredSteps(bg));
  const depgraph::StepStats as = depgraph::SummarizeSteps(depgraph::MeasuredSteps(ag));
  if (bs.counted != as.counted) {
    return absl::FailedPreconditionError(
        absl::StrCat(after.path, ": ", as.counted, " counted steps where ", before.path, " has ",
                     bs.counted, ": not the same loop profiled twice"));
  }
  REVERIE_ASSIGN_OR_RETURN(Prediction p, Predict(before, spec, traceback));
  const StepProfile base = ProfileSteps(
      bg, before.baseline.start_ns, before.baseline.end_ns, before.baseline.steps);
  const StepProfile pred =
      ProfileSteps(p.graph, p.sim.start_ns, p.sim.end_ns, p.sim.steps);
  const depgraph::TaskTimes am = depgraph::MeasuredTimes(ag);
  const StepProfile meas = ProfileSteps(ag, am.start, am.end, depgraph::MeasuredSteps(ag));
  std::vector<std::string> names;
  for (size_t i = 0; i < ag.step_count(); ++i) {
    names.push_back(ag.step_info(static_cast<int32_t>(i)).name);
  }
  Validation v = Validate(base, pred, meas, names, top_kernels);
  v.op_overlap = OpNameOverlap(bg, ag);
  v.host_sensitivity_pct = p.host_sensitivity_pct;
  v.host = depgraph::CompareHostSpeed(bg, ag);
  if (v.host.known() && v.measured.mean_ns > 0) {
    if (const double ns = StepAtAfterHost(before, p, v.host); ns > 0) {
      v.at_after_host_us = ns / 1e3;
      v.at_after_host_error_pct = (ns - v.measured.mean_ns) / v.measured.mean_ns * 100;
    }
  }
  // Memory, where both traces recorded it with the allocator's totals.
  const double measured_mib = GpuPeakMiB(ag, am.start, am.end);
  const double baseline_mib = GpuPeakMiB(bg, before.baseline.start_ns, before.baseline.end_ns);
  if (measured_mib >= 0 && baseline_mib >= 0) {
    v.metrics.push_back({"peak_memory_mib", baseline_mib, GpuPeakMiB(p.graph, p.sim.start_ns, p.sim.end_ns),
                         measured_mib});
  }
  return v;
}

}  // namespace reverie::whatif
