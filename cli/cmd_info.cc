// `reverie info TRACE [--json]`: what a trace holds (Kineto JSON or .pb).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "depgraph/breakdown.h"
#include "depgraph/builder.h"
#include "depgraph/cpu_time.h"
#include "depgraph/simulator.h"
#include "depgraph/step_time.h"
#include "frameworks/trace_loader.h"
#include "frameworks/trace_summary.h"
#include "whatif/facts_view.h"
#include "whatif/info.h"
#include "whatif/memory_view.h"
#include "whatif/step_report.h"

namespace reverie::cli {
namespace {

using whatif::kStepDefinition;
using whatif::StepText;
using whatif::GraphView;
double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// One counter with its severity and meaning (proto/trace_counters.h,
// depgraph/build_counters.h); `spec` is null for a name this version does
// not declare (a .pb from another version).
void PrintCounter(std::string_view name, int64_t value, const CounterSpec* spec) {
  absl::PrintF("  %-32s %12lld  %-9s %s\n", std::string(name).c_str(),
               value,
               spec != nullptr ? std::string(SeverityName(spec->severity)).c_str() : "?",
               spec != nullptr ? std::string(spec->description).c_str()
                              : "(not declared by this version of reverie)");
}

void PrintGraph(const GraphView& v) {
  if (!v.built) {
    std::printf("\ndependency graph: not built (%s)\n", v.why_not.c_str());
    return;
  }
  std::printf("\ndependency graph: %zu tasks, %zu edges\n", v.tasks, v.edges);
  std::printf("\nwhat the run already does (depgraph/facts.h)\n");
  for (const auto& [label, text] : whatif::FactLines(v.facts)) {
    std::printf("  %-26s %s\n", label.c_str(), text.c_str());
  }
  std::printf("\n%s\nstep time: %s\n", kStepDefinition, StepText(v.step_stats).c_str());
  std::printf("\nCPU time per step (ms, all threads): API calls, ops' own time, framework time "
              "between ops%s\n  %-22s %10s %10s %10s %10s %10s\n",
              v.cpu.threads_without_ops > 0 ? ", untraced gaps (threads without op spans)" : "",
              "step", "step", "api", "op", "framework", "untraced");
  for (size_t i = 0; i < v.steps.size() && i < v.cpu.by_step.size(); ++i) {
    const depgraph::CpuSplit& c = v.cpu.by_step[i];
    std::printf("  %-22s %10.3f %10.3f %10.3f %10.3f %10.3f%s\n", v.step_names[i].c_str(),
                Ms(v.steps[i].duration_ns()), Ms(c.api_ns), Ms(c.op_ns), Ms(c.framework_ns),
                Ms(c.untraced_ns), v.steps[i].counted ? "" : "  (not counted)");
  }
  std::printf("\nmeasured breakdown per step (ms)\n  %-22s %10s %10s %10s %10s\n",
              "step", "cpu only", "gpu only", "cpu+gpu", "idle");
  for (const depgraph::StepBreakdown& it : v.breakdown.steps) {
    std::printf("  %-22s %10.3f %10.3f %10.3f %10.3f\n", it.name.c_str(),
                Ms(it.measured.cpu_only_ns), Ms(it.measured.gpu_only_ns),
                Ms(it.measured.overlap_ns), Ms(it.measured.idle_ns));
  }
  std::printf("\ntime per phase (ms, all steps)\n  %-14s %10s %10s\n", "phase", "cpu", "gpu");
  for (const depgraph::GroupTime& g : v.breakdown.by_phase) {
    std::printf("  %-14s %10.3f %10.3f\n", g.name.c_str(), Ms(g.cpu_ns), Ms(g.gpu_ns));
  }
  if (!v.breakdown.by_layer.empty()) {
    std::printf("\ntop layers by GPU time (ms)\n");
    const size_t n = std::min<size_t>(10, v.breakdown.by_layer.size());
    for (size_t i = 0; i < n; ++i) {
      const depgraph::GroupTime& g = v.breakdown.by_layer[i];
      std::printf("  %10.3f gpu %10.3f cpu  %s\n", Ms(g.gpu_ns), Ms(g.cpu_ns), g.name.c_str());
    }
  }
  std::fputs(whatif::MemoryText(v.memory, v.step_names, v.steps).c_str(), stdout);
}

// Every counter once, by one rule (CounterSeverity): anomalies and data
// losses of the trace and of the graph first, then what was recorded or
// derived for information.
void PrintCounters(const TraceSummary& s, const GraphView& v) {
  auto print_trace = [](const std::string& name, int64_t value) {
    PrintCounter(name, value, FindTraceCounter(name));
  };
  bool graph_anomalies = false;
  v.stats.ForEachNonZero([&](const CounterSpec& c, int64_t) {
    graph_anomalies |= c.severity != CounterSeverity::kInfo;
  });
  const bool none = s.anomalies.empty() && !graph_anomalies;
  std::printf("\nanomalies (trace, then graph: proto/trace_counters.h, depgraph/build_counters.h)%s\n",
              none ? ": none" : "");
  for (const auto& [name, value] : s.anomalies) print_trace(name, value);
  v.stats.ForEachNonZero([](const CounterSpec& c, int64_t value) {
    if (c.severity != CounterSeverity::kInfo) PrintCounter(c.name, value, &c);
  });
  std::printf("\nrecorded or derived, for information\n");
  for (const auto& [name, value] : s.skipped) print_trace(name, value);
  v.stats.ForEachNonZero([](const CounterSpec& c, int64_t value) {
    if (c.severity == CounterSeverity::kInfo) PrintCounter(c.name, value, &c);
  });
}

void PrintText(const std::string& path, const Trace& trace, const TraceSummary& s) {
  const proto::TraceHeader& h = trace.header();
  std::printf("trace      %s\n", path.c_str());
  std::printf("producer   %s%s%s\n", h.producer().c_str(), h.framework().empty() ? "" : ", ",
              h.framework().c_str());
  for (const proto::Device& d : h.devices()) {
    std::string detail = d.vendor();
    if (d.sm_count() > 0) absl::StrAppend(&detail, detail.empty() ? "" : ", ", d.sm_count(), " SMs");
    const std::string suffix = detail.empty() ? "" : absl::StrCat(" (", detail, ")");
    std::printf("device %-3d %s%s\n", d.id(), d.name().empty() ? "(unnamed)" : d.name().c_str(),
                suffix.c_str());
  }
  if (h.has_distributed()) {
    const proto::DistributedInfo& di = h.distributed();
    std::printf("distributed %s rank %d of %d\n", di.backend().empty() ? "?" : di.backend().c_str(),
                di.rank(), di.world_size());
  }
  std::printf("\ntasks\n");
  absl::PrintF("  cpu api calls %9lld  (runtime %lld, driver %lld)\n",
               s.runtime_calls + s.driver_calls,
               s.runtime_calls, s.driver_calls);
  absl::PrintF("  kernels       %9lld", s.kernels);
  if (s.kernels > 0) {
    std::printf("  (launch geometry %.0f%%)",
                100.0 * static_cast<double>(s.kernels_with_geometry) / static_cast<double>(s.kernels));
  }
  std::printf("\n");
  absl::PrintF("  memcpys       %9lld\n", s.memcpys);
  absl::PrintF("  memsets       %9lld\n", s.memsets);
  absl::PrintF("  syncs         %9lld\n", s.syncs);
  absl::PrintF("  ranges        %9lld  (cpu ops %lld, annotations %lld, layers %lld, gpu "
               "annotations %lld)\n",
               s.ranges, s.cpu_op_ranges,
               s.annotation_ranges, s.layer_ranges,
               s.gpu_annotation_ranges);
  absl::PrintF("  collectives   %9lld\n", s.collectives);
  absl::PrintF("\nthreads %lld   streams %lld   devices %lld   layers %lld\n",
               s.threads, s.streams,
               s.devices, s.layers);
  std::printf("\nsteps %zu (ProfilerStep CPU spans; the step times are below)\n",
              s.steps.size());
  for (const StepStat& it : s.steps) {
    std::printf("  %-22s %12.3f ms\n", it.name.c_str(), Ms(it.measured_ns));
  }
  if (!s.has_gpu_events) {
    std::printf("\nGPU: no GPU events in this trace (CPU-only run, or GPU activity was not "
                "captured)\n");
  } else {
    std::printf("\nGPU busy %.1f%% of the %.3f ms span (%.3f ms busy)\n",
                100.0 * s.gpu_busy_fraction, Ms(s.span_ns), Ms(s.gpu_busy_ns));
    if (!s.top_kernels.empty()) {
      std::printf("\ntop kernels by total time\n  %12s %6s %8s  name\n", "total ms", "%", "count");
      for (const KernelStat& k : s.top_kernels) {
        const double pct = s.kernel_total_ns > 0 ? 100.0 * static_cast<double>(k.total_ns) /
                                                       static_cast<double>(s.kernel_total_ns)
                                                 : 0.0;
        std::string name = k.name;
        if (name.size() > 100) name = name.substr(0, 97) + "...";
        absl::PrintF("  %12.3f %6.1f %8lld  %s\n", Ms(k.total_ns), pct,
                     k.count, name.c_str());
      }
    }
  }
}

absl::Status RunInfo(const std::string& path, bool json, int threads) {
  REVERIE_ASSIGN_OR_RETURN(Trace trace, LoadTraceFile(path, {.threads = threads}));
  const TraceSummary summary = Summarize(trace);
  const GraphView graph = whatif::AnalyzeGraph(trace);
  if (json) {
    const std::string out = whatif::InfoJson(trace, summary, graph);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
  } else {
    PrintText(path, trace, summary);
    PrintGraph(graph);
    if (graph.built) std::fputs(whatif::HardwareText(graph.hardware).c_str(), stdout);
    PrintCounters(summary, graph);
  }
  if (std::fflush(stdout) != 0) {
    return WithExitStatus(absl::DataLossError("stdout: write failed"), kExitFailure);
  }
  return absl::OkStatus();
}

RunFn SetupInfo(CLI::App& app) {
  struct Options {
    std::string path;
    bool json = false;
    int threads = 0;
  };
  auto o = std::make_shared<Options>();
  AddArg(app, "TRACE", &o->path, "the trace");
  app.add_flag("--json", o->json, "machine-readable output");
  AddInt(app, "--threads", &o->threads, 1, 1024,
         "threads decoding a JSON trace at once (default: $REVERIE_THREADS, else every core; "
         "the answer is the same)");
  return [o] { return RunInfo(o->path, o->json, o->threads); };
}

}  // namespace
}  // namespace reverie::cli

REVERIE_COMMAND(info, "info",
                "what a trace holds: tasks, threads, steps, top kernels, anomalies",
                reverie::cli::SetupInfo);
