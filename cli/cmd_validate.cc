// `reverie validate BEFORE AFTER --script F [--script F ...] [--set k=v ...]
// [--json] [--top N]`: predicts AFTER from BEFORE with the scripts and
// compares the prediction with what AFTER measured, per step and on the
// mean, with each file's step-to-step noise (whatif/validate.h). The one
// step-time definition applies to all three sides (depgraph/step_time.h).
//
// Errors (one line, exit 2): a file that cannot be loaded or simulated, a
// script error, a pair whose counted step counts differ (they did not
// profile the same loop) or where one side has step markers and the other
// none.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/load.h"
#include "cli/script_args.h"
#include "depgraph/step_time.h"
#include "whatif/step_report.h"
#include "whatif/validate.h"

namespace reverie::cli {
namespace {

using whatif::kStepDefinition;

struct Options {
  std::string before, after;
  ScriptArgs script;
  bool json = false;
  int top = 10;
  depgraph::BuildOptions build;  // --cpu-model gaps: cpu_ops = false
};

absl::Status RunValidate(Options& o) {
  if (o.script.scripts.empty()) {
    return UsageError("give the --script(s) that model the change from BEFORE to AFTER");
  }
  o.top = std::min(o.top, 10000);
  REVERIE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<whatif::LoadedTrace>> loaded,
                           LoadAllForCli({o.before, o.after}, o.build));
  std::string traceback;
  REVERIE_ASSIGN_OR_RETURN(
      whatif::Validation v,
      whatif::ValidatePrediction(*loaded[0], *loaded[1], o.script, o.top, &traceback));
  if (o.json) {
    std::printf("%s\n", whatif::ValidationJson(v, o.before, o.after,
                                                o.build.cpu_ops ? "ops" : "gaps", o.script.scripts)
                            .c_str());
  } else {
    std::printf("before: %s\nafter:  %s\nscripts:", o.before.c_str(), o.after.c_str());
    for (const std::string& s : o.script.scripts) std::printf(" %s", s.c_str());
    std::printf("\n%s\n\n%s", kStepDefinition, whatif::ValidationText(v).c_str());
  }
  return absl::OkStatus();
}

RunFn SetupValidate(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArg(app, "BEFORE", &o->before, "the trace the prediction starts from");
  AddArg(app, "AFTER", &o->after, "the measured trace of the changed program");
  AddScriptFlags(app, &o->script);
  app.add_flag("--json", o->json, "machine-readable output");
  AddInt(app, "--top", &o->top, 1, kNoMax, "rows per table (default 10)");
  AddCpuModelFlag(app, &o->build);
  return [o] { return RunValidate(*o); };
}

}  // namespace

REVERIE_COMMAND(validate, "validate",
                "predict AFTER from BEFORE with scripts and compare with what AFTER measured",
                SetupValidate);

}  // namespace reverie::cli
