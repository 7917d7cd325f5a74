// `reverie export TRACE [TRACE ...] --chakra PREFIX [--ranks N]
// [--chakra-detail lane|kernels] [--chakra-comm network|replay]
// [--script FILE ...] [--set [SCRIPT.]KEY=VALUE ...] [--lua-budget N]
// [--lua-memory-mb N] [--no-sandbox]`: writes the dependency graph, as
// simulated, as Chakra execution traces PREFIX.0.et .. PREFIX.(N-1).et for
// ASTRA-sim.
//
// - Default (--chakra-detail lane): per rank one compute lane that replays
//   reverie's simulated timeline, with the communication as network nodes
//   (export/chakra_lane.h); --chakra-comm replay keeps the communication on
//   the lane too, at reverie's times (a check of the projection: ASTRA-sim
//   then finishes when reverie does).
// - --chakra-detail kernels: every task a node (export/chakra.h); it warns
//   on stderr what ASTRA-sim will serialise when the graph has more than one
//   CPU thread or GPU stream.
// - One TRACE: every rank gets the same file (a data-parallel what-if,
//   ddp.lua workers=N with --ranks N, is symmetric). Several TRACEs: the
//   ranks of one job, matched and simulated together as `reverie ranks`
//   does (depgraph/ranks.h), one file per rank (export/chakra_job.h), so a
//   straggler stays one.
// Without --script the graph is the baseline; with scripts it is the graph
// they produce (each rank's), loaded and run as `reverie predict` does.
//
// stdout: one line per file written (a summary line beyond 8 files), then
// the reverie time an ASTRA-sim run of the files compares with. Notes on
// what the format could not express go to stderr. Errors: one line naming
// the file, exit 2; an output path that is one of the inputs is refused
// before anything is read or written.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "base/text.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/load.h"
#include "cli/paths.h"
#include "cli/script_args.h"
#include "depgraph/ranks.h"
#include "export/astra_model.h"
#include "export/chakra.h"
#include "export/chakra_check.h"
#include "export/chakra_job.h"
#include "export/chakra_lane.h"
#include "export/comm_typing.h"
#include "whatif/job.h"
#include "whatif/pipeline.h"

