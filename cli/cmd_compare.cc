// `reverie compare A B [--json] [--top N]`: how far trace A (a prediction or
// any trace) is from trace B (a measured run), per step, per kernel
// class, per layer and per kernel. See whatif/compare.h for the rules.
// --a-pid / --b-pid pick one run of a timeline written with --timeline
// (1 = measured, 2 = simulated baseline, 3 = predicted).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/progress.h"
#include "frameworks/trace_loader.h"
#include "whatif/compare.h"

namespace reverie::cli {
namespace {

// One line naming the file, whatever the loader's message looks like.
std::string FileError(const std::string& path, const absl::Status& s) {
  std::string msg = absl::StrReplaceAll(s.message(), {{"\n", " "}, {"\r", " "}});
  if (msg.find(path) == std::string::npos) msg = absl::StrCat(path, ": ", msg);
  return msg;
}

struct Options {
  std::string files[2];
  bool json = false;
  int top_n = 10;
  int64_t pids[2] = {-1, -1};
};

absl::Status RunCompare(const Options& o) {
  whatif::TraceProfile profiles[2];
  for (int k = 0; k < 2; ++k) {
    const std::string& file = o.files[k];
    Progress progress("loading", 2);
    progress.Update(k, file);
    absl::StatusOr<Trace> trace = LoadTraceFile(file);
    if (!trace.ok()) return absl::Status(trace.status().code(), FileError(file, trace.status()));
    if (trace->events().gpu_activities_size() == 0 && trace->events().api_calls_size() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": trace holds no GPU activity or API call"));
    }
    int64_t pid = o.pids[k];
    if (pid < 0) {
      REVERIE_ASSIGN_OR_RETURN(int64_t chosen, whatif::DefaultRun(*trace, file));
      pid = chosen;
    }
    profiles[k] = whatif::ProfileTrace(*trace, file, pid);
  }
  const whatif::CompareResult r = whatif::Compare(profiles[0], profiles[1]);
  const std::string out = o.json ? whatif::CompareJson(r, o.top_n > 0 ? o.top_n : 50)
                                 : whatif::CompareText(r, o.top_n);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return absl::OkStatus();
}

RunFn SetupCompare(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArg(app, "A", &o->files[0], "a prediction (a --timeline file) or any trace");
  AddArg(app, "B", &o->files[1], "the measured trace to compare with");
  app.add_flag("--json", o->json, "machine-readable output");
  AddInt(app, "--top", &o->top_n, 0, kNoMax, "rows per table (default 10; 0: in JSON, 50)");
  AddInt(app, "--a-pid", &o->pids[0], 0, kNoMax,
         "the process of A to read, for a timeline (1 measured, 2 simulated, 3 predicted)");
  AddInt(app, "--b-pid", &o->pids[1], 0, kNoMax, "the process of B to read, as --a-pid");
  return [o] { return RunCompare(*o); };
}

}  // namespace

REVERIE_COMMAND(compare, "compare", "compare a prediction (or any trace) with a measured trace",
                SetupCompare);

}  // namespace reverie::cli
