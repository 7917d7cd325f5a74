// `reverie predict TRACE --script FILE [--script FILE ...] [--set k=v ...]
// [--json] [--top N] [--lua-budget N] [--lua-memory-mb N] [--no-sandbox]`:
// Daydream's what-if question. Builds the dependency graph, simulates it
// unchanged (the baseline), applies the optimization scripts in order
// (scripts/script_runner.h: each atomic, on a copy; the script flags and the
// prediction are shared with the other script commands, cli/script_args.h
// and whatif/pipeline.h), then simulates the result and reports
// predicted vs baseline iteration time, where the time goes (CPU only / GPU
// only / overlap), per-phase and per-layer busy-time deltas, and what the
// scripts changed.
//
// Both times are simulated, so the speedup compares like with like; `reverie
// replay` shows how close the baseline simulation is to the measured trace.
// Step times follow the one definition (depgraph/step_time.h: the profiler
// overview's step, ProfilerStep extended to its GPU work); the top-level
// figures are their mean over counted steps, shown with the baseline's own
// step-to-step spread so that a small predicted change can be read against
// the noise.
// Errors: one line "reverie: ..." on stderr and exit 2; a Lua error names
// file.lua:LINE (its traceback follows on later lines, text mode only).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "cli/command.h"
#include "cli/load.h"
#include "cli/json_writer.h"
#include "cli/paths.h"
#include "cli/script_args.h"
#include "cli/step_report.h"
#include "depgraph/breakdown.h"
#include "depgraph/builder.h"
#include "depgraph/simulator.h"
#include "frameworks/trace_loader.h"
#include "report/timeline.h"
#include "scripts/script_runner.h"
#include "depgraph/model_info.h"

