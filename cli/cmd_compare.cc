// `reverie compare A B [--json] [--top N]`: how far trace A (a prediction or
// any trace) is from trace B (a measured run), per iteration, per kernel
// class, per layer and per kernel. See report/compare.h for the rules.
// --a-pid / --b-pid pick one run of a timeline written with --timeline
// (1 = measured, 2 = simulated baseline, 3 = predicted).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cli/command.h"
#include "frameworks/trace_loader.h"
#include "report/compare.h"
#include "report/progress.h"

namespace reverie::cli {
namespace {

constexpr char kUsage[] = "compare A B [--json] [--top N] [--a-pid N] [--b-pid N]";

// One line naming the file, whatever the loader's message looks like.
std::string FileError(const std::string& path, const absl::Status& s) {
  std::string msg = absl::StrReplaceAll(s.message(), {{"\n", " "}, {"\r", " "}});
  if (msg.find(path) == std::string::npos) msg = absl::StrCat(path, ": ", msg);
  return msg;
}

int RunCompare(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  bool json = false;
  int top_n = 10;
  int64_t pids[2] = {-1, -1};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--top") {
      if (i + 1 >= args.size() || !absl::SimpleAtoi(args[i + 1], &top_n) || top_n < 0) {
        return BadInput("compare: --top needs a non-negative number");
      }
      ++i;
    } else if (a == "--a-pid" || a == "--b-pid") {
      int64_t& pid = pids[a == "--a-pid" ? 0 : 1];
      if (i + 1 >= args.size() || !absl::SimpleAtoi(args[i + 1], &pid) || pid < 0) {
        return BadInput(absl::StrCat("compare: ", a, " needs a process id"));
      }
      ++i;
    } else if (a.size() > 1 && a[0] == '-') {
      return BadInput(absl::StrCat("compare: unknown flag ", a, " (usage: reverie ", kUsage, ")"));
    } else {
      files.push_back(a);
    }
  }
  if (files.size() != 2) {
    return BadInput(absl::StrCat("compare: expected two traces (usage: reverie ", kUsage, ")"));
  }
  report::TraceProfile profiles[2];
  for (int k = 0; k < 2; ++k) {
    report::Progress progress("loading", 2);
    progress.Update(k, files[k]);
    absl::StatusOr<Trace> trace = LoadTraceFile(files[k]);
    if (!trace.ok()) return BadInput(FileError(files[k], trace.status()));
    if (trace->events().gpu_activities_size() == 0 && trace->events().api_calls_size() == 0) {
      return BadInput(absl::StrCat(files[k], ": trace holds no GPU activity or API call"));
    }
    profiles[k] = report::ProfileTrace(*trace, files[k], pids[k]);
  }
  const report::CompareResult r = report::Compare(profiles[0], profiles[1]);
  const std::string out =
      json ? report::CompareJson(r, top_n > 0 ? top_n : 50) : report::CompareText(r, top_n);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace

REVERIE_COMMAND(compare, "compare", kUsage,
                "compare a prediction (or any trace) with a measured trace", RunCompare);

}  // namespace reverie::cli
