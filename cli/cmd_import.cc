// `reverie import IN -o OUT.pb`: converts any supported trace (Kineto JSON,
// .json.gz, or .pb) to reverie's .pb format, written atomically and ending
// with the end marker. `--salvage` reads a .pb that other commands refuse
// (truncated by a crash or a full disk, or from schema 1 without an end
// marker) and keeps its complete chunks, counted as `truncated_chunk`.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/paths.h"
#include "frameworks/trace_loader.h"
#include "proto/trace_io.h"

namespace reverie::cli {
namespace {

struct Options {
  std::string in, out;
  bool salvage = false;
  int threads = 0;
};

absl::Status RunImport(const Options& o) {
  if (SameFile(o.in, o.out)) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.out, ": refusing to overwrite the input trace; choose another -o"));
  }
  absl::StatusOr<Trace> trace =
      o.salvage ? ReadTrace(o.in, {.salvage = true}) : LoadTraceFile(o.in, {.threads = o.threads});
  if (!trace.ok()) return trace.status();
  if (o.salvage && trace->GetCounter(TraceCounter::truncated_chunk) > 0) {
    std::fprintf(stderr, "reverie: %s: incomplete; kept its complete chunks (counted as "
                 "truncated_chunk)\n", o.in.c_str());
  } else if (o.salvage && trace->GetCounter(TraceCounter::missing_end_marker) > 0) {
    std::fprintf(stderr, "reverie: %s: no end marker (an older schema); kept all it holds\n",
                 o.in.c_str());
  }
  // A write that fails (a full disk, an output it cannot create) exits 2,
  // as every other command's does (issue 29: it exited 1 here alone).
  REVERIE_RETURN_IF_ERROR(WriteTrace(*trace, o.out, {.threads = o.threads}));
  const proto::TraceChunk& ev = trace->events();
  std::printf("%s: %d API calls, %d GPU activities, %d syncs, %d ranges, %d steps (from %s)\n",
              o.out.c_str(), ev.api_calls_size(), ev.gpu_activities_size(), ev.syncs_size(),
              ev.ranges_size(), ev.steps_size(), o.in.c_str());
  return absl::OkStatus();
}

RunFn SetupImport(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArg(app, "IN", &o->in, "the trace to convert (Kineto .json / .json.gz, or .pb)");
  AddPath(app, "-o,--output", &o->out, "the .pb to write", "OUT.pb", "a file name")->required();
  app.add_flag("--salvage", o->salvage,
               "keep the complete chunks of a .pb other commands refuse (truncated, or without "
               "an end marker)");
  AddInt(app, "--threads", &o->threads, 1, 1024,
         "threads decoding a JSON trace at once (default: $REVERIE_THREADS, else every core; "
         "the .pb is the same)");
  return [o] { return RunImport(*o); };
}

}  // namespace
}  // namespace reverie::cli

REVERIE_COMMAND(import, "import",
                "convert a Kineto JSON (.json/.json.gz) or .pb trace to reverie .pb",
                reverie::cli::SetupImport);