namespace reverie::cli {
namespace {

using depgraph::Graph;
using depgraph::SimResult;

constexpr char kUsage[] =
    "predict TRACE --script FILE [--script FILE ...] [--set [SCRIPT.]KEY=VALUE ...] [--json] "
    "[--top N] [--timeline OUT.json] [--cpu-model ops|gaps] [--lua-budget N] [--lua-memory-mb N] "
    "[--no-sandbox]";

struct Options {
  std::string trace;
  ScriptArgs script;
  bool json = false;
  int top = 10;
  depgraph::BuildOptions build;  // --cpu-model gaps: cpu_ops = false
};

bool ParseArgs(const std::vector<std::string>& args, Options* o, std::string* error) {
  auto value = [&](size_t& i, const std::string& flag, std::string* out) {
    if (i + 1 >= args.size()) {
      *error = "predict: " + flag + " needs a value";
      return false;
    }
    *out = args[++i];
    return true;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    if (ConsumeScriptArg("predict", args, &i, &o->script, error)) {
      if (!error->empty()) return false;
    } else if (a == "--json") {
      o->json = true;
    } else if (a == "--cpu-model") {
      if (!value(i, a, &v)) return false;
      if (v != "ops" && v != "gaps") {
        *error = "predict: --cpu-model expects ops (op and framework time apart) or gaps";
        return false;
      }
      o->build.cpu_ops = v == "ops";
    } else if (a == "--top") {
      if (!value(i, a, &v)) return false;
      int64_t n = 0;
      if (!absl::SimpleAtoi(v, &n) || n <= 0) {
        *error = "predict: " + a + " expects a positive integer, got '" + v + "'";
        return false;
      }
      o->top = static_cast<int>(std::min<int64_t>(n, 1000000));
    } else if (!a.empty() && a[0] == '-') {
      *error = "predict: unknown option '" + a + "' (usage: " + kUsage + ")";
      return false;
    } else if (o->trace.empty()) {
      o->trace = a;
    } else {
      *error = "predict: more than one TRACE given ('" + o->trace + "', '" + a + "')";
      return false;
    }
  }
  if (o->trace.empty()) {
    *error = std::string("predict: missing TRACE (usage: ") + kUsage + ")";
    return false;
  }
  if (o->script.scripts.empty()) {
    *error = "predict: give at least one --script (e.g. --script amp.lua)";
    return false;
  }
  return true;
}

struct GroupDelta {
  std::string name;
  double base_cpu_us = 0, base_gpu_us = 0, pred_cpu_us = 0, pred_gpu_us = 0;
  double delta_us() const { return (pred_cpu_us + pred_gpu_us) - (base_cpu_us + base_gpu_us); }
};

// Busy time per group and per iteration, baseline vs predicted, keeping the
// groups' order of first appearance.
std::vector<GroupDelta> Deltas(const std::vector<depgraph::GroupTime>& base,
                               const std::vector<depgraph::GroupTime>& pred, double iterations) {
  std::vector<GroupDelta> out;
  std::map<std::string, size_t> index;
  auto slot = [&](const std::string& name) -> GroupDelta& {
    auto [it, fresh] = index.emplace(name, out.size());
    if (fresh) out.push_back({name});
    return out[it->second];
  };
  for (const depgraph::GroupTime& g : base) {
    GroupDelta& d = slot(g.name);
    d.base_cpu_us = g.cpu_ns / 1e3 / iterations;
    d.base_gpu_us = g.gpu_ns / 1e3 / iterations;
  }
  for (const depgraph::GroupTime& g : pred) {
    GroupDelta& d = slot(g.name);
    d.pred_cpu_us = g.cpu_ns / 1e3 / iterations;
    d.pred_gpu_us = g.gpu_ns / 1e3 / iterations;
  }
  return out;
}

std::vector<GroupDelta> TopByDelta(std::vector<GroupDelta> v, int n) {
  std::stable_sort(v.begin(), v.end(), [](const GroupDelta& a, const GroupDelta& b) {
    return std::fabs(a.delta_us()) > std::fabs(b.delta_us());
  });
  if (static_cast<int>(v.size()) > n) v.resize(n);
  return v;
}

// Mean simulated time split over the counted steps.
depgraph::TimeSplit MeanSplit(const depgraph::GraphBreakdown& b) {
  depgraph::TimeSplit m;
  int64_t n = 0;
  for (const depgraph::IterationBreakdown& it : b.iterations) {
    if (!it.counted) continue;
    ++n;
    m.cpu_only_ns += it.simulated.cpu_only_ns;
    m.gpu_only_ns += it.simulated.gpu_only_ns;
    m.overlap_ns += it.simulated.overlap_ns;
    m.idle_ns += it.simulated.idle_ns;
  }
  if (n == 0) return m;
  m.cpu_only_ns /= n;
  m.gpu_only_ns /= n;
  m.overlap_ns /= n;
  m.idle_ns /= n;
  return m;
}

std::vector<double> IterationTimesUs(const SimResult& r) {
  std::vector<double> out;
  for (const depgraph::IterationTime& it : r.iterations) out.push_back(it.duration_ns() / 1e3);
  return out;
}

std::string IterationName(const Graph& g, const depgraph::IterationTime& it, size_t i) {
  if (it.iteration >= 0 && static_cast<size_t>(it.iteration) < g.iteration_count()) {
    return g.iteration_info(it.iteration).name;
  }
  return "iteration " + std::to_string(i);
}

struct Result {
  const Options* opt;
  const Graph* base_graph;
  const Graph* pred_graph;
  const SimResult* base;
  const SimResult* pred;
  const whatif::Prediction* prediction;
  std::vector<GroupDelta> phases, layers;
  depgraph::TimeSplit base_split, pred_split;
  std::vector<double> base_iter_us, pred_iter_us;
};

void WriteChanges(JsonWriter& w, const transforms::ChangeSummary& c) {
  w.BeginObject();
  w.Field("added", c.added);
  w.Field("removed", c.removed);
  w.Field("modified", c.modified);
  w.Field("edges_added", c.edges_added);
  w.Field("edges_removed", c.edges_removed);
  w.Field("resources_added", c.resources_added);
  w.EndObject();
}

void WriteGroups(JsonWriter& w, const std::vector<GroupDelta>& v) {
  w.BeginArray();
  for (const GroupDelta& d : v) {
    w.BeginObject();
    w.Field("name", d.name);
    w.Field("baseline_cpu_us", d.base_cpu_us);
    w.Field("baseline_gpu_us", d.base_gpu_us);
    w.Field("predicted_cpu_us", d.pred_cpu_us);
    w.Field("predicted_gpu_us", d.pred_gpu_us);
    w.Field("delta_us", d.delta_us());
    w.EndObject();
  }
  w.EndArray();
}

void WriteSplit(JsonWriter& w, const depgraph::TimeSplit& s) {
  w.BeginObject();
  w.Field("cpu_only_us", s.cpu_only_ns / 1e3);
  w.Field("gpu_only_us", s.gpu_only_ns / 1e3);
  w.Field("overlap_us", s.overlap_ns / 1e3);
  w.Field("idle_us", s.idle_ns / 1e3);
  w.EndObject();
}

void PrintJson(const Result& r) {
  const depgraph::StepStats bs = depgraph::SummarizeSteps(r.base->iterations);
  const depgraph::StepStats ps = depgraph::SummarizeSteps(r.pred->iterations);
  const double base_us = bs.mean_ns / 1e3;
  const double pred_us = ps.mean_ns / 1e3;
  JsonWriter w;
  w.BeginObject();
  w.Field("trace", r.opt->trace);
  w.Key("scripts").BeginArray();
  for (const lua::ScriptReport& s : r.prediction->reports) {
    w.BeginObject();
    w.Field("name", s.script.display_name);
    w.Field("path", s.script.path);
    w.Key("params").BeginObject();
    for (const lua::ParamValue& p : s.params) {
      w.Key(p.name);
      if (p.type == "number") {
        double v = 0;
        if (absl::SimpleAtod(p.value_text, &v)) {
          w.Double(v);
        } else {
          w.String(p.value_text);
        }
      } else if (p.type == "boolean") {
        w.Bool(p.value_text == "true" || p.value_text == "1" || p.value_text == "yes" ||
               p.value_text == "on");
      } else {
        w.String(p.value_text);
      }
    }
    w.EndObject();
    w.Key("changes");
    WriteChanges(w, s.changes);
    w.Key("log").BeginArray();
    for (const std::string& line : s.log) w.String(line);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Field("schedule_policy", r.prediction->schedule_description);
  w.Field("step_definition", kStepDefinition);
  w.Field("baseline_us", base_us);
  w.Field("predicted_us", pred_us);
  w.Field("speedup", pred_us > 0 ? base_us / pred_us : 0.0);
  w.Key("baseline_noise");
  WriteStepJson(w, bs);
  w.Key("predicted_noise");
  WriteStepJson(w, ps);
  w.Key("changes");
  WriteChanges(w, r.prediction->changes);
  w.Key("iterations").BeginArray();
  const size_t n = std::min(r.base->iterations.size(), r.pred->iterations.size());
  for (size_t i = 0; i < n; ++i) {
    w.BeginObject();
    w.Field("name", IterationName(*r.base_graph, r.base->iterations[i], i));
    w.Field("counted", r.base->iterations[i].counted);
    w.Field("baseline_us", r.base_iter_us[i]);
    w.Field("predicted_us", r.pred_iter_us[i]);
    w.EndObject();
  }
  w.EndArray();
  w.Key("time_split").BeginObject();
  w.Key("baseline");
  WriteSplit(w, r.base_split);
  w.Key("predicted");
  WriteSplit(w, r.pred_split);
  w.EndObject();
  w.Key("phases");
  WriteGroups(w, r.phases);
  w.Key("layers");
  WriteGroups(w, r.layers);
  w.EndObject();
  std::printf("%s\n", w.str().c_str());
}

void PrintText(const Result& r) {
  const depgraph::StepStats bs = depgraph::SummarizeSteps(r.base->iterations);
  const depgraph::StepStats ps = depgraph::SummarizeSteps(r.pred->iterations);
  const double base_us = bs.mean_ns / 1e3;
  const double pred_us = ps.mean_ns / 1e3;
  std::printf("trace: %s\n", r.opt->trace.c_str());
  for (const lua::ScriptReport& s : r.prediction->reports) {
    std::printf("script: %s", s.script.display_name.c_str());
    const char* sep = " (";
    for (const lua::ParamValue& p : s.params) {
      std::printf("%s%s=%s%s", sep, p.name.c_str(), p.value_text.c_str(), p.overridden ? "*" : "");
      sep = ", ";
    }
    std::printf("%s\n", s.params.empty() ? "" : ")");
    for (const std::string& line : s.log) std::printf("  | %s\n", line.c_str());
    std::printf("  changed: %lld added, %lld removed, %lld modified tasks; %+lld/-%lld edges; %lld new resources\n",
                static_cast<long long>(s.changes.added), static_cast<long long>(s.changes.removed),
                static_cast<long long>(s.changes.modified),
                static_cast<long long>(s.changes.edges_added),
                static_cast<long long>(s.changes.edges_removed),
                static_cast<long long>(s.changes.resources_added));
  }
  if (r.prediction->schedule_kind != transforms::ScheduleChoice::Kind::kEarliestReady) {
    std::printf("schedule policy: %s\n", r.prediction->schedule_description.c_str());
  }
  std::printf("\n%s\n", kStepDefinition);
  std::printf("baseline (simulated)  %14.1f us per step   %s\n", base_us, StepText(bs).c_str());
  std::printf("predicted             %14.1f us per step   %s\n", pred_us, StepText(ps).c_str());
  std::printf("speedup               %14.3fx  (%+.1f%%)\n", pred_us > 0 ? base_us / pred_us : 0.0,
              base_us > 0 ? (pred_us - base_us) / base_us * 100 : 0.0);
  if (bs.counted > 1 && std::fabs(pred_us - base_us) * 1e3 < bs.max_ns - bs.min_ns) {
    std::printf("note: the predicted change is smaller than the baseline's own step-to-step spread "
                "(%.1f us)\n", (bs.max_ns - bs.min_ns) / 1e3);
  }
  const size_t n = std::min(r.base->iterations.size(), r.pred->iterations.size());
  if (n > 1) {
    std::printf("\n%-28s %14s %14s %9s\n", "step", "baseline_us", "predicted_us", "change");
    for (size_t i = 0; i < n; ++i) {
      const double b = r.base_iter_us[i];
      const double p = r.pred_iter_us[i];
      std::printf("%-28s %14.1f %14.1f %+8.1f%%%s\n",
                  IterationName(*r.base_graph, r.base->iterations[i], i).c_str(), b, p,
                  b > 0 ? (p - b) / b * 100 : 0.0,
                  r.base->iterations[i].counted ? "" : "  (not counted)");
    }
  }
  std::printf("\nwhere the time goes (us per step)       %12s %12s\n", "baseline", "predicted");
  const depgraph::TimeSplit& b = r.base_split;
  const depgraph::TimeSplit& p = r.pred_split;
  std::printf("  cpu only                               %12.1f %12.1f\n", b.cpu_only_ns / 1e3, p.cpu_only_ns / 1e3);
  std::printf("  gpu only                               %12.1f %12.1f\n", b.gpu_only_ns / 1e3, p.gpu_only_ns / 1e3);
  std::printf("  cpu + gpu                              %12.1f %12.1f\n", b.overlap_ns / 1e3, p.overlap_ns / 1e3);
  std::printf("  idle                                   %12.1f %12.1f\n", b.idle_ns / 1e3, p.idle_ns / 1e3);
  auto table = [](const char* title, const std::vector<GroupDelta>& v) {
    if (v.empty()) return;
    std::printf("\n%-30s %11s %11s %11s %11s %11s\n", title, "base_cpu", "base_gpu", "pred_cpu",
                "pred_gpu", "delta");
    for (const GroupDelta& d : v) {
      std::printf("  %-28.28s %11.1f %11.1f %11.1f %11.1f %+11.1f\n", d.name.c_str(), d.base_cpu_us,
                  d.base_gpu_us, d.pred_cpu_us, d.pred_gpu_us, d.delta_us());
    }
  };
  table("busy time by phase (us/iter)", r.phases);
  table("top layers by change (us/iter)", r.layers);
}

int RunPredict(const std::vector<std::string>& raw_args) {
  std::vector<std::string> args = raw_args;
  std::string timeline;
  if (absl::Status s = report::ExtractTimelineFlag(args, &timeline); !s.ok()) {
    return BadInput("predict: " + std::string(s.message()));
  }
  Options opt;
  std::string error;
  if (!ParseArgs(args, &opt, &error)) return BadInput(error);
  if (!timeline.empty()) {
    std::vector<std::string> inputs = opt.script.scripts;
    inputs.push_back(opt.trace);
    if (std::string why = OverwritesInput(timeline, inputs); !why.empty()) return BadInput(why);
  }
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> loaded =
      LoadForCli(opt.trace, opt.build);
  if (!loaded.ok()) return BadInput(std::string(loaded.status().message()));
  const Graph* graph = &(*loaded)->graph;
  const SimResult* base = &(*loaded)->baseline;

  std::string traceback;
  absl::StatusOr<whatif::Prediction> prediction =
      whatif::Predict(**loaded, opt.script, &traceback);
  if (!prediction.ok()) {
    // The first line always; Lua's traceback only in text mode.
    BadInput(std::string(prediction.status().message()));
    if (!opt.json && !traceback.empty()) std::fprintf(stderr, "%s\n", traceback.c_str());
    return kExitBadInput;
  }
  const Graph& predicted = prediction->graph;
  const SimResult* pred = &prediction->sim;
  if (absl::Status s = report::MaybeWriteTimeline(timeline, *graph, *base, &predicted, pred);
      !s.ok()) {
    return BadInput(std::string(s.message()));
  }

  const depgraph::GraphBreakdown bb = depgraph::ComputeBreakdown(*graph, *base);
  const depgraph::GraphBreakdown pb = depgraph::ComputeBreakdown(predicted, *pred);
  const double iters = static_cast<double>(std::max<size_t>(1, base->iterations.size()));
  Result r{&opt,          graph,         &predicted,  base,
           pred,          &*prediction,  {},          {},
           MeanSplit(bb), MeanSplit(pb), IterationTimesUs(*base), IterationTimesUs(*pred)};
  r.phases = Deltas(bb.by_phase, pb.by_phase, iters);
  r.layers = TopByDelta(Deltas(bb.by_layer, pb.by_layer, iters), opt.top);
  if (opt.json) {
    PrintJson(r);
  } else {
    PrintText(r);
  }
  return kExitOk;
}

}  // namespace

REVERIE_COMMAND(predict, "predict", kUsage,
                "apply optimization scripts (Lua) and predict the new iteration time", RunPredict);

}  // namespace reverie::cli
