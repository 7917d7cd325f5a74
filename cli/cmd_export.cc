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

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
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
#include "whatif/pipeline.h"

namespace reverie::cli {
namespace {

using exporter::CommMode;

constexpr char kUsage[] =
    "export TRACE [TRACE ...] --chakra PREFIX [--ranks N] [--chakra-detail lane|kernels] "
    "[--chakra-comm network|replay] [--script FILE ...] [--set [SCRIPT.]KEY=VALUE ...] "
    "[--lua-budget N] [--lua-memory-mb N] [--no-sandbox]";
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

bool CheckOptions(Options* o, std::string* error) {
  if (o->traces.empty()) {
    *error = absl::StrCat("export: missing TRACE (usage: reverie ", kUsage, ")");
  } else if (o->prefix.empty()) {
    *error = "export: give --chakra PREFIX (writes PREFIX.0.et, PREFIX.1.et, ...)";
  } else if (!o->script.settings.empty() && o->script.scripts.empty()) {
    *error = "export: --set needs a --script to apply to";
  } else if (o->traces.size() > 1 && o->ranks != 0 &&
             o->ranks != static_cast<int>(o->traces.size())) {
    *error = absl::StrCat("export: --ranks ", o->ranks, " but ", o->traces.size(),
                          " rank traces given (several traces are one rank each)");
  } else if (o->traces.size() > 1 && o->kernels) {
    *error = "export: --chakra-detail kernels takes one trace; several ranks' traces export as lanes";
  } else if (o->kernels && o->comm_given) {
    *error = "export: --chakra-comm applies to the lane export, not --chakra-detail kernels";
  } else if (o->ranks == 0) {
    o->ranks = static_cast<int>(o->traces.size());
  }
  return error->empty();
}

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
    } else if (a == "--chakra-detail") {
      if (!value(&v)) return false;
      if (v != "lane" && v != "kernels") {
        *error = absl::StrCat("export: --chakra-detail expects lane or kernels, got '", v, "'");
        return false;
      }
      o->kernels = v == "kernels";
    } else if (a == "--chakra-comm") {
      if (!value(&v)) return false;
      if (v != "network" && v != "replay") {
        *error = absl::StrCat("export: --chakra-comm expects network or replay, got '", v, "'");
        return false;
      }
      o->comm = v == "replay" ? CommMode::kReplay : CommMode::kNetwork;
      o->comm_given = true;
    } else if (a.size() > 1 && a[0] == '-') {
      *error = absl::StrCat("export: unknown option '", a, "' (usage: reverie ", kUsage, ")");
      return false;
    } else {
      o->traces.push_back(a);
    }
  }
  return CheckOptions(o, error);
}

void Note(const char* what, int64_t count, const std::string& text) {
  if (count > 0) std::fprintf(stderr, "%s: %lld %s\n", what, static_cast<long long>(count), text.c_str());
}

void PrintTypingNotes(const exporter::CommTyping& t) {
  Note("chakra", t.typed_by_record,
       "communication kernels whose name says no collective typed by the Collective record "
       "around their launch");
  Note("chakra", t.sized_by_record, "communication tasks sized from the trace's Collective records");
  for (const exporter::CollectiveTypeMatch& m : t.order_pairing) {
    if (m.records == 0 || m.matched()) continue;
    std::fprintf(stderr,
                 "note: %s: %lld recorded kernels but %lld sized Collective records; pairing by "
                 "order needs equal counts, so none of them is sized by order\n",
                 chakra_et::CollectiveCommType_Name(m.type).c_str(),
                 static_cast<long long>(m.kernels), static_cast<long long>(m.records));
  }
}

