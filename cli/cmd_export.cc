// `reverie export TRACE --chakra PREFIX [--ranks N] [--script FILE ...]
// [--set [SCRIPT.]KEY=VALUE ...] [--lua-budget N] [--lua-memory-mb N]
// [--no-sandbox]`: writes the dependency graph, as simulated, as Chakra
// execution traces PREFIX.0.et .. PREFIX.(N-1).et for ASTRA-sim
// (export/chakra.h has the mapping). Without --script the graph is the
// baseline; with scripts it is the graph they produce, loaded and run exactly
// as `reverie predict` does, with the same script flags (cli/script_args.h,
// whatif/pipeline.h). Every rank gets the same graph: a data-parallel
// what-if (ddp.lua workers=N with --ranks N) is symmetric.
//
// stdout: one line per file written with its node and dependency counts;
// what the format could not express goes to stderr as notes, as do how many
// collectives the trace's Collective records sized and, per collective type,
// a count mismatch that left them at comm_size 0. Errors: one line
// naming the file, exit 2; an output path that is one of the inputs is
// refused before anything is read or written.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/load.h"
#include "cli/command.h"
#include "cli/paths.h"
#include "cli/script_args.h"
#include "export/chakra.h"
#include "scripts/script_runner.h"

namespace reverie::cli {
namespace {

constexpr char kUsage[] =
    "export TRACE --chakra PREFIX [--ranks N] [--script FILE ...] [--set [SCRIPT.]KEY=VALUE ...] "
    "[--lua-budget N] [--lua-memory-mb N] [--no-sandbox]";
constexpr int kMaxRanks = 65536;

struct Options {
  std::string trace;
  std::string prefix;
  int ranks = 1;
  ScriptArgs script;
};

bool ParseArgs(const std::vector<std::string>& args, Options* o, std::string* error) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) {
        *error = absl::StrCat("export: ", a, " needs a value");
        return false;
      }
      *out = args[++i];
      return true;
    };
    std::string v;
    if (ConsumeScriptArg("export", args, &i, &o->script, error)) {
      if (!error->empty()) return false;
    } else if (a == "--chakra") {
      if (!value(&o->prefix)) return false;
      if (o->prefix.empty()) {
        *error = "export: --chakra needs a non-empty PREFIX";
        return false;
      }
    } else if (a == "--ranks") {
      if (!value(&v)) return false;
      if (!absl::SimpleAtoi(v, &o->ranks) || o->ranks < 1 || o->ranks > kMaxRanks) {
        *error = absl::StrCat("export: --ranks expects an integer in 1..", kMaxRanks, ", got '", v,
                              "'");
        return false;
      }
    } else if (a.size() > 1 && a[0] == '-') {
      *error = absl::StrCat("export: unknown option '", a, "' (usage: reverie ", kUsage, ")");
      return false;
    } else if (o->trace.empty()) {
      o->trace = a;
    } else {
      *error = absl::StrCat("export: more than one TRACE given ('", o->trace, "', '", a, "')");
      return false;
    }
  }
  if (o->trace.empty()) {
    *error = absl::StrCat("export: missing TRACE (usage: reverie ", kUsage, ")");
    return false;
  }
  if (o->prefix.empty()) {
    *error = "export: give --chakra PREFIX (writes PREFIX.0.et, PREFIX.1.et, ...)";
    return false;
  }
  if (!o->script.settings.empty() && o->script.scripts.empty()) {
    *error = "export: --set needs a --script to apply to";
    return false;
  }
  return true;
}

