// `reverie import IN -o OUT.pb`: converts any supported trace (Kineto JSON,
// .json.gz, or .pb) to reverie's .pb format, written atomically and ending
// with the end marker. `--salvage` reads a .pb that other commands refuse
// (truncated by a crash or a full disk, or from schema 1 without an end
// marker) and keeps its complete chunks, counted as `truncated_chunk`.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/paths.h"
#include "frameworks/trace_loader.h"
#include "proto/trace_io.h"

namespace reverie::cli {
namespace {

constexpr char kUsage[] = "import IN -o OUT.pb [--salvage]";

int RunImport(const std::vector<std::string>& args) {
  std::string in, out;
  bool salvage = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--salvage") {
      salvage = true;
    } else if (a == "-o" || a == "--output") {
      if (i + 1 >= args.size()) {
        return BadInput(absl::StrCat("import: ", a, " needs a file name (usage: ", kUsage, ")"));
      }
      out = args[++i];
    } else if (!a.empty() && a[0] == '-') {
      return BadInput(absl::StrCat("import: unknown option '", a, "' (usage: ", kUsage, ")"));
    } else if (in.empty()) {
      in = a;
    } else {
      return BadInput(absl::StrCat("import: more than one input given (usage: ", kUsage, ")"));
    }
  }
  if (in.empty()) return BadInput(absl::StrCat("import: no input trace (usage: ", kUsage, ")"));
  if (out.empty()) return BadInput(absl::StrCat("import: no output given (usage: ", kUsage, ")"));
  if (SameFile(in, out)) {
    return BadInput(absl::StrCat(out, ": refusing to overwrite the input trace; choose another -o"));
  }
  absl::StatusOr<Trace> trace = salvage ? ReadTrace(in, {.salvage = true}) : LoadTraceFile(in);
  if (!trace.ok()) return BadInput(std::string(trace.status().message()));
  if (salvage && trace->GetCounter("truncated_chunk") > 0) {
    std::fprintf(stderr, "reverie: %s: incomplete; kept its complete chunks (counted as "
                 "truncated_chunk)\n", in.c_str());
  } else if (salvage && trace->GetCounter("missing_end_marker") > 0) {
    std::fprintf(stderr, "reverie: %s: no end marker (an older schema); kept all it holds\n",
                 in.c_str());
  }
  if (absl::Status s = WriteTrace(*trace, out); !s.ok()) {
    std::fprintf(stderr, "reverie: %s\n", std::string(s.message()).c_str());
    return kExitFailure;
  }
  const proto::TraceChunk& ev = trace->events();
  std::printf("%s: %d API calls, %d GPU activities, %d syncs, %d ranges, %d iterations (from %s)\n",
              out.c_str(), ev.api_calls_size(), ev.gpu_activities_size(), ev.syncs_size(),
              ev.ranges_size(), ev.iterations_size(), in.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace reverie::cli

REVERIE_COMMAND(import, "import", reverie::cli::kUsage,
                "convert a Kineto JSON (.json/.json.gz) or .pb trace to reverie .pb",
                reverie::cli::RunImport);