void PrintKernelNotes(const exporter::ChakraTrace& trace) {
  const exporter::ChakraStats& s = trace.stats;
  std::fprintf(stderr,
               "chakra: %lld CPU, %lld GPU, %lld collective, %lld gap nodes; %lld dependencies\n",
               static_cast<long long>(s.cpu_nodes), static_cast<long long>(s.gpu_nodes),
               static_cast<long long>(s.comm_nodes), static_cast<long long>(s.gap_nodes),
               static_cast<long long>(s.dependencies));
  Note("note", s.comm_unsized,
       "collectives have no known size: written as compute nodes of their simulated duration "
       "(ASTRA-sim would time a size it does not know)");
  Note("note", s.comm_untyped,
       "communication tasks are no collective ASTRA-sim simulates from one rank's file (reduce, "
       "point-to-point); written as compute nodes of their simulated duration");
  if (s.delayed_edges > 0) {
    std::fprintf(stderr,
                 "note: %lld dependency delays (launch latency, event and window offsets; %.1f us "
                 "in all) have no Chakra field and were dropped\n",
                 static_cast<long long>(s.delayed_edges), s.dropped_delay_ns / 1e3);
  }
  Note("note", s.channel_gaps, "gaps on communication channels were dropped");
  Note("note", s.zero_us_nodes, "sub-microsecond nodes round to 0 us");
  if (s.cpu_threads <= 1 && s.gpu_streams <= 1) return;
  absl::StatusOr<exporter::ChakraFile> file = exporter::ReadChakra(trace.bytes);
  absl::StatusOr<exporter::AstraModelResult> model =
      file.ok() ? exporter::ReplayLikeAstraSim(*file) : file.status();
  std::fprintf(stderr,
               "warning: %lld CPU threads and %lld GPU streams: ASTRA-sim runs one CPU node and one "
               "GPU compute node at a time per NPU and serialises the rest; its CPU nodes sum to "
               "%.1f us and its GPU compute nodes to %.1f us, against reverie's simulated span of "
               "%.1f us",
               static_cast<long long>(s.cpu_threads), static_cast<long long>(s.gpu_streams),
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
  std::fprintf(stderr,
               "chakra: compute lane of %lld nodes (%.1f us, of which %.1f us latency with nothing "
               "running), %lld communication nodes; %.1f us of waiting for them left to "
               "ASTRA-sim's network%s\n",
               static_cast<long long>(s.lane_nodes), s.lane_ns / 1e3, s.idle_ns / 1e3,
               static_cast<long long>(s.comm_nodes), s.dropped_ns / 1e3,
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
    std::printf("wrote %s: %lld nodes, %lld dependencies\n", paths[r].c_str(),
                static_cast<long long>(nodes), static_cast<long long>(deps));
  }
}

// The reverie time an ASTRA-sim run compares with (SimulatedWindow()), and
// reverie's step time (depgraph/step_time.h; 0: not shown).
void PrintReverieTime(const exporter::SimWindow& w, size_t iterations, double step_ns) {
  const double us = w.span_ns() / 1e3;
  std::printf("reverie: %.1f us simulated over the exported span", us);
  if (iterations > 1) std::printf(", %zu iterations (%.1f us each", iterations, us / iterations);
  if (iterations > 1 && step_ns > 0) std::printf("; step time %.1f us", step_ns / 1e3);
  if (iterations > 1) std::printf(")");
  std::printf("; ASTRA-sim reports its finish time in cycles of 1 ns: compare with %lld\n",
              static_cast<long long>(w.span_ns()));
}

// A file that breaks what ASTRA-sim needs (export/chakra_check.h) is never
// written: a bug of ours, not bad input. Returns the exit status to stop with.
int SelfCheck(const std::string& path, const std::string& bytes, bool one_lane) {
  absl::StatusOr<exporter::ChakraFile> file = exporter::ReadChakra(bytes);
  const absl::Status s = file.ok() ? exporter::ValidateChakra(*file, one_lane) : file.status();
  if (s.ok()) return kExitOk;
  std::fprintf(stderr, "reverie: internal error: %s: the export breaks ASTRA-sim's needs: %s\n",
               path.c_str(), std::string(s.message()).c_str());
  return kExitFailure;
}

absl::StatusOr<std::vector<std::string>> WriteLanes(const Options& opt,
                                                    const std::vector<exporter::LaneTrace>& lanes) {
  for (size_t r = 0; r < lanes.size(); ++r) {
    if (SelfCheck(exporter::ChakraRankPath(opt.prefix, static_cast<int>(r)), lanes[r].bytes, true) !=
        kExitOk) {
      return absl::InternalError("self-check failed");
    }
  }
  return exporter::WriteChakraFiles(opt.prefix, opt.ranks, [&](int r) -> const std::string& {
    return lanes[lanes.size() > 1 ? r : 0].bytes;
  });
}

int ExportOne(const Options& opt) {
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> base =
      LoadForCli(opt.traces[0]);
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
  // Collective records type and size its recorded kernels either way.
  const std::vector<exporter::CollectiveRecord> records = exporter::CollectiveRecordsOf((*base)->trace);
  const exporter::SimWindow window = exporter::SimulatedWindow(*graph, *sim);
  const std::string cannot = absl::StrCat(opt.traces[0], ": cannot export: ");
  if (opt.kernels) {
    absl::StatusOr<exporter::ChakraTrace> trace =
        exporter::ExportChakra(*graph, *sim, {.collectives = records});
    if (!trace.ok()) return BadInput(absl::StrCat(cannot, trace.status().message()));
    if (int rc = SelfCheck(exporter::ChakraRankPath(opt.prefix, 0), trace->bytes, false); rc != kExitOk) {
      return rc;
    }
    absl::StatusOr<std::vector<std::string>> written =
        exporter::WriteChakraRanks(*trace, opt.prefix, opt.ranks);
    if (!written.ok()) return BadInput(std::string(written.status().message()));
    PrintWritten(*written, {}, trace->stats.nodes, trace->stats.dependencies);
    PrintReverieTime(window, graph->iteration_count(), sim->mean_iteration_ns());
    PrintKernelNotes(*trace);
    return kExitOk;
  }
  const exporter::CommTyping typing = exporter::TypeCommunication(*graph, records);
  const exporter::CommPlan plan = exporter::PlanSingleRank(*graph, *sim, typing, opt.comm, window);
  absl::StatusOr<exporter::LaneTrace> lane =
      exporter::ExportLane({graph, sim, {}, 0, plan.network, window});
  if (!lane.ok()) return BadInput(absl::StrCat(cannot, lane.status().message()));
  const std::vector<exporter::LaneTrace> lanes = {std::move(*lane)};
  absl::StatusOr<std::vector<std::string>> written = WriteLanes(opt, lanes);
  if (absl::IsInternal(written.status())) return kExitFailure;
  if (!written.ok()) return BadInput(std::string(written.status().message()));
  PrintWritten(*written, lanes, 0, 0);
  PrintReverieTime(window, graph->iteration_count(), sim->mean_iteration_ns());
  PrintTypingNotes(typing);
  PrintLaneNotes(lanes, plan.replayed, plan.replayed_p2p, plan.unsized, opt.comm);
  return kExitOk;
}

int ExportJob(const Options& opt) {
  std::vector<std::unique_ptr<whatif::LoadedTrace>> loaded;
  std::vector<whatif::Prediction> predictions;
  std::vector<depgraph::RankInput> inputs;
  std::vector<exporter::CommTyping> typing;
  for (const std::string& path : opt.traces) {
    absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> t =
        LoadForCli(path);
    if (!t.ok()) return BadInput(std::string(t.status().message()));
    loaded.push_back(std::move(*t));
  }
  predictions.reserve(loaded.size());
  for (size_t r = 0; r < loaded.size(); ++r) {
    const whatif::LoadedTrace& l = *loaded[r];
    const depgraph::Graph* g = &l.graph;
    const depgraph::SimResult* sim = &l.baseline;
    if (!opt.script.scripts.empty()) {
      absl::StatusOr<whatif::Prediction> p = whatif::Predict(l, opt.script);
      if (!p.ok()) return BadInput(absl::StrCat(opt.traces[r], ": ", p.status().message()));
      predictions.push_back(std::move(*p));
      g = &predictions.back().graph;
      sim = &predictions.back().sim;
    }
    inputs.push_back({g, opt.traces[r], sim});
    typing.push_back(exporter::TypeCommunication(*g, exporter::CollectiveRecordsOf(l.trace)));
  }
  absl::StatusOr<depgraph::JobGraph> job = depgraph::CoupleRanks(inputs);
  if (!job.ok()) return BadInput(whatif::OneLine(StdSv(job.status().message())));
  // A schedule the scripts chose for channels (P3's priorities) holds for the job.
  using Kind = transforms::ScheduleChoice::Kind;
  const Kind kind = predictions.empty() ? Kind::kEarliestReady : predictions[0].schedule_kind;
  if (kind == Kind::kCustom) {
    return BadInput(absl::StrCat("export: ", opt.script.scripts.back(),
                                 ": a schedule key function in Lua cannot order the job's channels"));
  }
  static const depgraph::PriorityPolicy kPriority;
  depgraph::SimOptions options;
  if (kind == Kind::kPriority) options.policy = &kPriority;
  absl::StatusOr<depgraph::SimResult> sim = depgraph::Simulate(job->graph, options);
  if (!sim.ok()) return BadInput(absl::StrCat(opt.traces[0], ": ", sim.status().message()));
  const exporter::SimWindow window = exporter::SimulatedWindow(job->graph, *sim);
  absl::StatusOr<exporter::JobPlan> plan =
      exporter::PlanJob(*job, *sim, typing, opt.traces, opt.comm, window);
  if (!plan.ok()) return BadInput(whatif::OneLine(StdSv(plan.status().message())));
  std::vector<exporter::LaneTrace> lanes;
  for (int r = 0; r < job->ranks; ++r) {
    absl::StatusOr<exporter::LaneTrace> lane =
        exporter::ExportLane({&job->graph, &*sim, job->rank_of_resource, r, plan->network[r], window});
    if (!lane.ok()) return BadInput(absl::StrCat(opt.traces[r], ": cannot export: ", lane.status().message()));
    lanes.push_back(std::move(*lane));
  }
  absl::StatusOr<std::vector<std::string>> written = WriteLanes(opt, lanes);
  if (absl::IsInternal(written.status())) return kExitFailure;
  if (!written.ok()) return BadInput(std::string(written.status().message()));
  PrintWritten(*written, lanes, 0, 0);
  PrintReverieTime(window, static_cast<size_t>(job->stats.iterations), 0);
  for (int r = 0; r < job->ranks; ++r) {
    std::fprintf(stderr, "rank %d: ends at %.1f us in reverie's job simulation (%s)\n", r,
                 lanes[r].stats.rank_end_ns / 1e3, opt.traces[r].c_str());
  }
  std::fprintf(stderr, "chakra: %lld matched collectives to the network (%lld send/receive pairs)\n",
               static_cast<long long>(plan->collectives), static_cast<long long>(plan->p2p));
  Note("note", plan->size_disagreements,
       "rank copies of a collective disagree on its size; every rank gets the largest");
  PrintLaneNotes(lanes, plan->replayed, 0, plan->unsized, opt.comm);
  return kExitOk;
}

int RunExport(const std::vector<std::string>& args) {
  Options opt;
  std::string error;
  if (!ParseArgs(args, &opt, &error)) return BadInput(error);
  std::vector<std::string> inputs = opt.script.scripts;
  inputs.insert(inputs.end(), opt.traces.begin(), opt.traces.end());
  for (int r = 0; r < opt.ranks; ++r) {
    const std::string why = OverwritesInput(exporter::ChakraRankPath(opt.prefix, r), inputs);
    if (!why.empty()) return BadInput(why);
  }
  return opt.traces.size() > 1 ? ExportJob(opt) : ExportOne(opt);
}

}  // namespace

REVERIE_COMMAND(export_chakra, "export", kUsage,
                "write the (predicted) dependency graph as Chakra traces for ASTRA-sim: one compute "
                "lane per rank with its communication, or every kernel",
                RunExport);

}  // namespace reverie::cli