void PrintNotes(const exporter::ChakraTrace& trace) {
  const exporter::ChakraStats& s = trace.stats;
  std::fprintf(stderr,
               "chakra: %lld CPU, %lld GPU, %lld collective, %lld gap nodes; %lld dependencies\n",
               static_cast<long long>(s.cpu_nodes), static_cast<long long>(s.gpu_nodes),
               static_cast<long long>(s.comm_nodes), static_cast<long long>(s.gap_nodes),
               static_cast<long long>(s.dependencies));
  if (s.comm_record_sized > 0) {
    std::fprintf(stderr,
                 "chakra: %lld collectives sized from the trace's Collective records (paired "
                 "by order per collective type)\n",
                 static_cast<long long>(s.comm_record_sized));
  }
  for (const exporter::CollectiveTypeMatch& m : trace.collective_types) {
    if (m.records == 0 || m.matched()) continue;
    std::fprintf(stderr,
                 "note: %s: %lld recorded kernels but %lld sized Collective records; pairing by "
                 "order needs equal counts, so none of them is sized from a record\n",
                 chakra_et::CollectiveCommType_Name(m.type).c_str(),
                 static_cast<long long>(m.kernels), static_cast<long long>(m.records));
  }
  if (s.comm_unsized > 0) {
    const std::string mismatch =
        s.comm_count_mismatch > 0
            ? absl::StrCat(" (", s.comm_count_mismatch, " of them for a count mismatch above)")
            : "";
    std::fprintf(stderr,
                 "note: %lld collectives have no known size and are written with comm_size 0%s "
                 "(ASTRA-sim raises a zero all-reduce / reduce-scatter / all-to-all to its minimum "
                 "chunk; a zero all-gather is not safe there)\n",
                 static_cast<long long>(s.comm_unsized), mismatch.c_str());
  }
  if (s.comm_untyped > 0) {
    std::fprintf(stderr,
                 "note: %lld communication tasks are no all-reduce / all-gather / reduce-scatter / "
                 "all-to-all / broadcast; written as compute nodes of their simulated duration\n",
                 static_cast<long long>(s.comm_untyped));
  }
  if (s.delayed_edges > 0) {
    std::fprintf(stderr,
                 "note: %lld dependency delays (launch latency, event and window offsets; %.1f us "
                 "in all) have no Chakra field and were dropped\n",
                 static_cast<long long>(s.delayed_edges), s.dropped_delay_ns / 1e3);
  }
  if (s.channel_gaps > 0) {
    std::fprintf(stderr, "note: %lld gaps on communication channels were dropped\n",
                 static_cast<long long>(s.channel_gaps));
  }
  if (s.zero_us_nodes > 0) {
    std::fprintf(stderr, "note: %lld sub-microsecond nodes round to 0 us\n",
                 static_cast<long long>(s.zero_us_nodes));
  }
}

int RunExport(const std::vector<std::string>& args) {
  Options opt;
  std::string error;
  if (!ParseArgs(args, &opt, &error)) return BadInput(error);
  std::vector<std::string> inputs = opt.script.scripts;
  inputs.push_back(opt.trace);
  for (int r = 0; r < opt.ranks; ++r) {
    const std::string why = OverwritesInput(exporter::ChakraRankPath(opt.prefix, r), inputs);
    if (!why.empty()) return BadInput(why);
  }

  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> base =
      LoadForCli(opt.trace);
  if (!base.ok()) return BadInput(std::string(base.status().message()));
  const depgraph::Graph* graph = &(*base)->graph;
  const depgraph::SimResult* sim = &(*base)->baseline;
  whatif::Prediction predicted;
  if (!opt.script.scripts.empty()) {
    absl::StatusOr<whatif::Prediction> p = whatif::Predict(**base, opt.script);
    if (!p.ok()) return BadInput(std::string(p.status().message()));
    predicted = std::move(*p);
    graph = &predicted.graph;
    sim = &predicted.sim;
  }

  // The graph keeps the trace's task ids through scripts, so the trace's
  // Collective records size its recorded kernels either way.
  absl::StatusOr<exporter::ChakraTrace> trace =
      exporter::ExportChakra(*graph, *sim, {.collectives = (*base)->model.collectives});
  if (!trace.ok()) {
    return BadInput(absl::StrCat(opt.trace, ": cannot export: ", trace.status().message()));
  }
  absl::StatusOr<std::vector<std::string>> written =
      exporter::WriteChakraRanks(*trace, opt.prefix, opt.ranks);
  if (!written.ok()) return BadInput(std::string(written.status().message()));
  const exporter::ChakraStats& s = trace->stats;
  for (const std::string& path : *written) {
    std::printf("wrote %s: %lld nodes, %lld dependencies\n", path.c_str(),
                static_cast<long long>(s.nodes), static_cast<long long>(s.dependencies));
  }
  PrintNotes(*trace);
  return kExitOk;
}

}  // namespace

REVERIE_COMMAND(export_chakra, "export", kUsage,
                "write the (predicted) dependency graph as Chakra traces for ASTRA-sim",
                RunExport);

}  // namespace reverie::cli