namespace reverie::cli {
namespace {

using exporter::CommMode;

constexpr int kMaxRanks = 65536;
constexpr int kFilesListed = 8;

struct Options {
  std::vector<std::string> traces;
  std::string prefix;
  int ranks = 0;  // 0: one per trace
  bool kernels = false;
  CommMode comm = CommMode::kNetwork;
  bool comm_given = false;
  ScriptArgs script;
};

absl::Status CheckOptions(Options* o) {
  if (!o->script.settings.empty() && o->script.scripts.empty()) {
    return UsageError("--set needs a --script to apply to");
  }
  if (o->traces.size() > 1 && o->ranks != 0 && o->ranks != static_cast<int>(o->traces.size())) {
    return UsageError(absl::StrCat("--ranks ", o->ranks, " but ", o->traces.size(),
                                   " rank traces given (several traces are one rank each)"));
  }
  if (o->traces.size() > 1 && o->kernels) {
    return UsageError("--chakra-detail kernels takes one trace; several ranks' traces export as lanes");
  }
  if (o->kernels && o->comm_given) {
    return UsageError("--chakra-comm applies to the lane export, not --chakra-detail kernels");
  }
  if (o->ranks == 0) o->ranks = static_cast<int>(o->traces.size());
  // The files are PREFIX.<rank>.et: a folder as the prefix made hidden files
  // (DIR/.0.et) (issue 29, round 1).
  std::error_code ec;
  if (o->prefix.empty() || o->prefix.back() == '/' || std::filesystem::is_directory(o->prefix, ec)) {
    return UsageError(absl::StrCat("--chakra ", o->prefix,
                                   ": is a folder; give a file prefix, e.g. ",
                                   o->prefix.empty() || o->prefix.back() == '/' ? o->prefix : o->prefix + "/",
                                   "trace (writes trace.0.et, ...)"));
  }
  return absl::OkStatus();
}

// The first line of a status whose message explains more below it.
absl::Status FirstLine(const absl::Status& s) {
  return absl::Status(s.code(), reverie::FirstLine(StdSv(s.message())));
}

void Note(const char* what, int64_t count, const std::string& text) {
  if (count > 0) absl::FPrintF(stderr, "%s: %lld %s\n", what, count, text.c_str());
}

void PrintTypingNotes(const exporter::CommTyping& t) {
  Note("chakra", t.typed_by_record,
       "communication kernels whose name says no collective typed by the Collective record "
       "around their launch");
  Note("chakra", t.sized_by_record, "communication tasks sized from the trace's Collective records");
  for (const exporter::CollectiveTypeMatch& m : t.order_pairing) {
    if (m.records == 0 || m.matched()) continue;
    absl::FPrintF(stderr,
                  "note: %s: %lld recorded kernels but %lld sized Collective records; pairing by "
                  "order needs equal counts, so none of them is sized by order\n",
                  chakra_et::CollectiveCommType_Name(m.type).c_str(),
                  m.kernels, m.records);
  }
}

void PrintKernelNotes(const exporter::ChakraTrace& trace) {
  const exporter::ChakraStats& s = trace.stats;
  absl::FPrintF(stderr,
                "chakra: %lld CPU, %lld GPU, %lld collective, %lld gap nodes; %lld dependencies\n",
                s.cpu_nodes, s.gpu_nodes,
                s.comm_nodes, s.gap_nodes,
                s.dependencies);
  Note("note", s.comm_unsized,
       "collectives have no known size: written as compute nodes of their simulated duration "
       "(ASTRA-sim would time a size it does not know)");
  Note("note", s.comm_untyped,
       "communication tasks are no collective ASTRA-sim simulates from one rank's file (reduce, "
       "point-to-point); written as compute nodes of their simulated duration");
  if (s.delayed_edges > 0) {
    absl::FPrintF(stderr,
                  "note: %lld dependency delays (launch latency, event and window offsets; %.1f us "
                  "in all) have no Chakra field and were dropped\n",
                  s.delayed_edges, s.dropped_delay_ns / 1e3);
  }
  Note("note", s.channel_gaps, "gaps on communication channels were dropped");
  Note("note", s.zero_us_nodes, "sub-microsecond nodes round to 0 us");
  if (s.cpu_threads <= 1 && s.gpu_streams <= 1) return;
  absl::StatusOr<exporter::ChakraFile> file = exporter::ReadChakra(trace.bytes);
  absl::StatusOr<exporter::AstraModelResult> model =
      file.ok() ? exporter::ReplayLikeAstraSim(*file) : file.status();
  absl::FPrintF(stderr,
                "warning: %lld CPU threads and %lld GPU streams: ASTRA-sim runs one CPU node and one "
                "GPU compute node at a time per NPU and serialises the rest; its CPU nodes sum to "
                "%.1f us and its GPU compute nodes to %.1f us, against reverie's simulated span of "
                "%.1f us",
                s.cpu_threads, s.gpu_streams,
                s.cpu_node_ns / 1e3, s.gpu_node_ns / 1e3, s.span_ns / 1e3);
  if (model.ok()) {
    std::fprintf(stderr, " (its workload model finishes this file at %.1f us with the network "
                 "taking reverie's times)", model->finish_ns / 1e3);
  }
  std::fprintf(stderr, "; the default --chakra-detail lane keeps reverie's timing\n");
}

void PrintLaneNotes(const std::vector<exporter::LaneTrace>& lanes, int64_t replayed,
                    int64_t replayed_p2p, int64_t unsized, CommMode mode) {
  const exporter::LaneStats& s = lanes[0].stats;
  absl::FPrintF(stderr,
                "chakra: compute lane of %lld nodes (%.1f us, of which %.1f us latency with nothing "
                "running), %lld communication nodes; %.1f us of waiting for them left to "
                "ASTRA-sim's network%s\n",
                s.lane_nodes, s.lane_ns / 1e3, s.idle_ns / 1e3,
                s.comm_nodes, s.dropped_ns / 1e3,
                lanes.size() > 1 ? " (rank 0)" : "");
  if (mode == CommMode::kReplay) {
    Note("chakra", replayed, "communication tasks replayed on the lane at reverie's times "
         "(--chakra-comm replay)");
    return;
  }
  Note("note", replayed,
       absl::StrCat("communication tasks replayed on the lane at reverie's times, not timed by "
                    "ASTRA-sim's network: collectives of unknown size ", unsized,
                    ", point-to-point without a known peer ", replayed_p2p,
                    ", others (reduce, no record) ", replayed - unsized - replayed_p2p));
}

void PrintWritten(const std::vector<std::string>& paths,
                  const std::vector<exporter::LaneTrace>& lanes, int64_t nodes, int64_t deps) {
  for (size_t r = 0; r < paths.size(); ++r) {
    if (paths.size() > kFilesListed && r > 0) {
      std::printf("wrote %s .. %s: %zu files, one per rank\n", paths[1].c_str(),
                  paths.back().c_str(), paths.size() - 1);
      break;
    }
    const size_t l = lanes.size() > 1 ? r : 0;
    if (!lanes.empty()) {
      nodes = lanes[l].stats.nodes;
      deps = lanes[l].stats.dependencies;
    }
    absl::PrintF("wrote %s: %lld nodes, %lld dependencies\n", paths[r].c_str(),
                 nodes, deps);
  }
}

// The reverie time an ASTRA-sim run compares with (SimulatedWindow()), and
// reverie's step time (depgraph/step_time.h; 0: not shown).
void PrintReverieTime(const exporter::SimWindow& w, size_t steps, double step_ns) {
  const double us = w.span_ns() / 1e3;
  std::printf("reverie: %.1f us simulated over the exported span", us);
  if (steps > 1) std::printf(", %zu steps (%.1f us each", steps, us / steps);
  if (steps > 1 && step_ns > 0) std::printf("; step time %.1f us", step_ns / 1e3);
  if (steps > 1) std::printf(")");
  absl::PrintF("; ASTRA-sim reports its finish time in cycles of 1 ns: compare with %lld\n",
               w.span_ns());
}

// A file that breaks what ASTRA-sim needs (export/chakra_check.h) is never
// written: a bug of ours, not bad input (exit 1).
absl::Status SelfCheck(const std::string& path, const std::string& bytes, bool one_lane) {
  absl::StatusOr<exporter::ChakraFile> file = exporter::ReadChakra(bytes);
  const absl::Status s = file.ok() ? exporter::ValidateChakra(*file, one_lane) : file.status();
  if (s.ok()) return s;
  return WithExitStatus(
      absl::InternalError(absl::StrCat("internal error: ", path,
                                       ": the export breaks ASTRA-sim's needs: ", s.message())),
      kExitFailure);
}

absl::StatusOr<std::vector<std::string>> WriteLanes(const Options& opt,
                                                    const std::vector<exporter::LaneTrace>& lanes) {
  for (size_t r = 0; r < lanes.size(); ++r) {
    REVERIE_RETURN_IF_ERROR(
        SelfCheck(exporter::ChakraRankPath(opt.prefix, static_cast<int>(r)), lanes[r].bytes, true));
  }
  return exporter::WriteChakraFiles(opt.prefix, opt.ranks, [&](int r) -> const std::string& {
    return lanes[lanes.size() > 1 ? r : 0].bytes;
  });
}

absl::Status ExportOne(const Options& opt) {
  REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<whatif::LoadedTrace> base, LoadForCli(opt.traces[0]));
  const depgraph::Graph* graph = &base->graph;
  const depgraph::SimResult* sim = &base->baseline;
  whatif::Prediction predicted;
  if (!opt.script.scripts.empty()) {
    REVERIE_ASSIGN_OR_RETURN(whatif::Prediction p, whatif::Predict(*base, opt.script));
    predicted = std::move(p);
    graph = &predicted.graph;
    sim = &predicted.sim;
  }
  // The graph keeps the trace's task ids through scripts, so the trace's
  // Collective records type and size its recorded kernels either way.
  const std::vector<exporter::CollectiveRecord> records = exporter::CollectiveRecordsOf(base->trace);
  const exporter::SimWindow window = exporter::SimulatedWindow(*graph, *sim);
  const std::string cannot = absl::StrCat(opt.traces[0], ": cannot export: ");
  if (opt.kernels) {
    absl::StatusOr<exporter::ChakraTrace> trace =
        exporter::ExportChakra(*graph, *sim, {.collectives = records});
    if (!trace.ok()) return Prefixed(cannot, trace.status());
    REVERIE_RETURN_IF_ERROR(SelfCheck(exporter::ChakraRankPath(opt.prefix, 0), trace->bytes, false));
    REVERIE_ASSIGN_OR_RETURN(std::vector<std::string> written, exporter::WriteChakraRanks(*trace, opt.prefix, opt.ranks));
    PrintWritten(written, {}, trace->stats.nodes, trace->stats.dependencies);
    PrintReverieTime(window, graph->step_count(), sim->mean_step_ns());
    PrintKernelNotes(*trace);
    return absl::OkStatus();
  }
  const exporter::CommTyping typing = exporter::TypeCommunication(*graph, records);
  const exporter::CommPlan plan = exporter::PlanSingleRank(*graph, *sim, typing, opt.comm, window);
  absl::StatusOr<exporter::LaneTrace> lane =
      exporter::ExportLane({graph, sim, {}, 0, plan.network, window});
  if (!lane.ok()) return Prefixed(cannot, lane.status());
  const std::vector<exporter::LaneTrace> lanes = {std::move(*lane)};
  REVERIE_ASSIGN_OR_RETURN(std::vector<std::string> written, WriteLanes(opt, lanes));
  PrintWritten(written, lanes, 0, 0);
  PrintReverieTime(window, graph->step_count(), sim->mean_step_ns());
  PrintTypingNotes(typing);
  PrintLaneNotes(lanes, plan.replayed, plan.replayed_p2p, plan.unsized, opt.comm);
  return absl::OkStatus();
}

// The ranks coupled and simulated as `reverie ranks` does (whatif::SimulateJob:
// after the scripts when given), then one Chakra file per rank.
absl::Status ExportJob(const Options& opt) {
  REVERIE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<whatif::LoadedTrace>> loaded,
                           LoadAllForCli(opt.traces));
  const std::vector<const whatif::LoadedTrace*> ranks = Pointers(loaded);
  REVERIE_ASSIGN_OR_RETURN(const whatif::JobReport report, whatif::SimulateJob(ranks, opt.script));
  const whatif::JobRun& run = report.predicted ? *report.predicted : report.baseline;
  const depgraph::JobGraph* job = &run.job;
  const depgraph::SimResult* sim = &run.sim;
  std::vector<exporter::CommTyping> typing;
  for (size_t r = 0; r < loaded.size(); ++r) {
    const depgraph::Graph& g = report.predicted ? report.predictions[r].graph : loaded[r]->graph;
    typing.push_back(exporter::TypeCommunication(g, exporter::CollectiveRecordsOf(loaded[r]->trace)));
  }
  const exporter::SimWindow window = exporter::SimulatedWindow(job->graph, *sim);
  absl::StatusOr<exporter::JobPlan> plan =
      exporter::PlanJob(*job, *sim, typing, opt.traces, opt.comm, window);
  if (!plan.ok()) return FirstLine(plan.status());
  std::vector<exporter::LaneTrace> lanes;
  for (int r = 0; r < job->ranks; ++r) {
    absl::StatusOr<exporter::LaneTrace> lane =
        exporter::ExportLane({&job->graph, &*sim, job->rank_of_resource, r, plan->network[r], window});
    if (!lane.ok()) return Prefixed(absl::StrCat(opt.traces[r], ": cannot export: "), lane.status());
    lanes.push_back(std::move(*lane));
  }
  REVERIE_ASSIGN_OR_RETURN(std::vector<std::string> written, WriteLanes(opt, lanes));
  PrintWritten(written, lanes, 0, 0);
  PrintReverieTime(window, static_cast<size_t>(job->stats.steps), 0);
  for (int r = 0; r < job->ranks; ++r) {
    std::fprintf(stderr, "rank %d: ends at %.1f us in reverie's job simulation (%s)\n", r,
                 lanes[r].stats.rank_end_ns / 1e3, opt.traces[r].c_str());
  }
  absl::FPrintF(stderr, "chakra: %lld matched collectives to the network (%lld send/receive pairs)\n",
                plan->collectives, plan->p2p);
  Note("note", plan->size_disagreements,
       "rank copies of a collective disagree on its size; every rank gets the largest");
  PrintLaneNotes(lanes, plan->replayed, 0, plan->unsized, opt.comm);
  return absl::OkStatus();
}

