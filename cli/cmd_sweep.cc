// `reverie sweep TRACE --script F [--script F ...] --set k=v1,v2,... [--set ...]
//  [--json] [--svg OUT.svg] [--threads N] [--lua-budget N] [--lua-memory-mb N] [--no-sandbox]`:
// predicts the step time at every point of the cartesian grid of the
// --set values (scripts applied in order at each point), prints a table (or
// JSON) of predicted time and speedup, and optionally writes a line chart:
// x = the first parameter, one line per combination of the others
// (report/sweep.h).
//
// --script and the Lua limits are the shared script flags (cli/script_args.h);
// --set is sweep's own, a comma list of values per key (AddGridFlag). Every
// point gets the same limits.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/status_macros.h"
#include "cli/load.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/paths.h"
#include "cli/script_args.h"
#include "cli/progress.h"
#include "report/sweep.h"
#include "whatif/sweep.h"

namespace reverie::cli {
namespace {

struct Options {
  std::string trace_path, svg_path;
  ScriptArgs script_args;  // its settings stay empty: each grid point sets its own
  std::vector<report::SweepParam> params;
  bool json = false;
  int threads = 0;  // 0: every core
};

absl::Status RunSweep(const Options& o) {
  const std::string& trace_path = o.trace_path;
  const std::string& svg_path = o.svg_path;
  const ScriptArgs& script_args = o.script_args;
  const std::vector<std::string>& scripts = script_args.scripts;
  const std::vector<report::SweepParam>& params = o.params;
  if (scripts.empty()) return UsageError("at least one --script is needed");
  if (params.empty()) return UsageError("at least one --set key=v1,v2,... is needed");
  std::vector<std::string> inputs = scripts;
  inputs.push_back(trace_path);
  REVERIE_RETURN_IF_ERROR(CheckOutputs({svg_path}, inputs));

  REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<whatif::LoadedTrace> base, LoadForCli(trace_path));

  Progress progress("sweep", static_cast<int>(report::SweepGrid(params).size()));
  absl::StatusOr<report::SweepResult> swept = whatif::Sweep(
      *base, script_args, params, [&progress](int done, int) { progress.Update(done); }, o.threads);
  if (!swept.ok()) return swept.status();
  const report::SweepResult& result = *swept;
  int failed = 0;
  for (const report::SweepPoint& p : result.points) failed += p.error.empty() ? 0 : 1;
  if (!svg_path.empty()) {
    // Atomically: a failed write leaves no half chart behind.
    REVERIE_RETURN_IF_ERROR(WriteFileAtomically(svg_path, report::SweepChart(result).Str()));
  }
  const std::string out = o.json ? report::SweepJson(result) : report::SweepTable(result);
  std::fwrite(out.data(), 1, out.size(), stdout);
  // A failed point is in the table: the answer is there, and it is "no".
  if (failed > 0) return WithExitStatus(absl::AbortedError(""), kExitFailure);
  return absl::OkStatus();
}

// Sweep's own --set: KEY=V1,V2,... per occurrence, each key once.
void AddGridFlag(CLI::App& app, std::vector<report::SweepParam>* params) {
  app.add_option_function<std::vector<std::string>>(
         "--set",
         [params](const std::vector<std::string>& values) {
           for (const std::string& v : values) {
             absl::StatusOr<report::SweepParam> p = report::ParseSweepParam(v);
             if (!p.ok()) throw CLI::ValidationError(std::string(p.status().message()));
             for (const report::SweepParam& q : *params) {
               if (q.key == p->key) {
                 throw CLI::ValidationError(absl::StrCat("--set ", p->key, " given twice"));
               }
             }
             params->push_back(std::move(*p));
           }
         },
         "the values of a script parameter to sweep, a comma list; repeatable, one per key")
      ->type_name("[SCRIPT.]KEY=V1,V2,...")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

RunFn SetupSweep(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArg(app, "TRACE", &o->trace_path, "the profiled trace");
  AddScriptFlag(app, &o->script_args);
  AddGridFlag(app, &o->params);
  AddLuaLimitFlags(app, &o->script_args);
  app.add_flag("--json", o->json, "machine-readable output");
  AddInt(app, "--threads", &o->threads, 1, 1024,
         "grid points predicted at once (default: $REVERIE_THREADS, else every core; the answer is the same)");
  AddPath(app, "--svg", &o->svg_path, "write a line chart of the sweep", "OUT.svg");
  return [o] { return RunSweep(*o); };
}

}  // namespace

REVERIE_COMMAND(sweep, "sweep", "predict step time over a grid of script parameters",
                SetupSweep);

}  // namespace reverie::cli
