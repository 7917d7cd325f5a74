#include "whatif/diagnosis.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/sv.h"
#include "depgraph/breakdown.h"
#include "depgraph/critical_path.h"
#include "whatif/prediction_report.h"

namespace reverie::whatif {
namespace {

// A side busy this share of the step bounds it.
constexpr double kSaturated = 0.9;

int64_t ShareNs(const std::vector<depgraph::PathShare>& v, std::string_view name) {
  for (const depgraph::PathShare& s : v) {
    if (s.name == name) return s.ns;
  }
  return 0;
}

// What shrinks each cause, for the third line. Data loading the run
// already hands to worker processes is the workers not keeping up (the
// main thread waits for their batches): more of them is the remedy, not
// num_workers > 0 (param's RTX 2080 Ti ResNet waits 51% of its path so).
std::string_view Remedy(std::string_view what, bool loader_workers) {
  if (what == kDataLoading) {
    return loader_workers
               ? "more DataLoader workers or cheaper per-sample work (the workers do not "
                 "keep up: the training loop waits for their batches)"
               : "DataLoader worker processes (num_workers > 0)";
  }
  if (what == kCpu) return "fewer launches and less Python (CUDA graphs, fusion, a fused optimizer)";
  if (what == kGpu) return "faster kernels (lower precision, fusion, a newer GPU)";
  if (what == kHostCopies) return "pinned memory and non_blocking copies";
  if (what == kCommunication) return "a faster network or less traffic";
  return "";
}

// A cause as the third line names it.
std::string_view Noun(std::string_view what) {
  if (what == kCpu) return "CPU work";
  if (what == kGpu) return "GPU kernels";
  return what;
}

bool OnCpu(std::string_view what) { return what == kDataLoading || what == kCpu; }

enum class Side { kCpu, kGpu, kBoth };

// The remedies of the causes on `side` holding at least 5% of the critical
// path, largest first, joined by "; then ".
std::string Remedies(const std::vector<LimitShare>& limits, bool loader_workers, Side side) {
  std::vector<std::string> out;
  for (const LimitShare& l : limits) {
    const std::string_view remedy = Remedy(l.what, loader_workers);
    if (l.share < 0.05 || remedy.empty()) continue;
    if (side == Side::kBoth || (side == Side::kCpu) == OnCpu(l.what)) {
      out.push_back(
          absl::StrFormat("%s for %s (%.0f%% of the path)", remedy, Noun(l.what), l.share * 100));
    }
  }
  return out.empty() ? std::string("(no cause a what-if changes holds the path)")
                     : absl::StrJoin(out, "; then ");
}

// The third line: which side bounds the step and what to try, in the
// order of the critical path's causes on that side. A side busy nearly
// the whole step bounds it whatever the critical path's shares say: on the
// kineto ResNet-50 sample the GPU holds the largest share of the path, yet
// the CPU is busy 97% of the step and faster kernels alone gain nothing
// (max-plus: the CPU then bounds it).
std::string ThirdLine(const Diagnosis& d, bool loader_workers) {
  if (d.side == "no GPU") {
    // Not "the GPU waits": nothing says what the GPU did (zoology's trace
    // records runtime calls but no kernel).
    return "the trace records no GPU activity (no kernel, copy or memset: the profiler did not "
           "capture the GPU; record with ProfilerActivity.CUDA): only the CPU side can be judged";
  }
  if (d.side == "CPU") {
    return absl::StrCat("the CPU is busy nearly all the step and the GPU waits for it: try ",
                        Remedies(d.limits, loader_workers, Side::kCpu),
                        "; faster kernels help only once the CPU does less");
  }
  if (d.side == "GPU") {
    return absl::StrCat("the GPU is busy nearly all the step: try ",
                        Remedies(d.limits, loader_workers, Side::kGpu),
                        "; CPU-side changes help only once the GPU does less");
  }
  if (d.side == "both") {
    return absl::StrCat(
        "the CPU and the GPU are both busy nearly all the step, so a change to "
        "one helps only until the other bounds it: try ",
        Remedies(d.limits, loader_workers, Side::kBoth));
  }
  return absl::StrCat(
      "neither side is busy all the step (they wait on each other: syncs, "
      "launch latency): try ",
      Remedies(d.limits, loader_workers, Side::kBoth), "; and fewer syncs, so the two overlap");
}

// The second line: the causes holding 5% or more of the critical path.
std::string SecondLine(const std::vector<LimitShare>& limits) {
  std::vector<std::string> parts;
  for (const LimitShare& l : limits) {
    if (l.share < 0.05 && !parts.empty()) break;
    parts.push_back(absl::StrFormat("%s %.0f%%", Noun(l.what), l.share * 100));
  }
  return absl::StrCat("the chain of work that sets the step (critical path): ",
                      absl::StrJoin(parts, ", "));
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
  d.step = depgraph::SummarizeSteps(sim.steps);
  // Causes on the counted steps' critical paths.
  std::map<std::string_view, int64_t> ns;
  int64_t length = 0;
  int counted = 0;
  for (const depgraph::CriticalPath& p : depgraph::CriticalPaths(base.graph, sim)) {
    const bool in_range = p.step >= 0 && static_cast<size_t>(p.step) < sim.steps.size();
    if (in_range && !sim.steps[p.step].counted) continue;
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
  for (const depgraph::StepBreakdown& it :
       depgraph::ComputeBreakdown(base.graph, sim).steps) {
    if (!it.counted) continue;
    cpu += it.simulated.cpu_only_ns + it.simulated.overlap_ns;
    gpu += it.simulated.gpu_only_ns + it.simulated.overlap_ns;
    total += it.simulated.total_ns();
  }
  d.cpu_busy = total > 0 ? static_cast<double>(cpu) / total : 0;
  d.gpu_busy = total > 0 ? static_cast<double>(gpu) / total : 0;
  const bool cpu_saturated = d.cpu_busy >= kSaturated, gpu_saturated = d.gpu_busy >= kSaturated;
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
  // No stream ran a GPU task (the facts count the devices whose streams did).
  const depgraph::TraceFacts& facts = base.model.facts;
  d.side = facts.gpu.devices_used == 0      ? "no GPU"
           : cpu_saturated && gpu_saturated ? "both"
           : cpu_saturated                  ? "CPU"
           : gpu_saturated                  ? "GPU"
                                            : "neither";
  d.lines = {first, SecondLine(d.limits),
             ThirdLine(d, facts.dataloader.mode == "worker processes")};
  return d;
}

}  // namespace reverie::whatif
