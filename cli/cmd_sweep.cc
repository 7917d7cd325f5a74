// `reverie sweep TRACE --script F [--script F ...] --set k=v1,v2,... [--set ...]
//  [--json] [--svg OUT.svg] [--lua-budget N] [--lua-memory-mb N] [--no-sandbox]`:
// predicts the iteration time at every point of the cartesian grid of the
// --set values (scripts applied in order at each point), prints a table (or
// JSON) of predicted time and speedup, and optionally writes a line chart:
// x = the first parameter, one line per combination of the others
// (report/sweep.h).
//
// --script and the Lua limits are the shared script flags (cli/script_args.h);
// --set is sweep's own, a comma list of values per key, so it is parsed
// here before the shared flags are tried. Every point gets the same limits.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "cli/load.h"
#include "cli/command.h"
#include "cli/paths.h"
#include "cli/script_args.h"
#include "report/progress.h"
#include "report/sweep.h"
#include "whatif/sweep.h"

namespace reverie::cli {
namespace {

constexpr char kUsage[] =
    "sweep TRACE --script F [--script F ...] --set [SCRIPT.]KEY=V1,V2,... [--set ...] [--json] "
    "[--svg OUT.svg] [--lua-budget N] [--lua-memory-mb N] [--no-sandbox]";

int RunSweep(const std::vector<std::string>& args) {
  std::string trace_path, svg_path;
  ScriptArgs script_args;  // its settings stay empty: each grid point sets its own
  const std::vector<std::string>& scripts = script_args.scripts;
  std::vector<report::SweepParam> params;
  bool json = false;
  std::string error;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--set" || a == "--svg") {
      if (i + 1 >= args.size()) return BadInput(absl::StrCat("sweep: ", a, " needs a value"));
      const std::string& v = args[++i];
      if (a == "--svg") {
        svg_path = v;
      } else {
        absl::StatusOr<report::SweepParam> p = report::ParseSweepParam(v);
        if (!p.ok()) return BadInput(absl::StrCat("sweep: ", p.status().message()));
        for (const report::SweepParam& q : params) {
          if (q.key == p->key)
            return BadInput(absl::StrCat("sweep: --set ", p->key, " given twice"));
        }
        params.push_back(std::move(*p));
      }
    } else if (ConsumeScriptArg("sweep", args, &i, &script_args, &error)) {
      if (!error.empty()) return BadInput(error);
    } else if (a == "--json") {
      json = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return BadInput(
          absl::StrCat("sweep: unknown option '", a, "' (usage: reverie ", kUsage, ")"));
    } else if (trace_path.empty()) {
      trace_path = a;
    } else {
      return BadInput(
          absl::StrCat("sweep: more than one TRACE given ('", trace_path, "', '", a, "')"));
    }
  }
  if (trace_path.empty())
    return BadInput(absl::StrCat("sweep: missing TRACE (usage: reverie ", kUsage, ")"));
  if (scripts.empty()) return BadInput("sweep: at least one --script is needed");
  if (params.empty()) return BadInput("sweep: at least one --set key=v1,v2,... is needed");
  if (!svg_path.empty()) {
    std::vector<std::string> inputs = scripts;
    inputs.push_back(trace_path);
    if (std::string why = OverwritesInput(svg_path, inputs); !why.empty()) return BadInput(why);
  }

  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> base =
      LoadForCli(trace_path);
  if (!base.ok()) return BadInput(std::string(base.status().message()));

  report::Progress progress("sweep", static_cast<int>(report::SweepGrid(params).size()));
  absl::StatusOr<report::SweepResult> swept = whatif::Sweep(
      **base, script_args, params, [&progress](int done, int) { progress.Update(done); });
  if (!swept.ok()) return BadInput(std::string(swept.status().message()));
  const report::SweepResult& result = *swept;
  int failed = 0;
  for (const report::SweepPoint& p : result.points) failed += p.error.empty() ? 0 : 1;
  if (!svg_path.empty()) {
    // Atomically: a failed write leaves no half chart behind.
    if (absl::Status s = WriteFileAtomically(svg_path, report::SweepChart(result).Str()); !s.ok()) {
      return BadInput(std::string(s.message()));
    }
  }
  const std::string out = json ? report::SweepJson(result) : report::SweepTable(result);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return failed > 0 ? kExitFailure : kExitOk;
}

}  // namespace

REVERIE_COMMAND(sweep, "sweep", kUsage, "predict iteration time over a grid of script parameters",
                RunSweep);

}  // namespace reverie::cli
