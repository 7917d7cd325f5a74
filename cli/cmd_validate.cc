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
#include "cli/script_args.h"
#include "report/step_report.h"
#include "depgraph/step_time.h"
#include "report/validate.h"
#include "whatif/validate.h"

namespace reverie::cli {
namespace {

using report::kStepDefinition;

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
  std::string traceback;
  absl::StatusOr<report::Validation> v =
      whatif::ValidatePrediction(**before, **after, o.script, o.top, &traceback);
  if (!v.ok()) return BadInput(std::string(v.status().message()));
  if (o.json) {
    std::printf("%s\n", report::ValidationJson(*v, o.before, o.after,
                                                o.build.cpu_ops ? "ops" : "gaps", o.script.scripts)
                            .c_str());
  } else {
    std::printf("before: %s\nafter:  %s\nscripts:", o.before.c_str(), o.after.c_str());
    for (const std::string& s : o.script.scripts) std::printf(" %s", s.c_str());
    std::printf("\n%s\n\n%s", kStepDefinition, report::ValidationText(*v).c_str());
  }
  return kExitOk;
}

}  // namespace

REVERIE_COMMAND(validate, "validate", kUsage,
                "predict AFTER from BEFORE with scripts and compare with what AFTER measured",
                RunValidate);

}  // namespace reverie::cli
