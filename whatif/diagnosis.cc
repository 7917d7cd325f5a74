#include "whatif/diagnosis.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "depgraph/breakdown.h"
#include "depgraph/critical_path.h"
#include "whatif/prediction_report.h"

namespace reverie::whatif {
namespace {

int64_t ShareNs(const std::vector<depgraph::PathShare>& v, std::string_view name) {
  for (const depgraph::PathShare& s : v) {
    if (s.name == name) return s.ns;
  }
  return 0;
}

// What each cause means, for the second line.
std::string_view Gloss(std::string_view what) {
  if (what == kDataLoading) return "data loading on the training thread";
  if (what == kCpu) return "CPU work (Python, op dispatch, kernel launches)";
  if (what == kGpu) return "GPU kernels";
  if (what == kHostCopies) return "host<->device copies";
  if (what == kCommunication) return "communication";
  return "waiting (launch and sync latency, gaps the trace does not explain)";
}

// What to do about the largest cause, for the third line.
std::string_view Hint(std::string_view what) {
  if (what == kDataLoading) {
    return "the GPU waits while the training thread loads each batch: load batches in worker "
           "processes before making anything else faster";
  }
  if (what == kCpu) {
    return "the GPU waits for the CPU to issue work: fewer launches and less Python per step "
           "(CUDA graphs, fusion, a fused optimizer) help more than faster kernels";
  }
  if (what == kGpu) {
    return "the GPU is the bottleneck: faster kernels (lower precision, fusion, a newer GPU) "
           "shorten the step; CPU-side changes will not";
  }
  if (what == kHostCopies) {
    return "the step waits for host<->device copies: pinned memory and non_blocking copies "
           "let them overlap with compute";
  }
  if (what == kCommunication) {
    return "the step waits for communication: a faster network or less traffic help; faster "
           "compute only waits longer for it";
  }
  return "the step is mostly waiting: little of it is work a what-if can shrink";
}

std::string SecondLine(const std::vector<LimitShare>& limits) {
  std::string s = absl::StrFormat("limited by %s (%.0f%% of the critical path)",
                                  Gloss(limits[0].what), limits[0].share * 100);
  std::vector<std::string> rest;
  for (size_t i = 1; i < limits.size() && rest.size() < 2; ++i) {
    if (limits[i].share < 0.05) break;
    rest.push_back(absl::StrFormat("%s %.0f%%", limits[i].what == kCpu ? "CPU work"
                                                 : limits[i].what == kGpu ? "GPU kernels"
                                                                          : limits[i].what,
                                   limits[i].share * 100));
  }
  if (rest.size() == 1) absl::StrAppend(&s, ", then ", rest[0]);
  if (rest.size() == 2) absl::StrAppend(&s, ", then ", rest[0], " and ", rest[1]);
  return s;
}

}  // namespace

double Diagnosis::Share(std::string_view what) const {
  for (const LimitShare& l : limits) {
    if (l.what == what) return l.share;
  }
  return 0;
}

Diagnosis Diagnose(const LoadedTrace& base) {
  Diagnosis d;
  const depgraph::SimResult& sim = base.baseline;
  d.step = depgraph::SummarizeSteps(sim.iterations);
  // Causes on the counted steps' critical paths.
  std::map<std::string_view, int64_t> ns;
  int64_t length = 0;
  int counted = 0;
  for (const depgraph::CriticalPath& p : depgraph::CriticalPaths(base.graph, sim)) {
    const bool in_range = p.iteration >= 0 && static_cast<size_t>(p.iteration) < sim.iterations.size();
    if (in_range && !sim.iterations[p.iteration].counted) continue;
    ++counted;
    const int64_t loading = ShareNs(p.by_phase, depgraph::PhaseName(depgraph::Phase::kDataLoading));
    const int64_t copies = ShareNs(p.by_kernel_class, "memcpy") + ShareNs(p.by_kernel_class, "memset");
    ns[kDataLoading] += std::min(loading, p.cpu_ns);
    ns[kCpu] += std::max<int64_t>(0, p.cpu_ns - loading);
    ns[kHostCopies] += std::min(copies, p.gpu_ns);
    ns[kGpu] += std::max<int64_t>(0, p.gpu_ns - copies);
    ns[kCommunication] += p.comm_ns;
    ns[kIdle] += std::max<int64_t>(0, p.length_ns - p.cpu_ns - p.gpu_ns - p.comm_ns);
    length += p.length_ns;
  }
  for (std::string_view what : {kDataLoading, kCpu, kGpu, kHostCopies, kCommunication, kIdle}) {
    const int64_t v = ns[what];
    d.limits.push_back({std::string(what), length > 0 ? static_cast<double>(v) / length : 0.0,
                        counted > 0 ? v / 1e3 / counted : 0.0});
  }
  std::stable_sort(d.limits.begin(), d.limits.end(),
                   [](const LimitShare& a, const LimitShare& b) { return a.share > b.share; });
  // How busy each side is over the counted steps.
  int64_t cpu = 0, gpu = 0, total = 0;
  for (const depgraph::IterationBreakdown& it :
       depgraph::ComputeBreakdown(base.graph, sim).iterations) {
    if (!it.counted) continue;
    cpu += it.simulated.cpu_only_ns + it.simulated.overlap_ns;
    gpu += it.simulated.gpu_only_ns + it.simulated.overlap_ns;
    total += it.simulated.total_ns();
  }
  d.cpu_busy = total > 0 ? static_cast<double>(cpu) / total : 0;
  d.gpu_busy = total > 0 ? static_cast<double>(gpu) / total : 0;
  d.unexplained = depgraph::UnexplainedShare(base.graph, sim);
  d.warning = UnexplainedWarning(d.unexplained);
  if (d.step.counted == 0 || length == 0) {
    d.lines = {"no step to diagnose: the trace has no counted step with work on it"};
    return d;
  }
  d.bound = d.limits[0].what;
  std::string first = absl::StrFormat("step %.1f ms", d.step.mean_ns / 1e6);
  if (d.step.counted > 1) {
    absl::StrAppend(&first, absl::StrFormat(" (%d steps, %.1f-%.1f ms)", d.step.counted,
                                            d.step.min_ns / 1e6, d.step.max_ns / 1e6));
  }
  absl::StrAppend(&first, absl::StrFormat("; the GPU is busy %.0f%% of it, the CPU %.0f%%",
                                          d.gpu_busy * 100, d.cpu_busy * 100));
  d.lines = {first, SecondLine(d.limits), std::string(Hint(d.bound))};
  return d;
}

}  // namespace reverie::whatif
