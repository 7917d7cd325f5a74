// `reverie validate BEFORE AFTER --script F [--script F ...] [--set k=v ...]
// [--json] [--top N]`: predicts AFTER from BEFORE with the scripts and
// compares the prediction with what AFTER measured, per step and on the
// mean, with each file's step-to-step noise (report/validate.h). The one
// step-time definition applies to all three sides (depgraph/step_time.h).
//
// Errors (one line, exit 2): a file that cannot be loaded or simulated, a
// script error, a pair whose counted step counts differ (they did not
// profile the same loop) or where one side has step markers and the other
// none.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/load.h"
#include "cli/command.h"
#include "cli/json_writer.h"
#include "cli/script_args.h"
#include "cli/step_report.h"
#include "depgraph/step_time.h"
#include "report/validate.h"

namespace reverie::cli {
namespace {

constexpr char kUsage[] =
    "validate BEFORE AFTER --script FILE [--script FILE ...] [--set [SCRIPT.]KEY=VALUE ...] "
    "[--json] [--top N] [--cpu-model ops|gaps] [--lua-budget N] [--lua-memory-mb N] "
    "[--no-sandbox]";

struct Options {
  std::string before, after;
  ScriptArgs script;
  bool json = false;
  int top = 10;
  depgraph::BuildOptions build;  // --cpu-model gaps: cpu_ops = false
};

bool ParseArgs(const std::vector<std::string>& args, Options* o, std::string* error) {
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (ConsumeScriptArg("validate", args, &i, &o->script, error)) {
      if (!error->empty()) return false;
    } else if (a == "--json") {
      o->json = true;
    } else if (a == "--cpu-model") {
      if (i + 1 >= args.size() || (args[i + 1] != "ops" && args[i + 1] != "gaps")) {
        *error = "validate: --cpu-model expects ops (op and framework time apart) or gaps";
        return false;
      }
      o->build.cpu_ops = args[++i] == "ops";
    } else if (a == "--top") {
      int64_t n = 0;
      if (i + 1 >= args.size() || !absl::SimpleAtoi(args[i + 1], &n) || n <= 0) {
        *error = "validate: --top expects a positive integer";
        return false;
      }
      o->top = static_cast<int>(std::min<int64_t>(n, 10000));
      ++i;
    } else if (!a.empty() && a[0] == '-') {
      *error = "validate: unknown option '" + a + "' (usage: " + kUsage + ")";
      return false;
    } else {
      files.push_back(a);
    }
  }
  if (files.size() != 2) {
    *error = std::string("validate: expected BEFORE and AFTER (usage: ") + kUsage + ")";
    return false;
  }
  o->before = files[0];
  o->after = files[1];
  if (o->script.scripts.empty()) {
    *error = "validate: give the --script(s) that model the change from BEFORE to AFTER";
    return false;
  }
  return true;
}

report::StepProfile Measured(const depgraph::Graph& g) {
  const depgraph::TaskTimes m = depgraph::MeasuredTimes(g);
  return report::ProfileSteps(g, m.start, m.end, depgraph::MeasuredIterations(g));
}

bool HasMarkers(const depgraph::Graph& g) {
  return !(g.iteration_count() == 1 && g.iteration_info(0).name == "whole trace");
}

void PrintJson(const Options& o, const report::Validation& v) {
  JsonWriter w;
  w.BeginObject();
  w.Field("before", o.before).Field("after", o.after);
  w.Field("cpu_model", o.build.cpu_ops ? "ops" : "gaps");
  w.Key("scripts").BeginArray();
  for (const std::string& s : o.script.scripts) w.String(s);
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
  auto metrics = [&](const char* key, const std::vector<report::Metric>& rows) {
    w.Key(key).BeginArray();
    for (const report::Metric& m : rows) {
      w.BeginObject().Field("name", m.name).Field("baseline", m.baseline);
      w.Field("predicted", m.predicted).Field("measured", m.measured);
      w.Field("error_pct", m.error_pct()).EndObject();
    }
    w.EndArray();
  };
  metrics("per_step", v.metrics);
  metrics("kernel_classes_us", v.classes);
  w.Key("kernels").BeginArray();
  for (const report::KernelDelta& k : v.kernels) {
    w.BeginObject().Field("name", k.name).Field("change", k.change);
    w.Field("baseline_count", k.baseline_count).Field("predicted_count", k.predicted_count);
    w.Field("measured_count", k.measured_count).Field("baseline_us", k.baseline_us);
    w.Field("predicted_us", k.predicted_us).Field("measured_us", k.measured_us).EndObject();
  }
  w.EndArray();
  w.EndObject();
  std::printf("%s\n", w.str().c_str());
}

int RunValidate(const std::vector<std::string>& args) {
  Options o;
  std::string error;
  if (!ParseArgs(args, &o, &error)) return BadInput(error);
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> before =
      LoadForCli(o.before, o.build);
  if (!before.ok()) return BadInput(std::string(before.status().message()));
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> after =
      LoadForCli(o.after, o.build);
  if (!after.ok()) return BadInput(std::string(after.status().message()));
  const depgraph::Graph& bg = (*before)->graph;
  const depgraph::Graph& ag = (*after)->graph;
  if (HasMarkers(bg) != HasMarkers(ag)) {
    return BadInput(absl::StrCat(HasMarkers(bg) ? o.after : o.before,
                                 ": has no ProfilerStep markers while the other trace has them: "
                                 "the pair cannot be compared step by step"));
  }
  const depgraph::StepStats bs = depgraph::SummarizeSteps(depgraph::MeasuredIterations(bg));
  const depgraph::StepStats as = depgraph::SummarizeSteps(depgraph::MeasuredIterations(ag));
  if (bs.counted != as.counted) {
    return BadInput(absl::StrCat(o.after, ": ", as.counted, " counted steps where ", o.before,
                                 " has ", bs.counted, ": not the same loop profiled twice"));
  }
  std::string traceback;
  absl::StatusOr<whatif::Prediction> p =
      whatif::Predict(**before, o.script, &traceback);
  if (!p.ok()) return BadInput(std::string(p.status().message()));
  const report::StepProfile base = report::ProfileSteps(bg, (*before)->baseline.start_ns,
                                                        (*before)->baseline.end_ns,
                                                        (*before)->baseline.iterations);
  const report::StepProfile pred =
      report::ProfileSteps(p->graph, p->sim.start_ns, p->sim.end_ns, p->sim.iterations);
  const report::StepProfile meas = Measured(ag);
  std::vector<std::string> names;
  for (size_t i = 0; i < ag.iteration_count(); ++i) {
    names.push_back(ag.iteration_info(static_cast<int32_t>(i)).name);
  }
  const report::Validation v = report::Validate(base, pred, meas, names, o.top);
  if (o.json) {
    PrintJson(o, v);
  } else {
    std::printf("before: %s\nafter:  %s\nscripts:", o.before.c_str(), o.after.c_str());
    for (const std::string& s : o.script.scripts) std::printf(" %s", s.c_str());
    std::printf("\n%s\n\n%s", kStepDefinition, report::ValidationText(v).c_str());
  }
  return kExitOk;
}

}  // namespace

REVERIE_COMMAND(validate, "validate", kUsage,
                "predict AFTER from BEFORE with scripts and compare with what AFTER measured",
                RunValidate);

}  // namespace reverie::cli