absl::Status RunExport(Options& opt) {
  REVERIE_RETURN_IF_ERROR(CheckOptions(&opt));
  std::vector<std::string> inputs = opt.script.scripts;
  inputs.insert(inputs.end(), opt.traces.begin(), opt.traces.end());
  std::vector<std::string> outputs;
  for (int r = 0; r < opt.ranks; ++r) outputs.push_back(exporter::ChakraRankPath(opt.prefix, r));
  REVERIE_RETURN_IF_ERROR(CheckOutputs(outputs, inputs));
  return opt.traces.size() > 1 ? ExportJob(opt) : ExportOne(opt);
}

RunFn SetupExport(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArgs(app, "TRACE", &o->traces, "a trace, or the traces of the ranks of one job");
  AddPath(app, "--chakra", &o->prefix, "write PREFIX.0.et, PREFIX.1.et, ...", "PREFIX",
          "a non-empty PREFIX")
      ->required();
  AddInt(app, "--ranks", &o->ranks, 1, kMaxRanks,
         "ranks to write from one trace (default: one per trace)");
  AddChoice(app, "--chakra-detail", {"lane", "kernels"},
            [o](const std::string& v) { o->kernels = v == "kernels"; },
            "one compute lane per rank (default) or every kernel a node");
  AddChoice(app, "--chakra-comm", {"network", "replay"},
            [o](const std::string& v) {
              o->comm = v == "replay" ? CommMode::kReplay : CommMode::kNetwork;
              o->comm_given = true;
            },
            "communication timed by ASTRA-sim's network (default) or replayed at reverie's times");
  AddScriptFlags(app, &o->script);
  return [o] { return RunExport(*o); };
}

}  // namespace

REVERIE_COMMAND(export_chakra, "export",
                "write the (predicted) dependency graph as Chakra traces for ASTRA-sim: one compute "
                "lane per rank with its communication, or every kernel",
                SetupExport);

}  // namespace reverie::cli
