// `reverie advise TRACE [--json] [--top N] [--set [SCRIPT.]KEY=VALUE ...]
// [--threads N] [--lua-budget N] [--lua-memory-mb N] [--no-sandbox]`:
// what limits this step and which optimization to try first
// (whatif/advise.h). Three lines of diagnosis from the critical path and
// the breakdown; every setting of the candidate table whose script applies
// to the trace, predicted (the same prediction as `reverie predict` with
// that script and those settings) and ranked by gain, with its noise band,
// its confidence (the script's error on the validation corpus) and what it
// ignores; the best two and three combined; one line for each setting that
// does not apply, and the library's scripts advise does not try.
// --set overrides the table's settings for the scripts declaring the key.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/load.h"
#include "cli/progress.h"
#include "cli/script_args.h"
#include "depgraph/host_speed.h"
#include "depgraph/step_time.h"
#include "whatif/advise.h"

namespace reverie::cli {
namespace {

struct Options {
  std::string trace;
  bool json = false;
  int top = 10;
  int threads = 0;
  ScriptArgs spec;
};

// The first words of `text`, at most about `max` bytes.
std::string FirstWords(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t cut = text.rfind(' ', max);
  if (cut == std::string::npos || cut < max / 2) cut = max;
  return text.substr(0, cut) + " ...";
}

// Milliseconds with about four significant digits (a 1.1 ms step is 1.084).
std::string Ms(double ns) {
  const double ms = ns / 1e6;
  return absl::StrFormat("%.*f", ms >= 100 ? 1 : ms >= 10 ? 2 : 3, ms);
}

std::string Band(const depgraph::StepStats& s) {
  if (s.counted <= 1) return "";
  return absl::StrCat(Ms(s.min_ns), "-", Ms(s.max_ns));
}

void PrintRun(const depgraph::TraceFacts& f) {
  std::vector<std::string> parts;
  if (!f.gpu.name.empty()) parts.push_back(f.gpu.name);
  if (f.precision.compute != "unknown" && !f.precision.compute.empty()) {
    parts.push_back(f.precision.compute);
  }
  if (!f.optimizer.name.empty()) {
    parts.push_back(absl::StrCat(f.optimizer.name, " (", f.optimizer.implementation, ")"));
  }
  if (f.dataloader.mode != "unknown" && !f.dataloader.mode.empty()) {
    parts.push_back(absl::StrCat("DataLoader: ", f.dataloader.mode));
  }
  const depgraph::DataParallelFact& d = f.data_parallel;
  const std::string ranks =
      absl::StrFormat("%d rank%s", d.world_size, d.world_size == 1 ? "" : "s");
  parts.push_back(!d.used       ? std::string("one GPU")
                  : d.inference ? absl::StrCat(ranks, ", no backward pass (model parallel)")
                                : absl::StrCat("data parallel, ", ranks));
  std::printf("run: %s (reverie info shows every fact and its source)\n",
              absl::StrJoin(parts, "; ").c_str());
}

void PrintCandidates(const whatif::Advice& a, int top) {
  const size_t shown = std::min(a.candidates.size(), static_cast<size_t>(top));
  std::printf("\ncandidates, ranked by predicted gain (%zu of %zu; each is `reverie predict` with "
              "that script and settings; step: mean and min-max over the steps, ms)\n",
              shown, a.candidates.size());
  if (shown == 0) {
    std::printf("  none: no script applies to this trace (see below)\n");
    return;
  }
  std::printf("  %2s  %-40s %9s %15s %9s %10s  %s\n", "#", "what", "step", "(band)", "speedup",
              "throughput", "confidence");
  for (size_t i = 0; i < shown; ++i) {
    const whatif::Candidate& c = a.candidates[i];
    const whatif::TrialResult& r = c.result;
    std::printf("  %2zu  %-40s %9s %15s %8.3fx %9.3fx  %s\n", i + 1, c.label.c_str(),
                Ms(r.predicted.mean_ns).c_str(), Band(r.predicted).c_str(), r.speedup,
                r.throughput_speedup, c.confidence.c_str());
    if (!c.did.empty()) std::printf("      | %s\n", FirstWords(c.did, 110).c_str());
    if (!c.same_gain.empty()) {
      std::printf("      the same with %s\n", absl::StrJoin(c.same_gain, "; ").c_str());
    }
    if (!c.ignores.empty()) {
      std::printf("      ignores: %s\n", FirstWords(c.ignores, 100).c_str());
    }
    if (const std::string bound = depgraph::HostBoundPhrase(r.host_sensitivity_pct);
        !bound.empty()) {
      std::printf("      host: %s: it moves with the host's speed\n", bound.c_str());
    }
    if (r.first_step_share.has_value() && *r.first_step_share >= depgraph::kFirstStepNote) {
      std::printf(
          "      window: %.0f%% of what the steps moved is in the first step: a one-time %s at the "
          "start of the profiled window, not a %s per step\n",
          std::min(1.0, *r.first_step_share) * 100, r.speedup < 1 ? "cost" : "gain",
          r.speedup < 1 ? "cost" : "gain");
    }
  }
  if (shown >= 2 && !a.order_note.empty()) std::printf("  note: %s\n", a.order_note.c_str());
}

void PrintCombined(const whatif::Advice& a) {
  if (a.combined.empty()) return;
  std::printf(
      "\ncombined (the first candidate with each other script, then the two best "
      "pairs with a third: they interact; %d combinations predicted)\n",
      a.combinations_tried);
  for (const whatif::Combination& c : a.combined) {
    const whatif::TrialResult& r = c.result;
    const std::string what = absl::StrJoin(c.labels, " + ");
    if (r.outcome != whatif::TrialOutcome::kApplied) {
      std::printf("  %s: %s\n", what.c_str(), c.note.c_str());
      continue;
    }
    // One step has no band (min-max) to show.
    const std::string band = Band(r.predicted);
    std::printf(
        "  %s\n      step %s ms%s, speedup %.3fx, throughput %.3fx (%.3fx if they "
        "did not interact)\n",
        what.c_str(), Ms(r.predicted.mean_ns).c_str(),
        band.empty() ? "" : absl::StrCat(" (", band, ")").c_str(), r.speedup, r.throughput_speedup,
        c.product);
    if (!c.note.empty()) std::printf("      %s\n", c.note.c_str());
  }
}

void PrintNotApplicable(const whatif::Advice& a) {
  if (!a.not_applicable.empty()) std::printf("\nnot applicable\n");
  for (const whatif::NotApplicable& n : a.not_applicable) {
    std::printf("  %s\n", whatif::NotApplicableLine(n).c_str());
  }
  // Grouped by reason: one line each.
  std::map<std::string, std::vector<std::string>> by_why;
  std::vector<std::string> order;
  for (const whatif::NotTried& n : a.not_tried) {
    if (!by_why.count(n.why)) order.push_back(n.why);
    by_why[n.why].push_back(n.script);
  }
  if (!order.empty()) std::printf("\nnot tried\n");
  for (const std::string& why : order) {
    std::printf("  %s: %s\n", absl::StrJoin(by_why[why], ", ").c_str(), why.c_str());
  }
}

absl::Status RunAdvise(const Options& o) {
  REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<whatif::LoadedTrace> loaded, LoadForCli(o.trace));
  whatif::AdviseOptions options;
  options.spec = o.spec;
  options.threads = o.threads;
  absl::StatusOr<whatif::Advice> advice;
  {
    Progress progress("advise", 1);
    progress.Update(0, "predicting the candidates");
    advice = whatif::Advise(*loaded, options);
  }
  if (!advice.ok()) return advice.status();
  if (o.json) {
    std::printf("%s\n", whatif::AdviceJson(*advice, o.top).c_str());
    return absl::OkStatus();
  }
  std::printf("trace: %s\n", o.trace.c_str());
  PrintRun(advice->facts);
  std::printf("\ndiagnosis\n");
  for (const std::string& line : advice->diagnosis.lines) std::printf("  %s\n", line.c_str());
  if (!advice->diagnosis.warning.empty()) {
    std::printf("  %s\n", advice->diagnosis.warning.c_str());
  }
  PrintCandidates(*advice, o.top);
  PrintCombined(*advice);
  PrintNotApplicable(*advice);
  return absl::OkStatus();
}

RunFn SetupAdvise(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddArg(app, "TRACE", &o->trace, "the profiled trace");
  app.add_flag("--json", o->json, "machine-readable output");
  AddInt(app, "--top", &o->top, 1, 1000, "candidates listed (default 10)");
  AddInt(app, "--threads", &o->threads, 1, 1024,
         "predictions run at once (default: $REVERIE_THREADS, else every core; the answer is the same)");
  AddSetFlag(app, &o->spec,
             "override a setting advise tries, for every script declaring KEY; repeatable");
  AddLuaLimitFlags(app, &o->spec);
  return [o] { return RunAdvise(*o); };
}

}  // namespace

REVERIE_COMMAND(advise, "advise",
                "what limits the step, and which optimization to try first (ranked predictions)",
                SetupAdvise);

}  // namespace reverie::cli
