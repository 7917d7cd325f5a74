// File: whatif/advise.h
//
// `reverie advise`: what limits this step, and which optimization to try
// first. From one loaded trace:
// - the diagnosis (whatif/diagnosis.h);
// - candidates: every setting of the candidate table (whatif/candidates.h)
//   whose script applies to the trace, each a prediction (whatif::Predict,
//   the same as `reverie predict` with that script and those settings),
//   ranked by gain (throughput speedup: the step speedup, times the work a
//   step does where a script changes it), with its noise band, its
//   confidence (the script's error on the validation corpus) and what its
//   model ignores (the script's header); where the first two gain within
//   the noise of their predictions, the one measured pairs back goes first;
// - the best two and three candidates of different scripts combined, since
//   optimizations interact: the first candidate with every other script's
//   best (each pair predicted), then the two best pairs each with a third;
//   a level at which nothing adds says why and ends the search;
// - settings of one script that predict the same gain are one candidate
//   (the cheapest setting, naming the others);
// - one line per setting that does not apply: the script found nothing to
//   change, refused, failed, or the trace ruled it out; and the library's
//   scripts advise does not try, with why.
// Every prediction runs on its own copy of the baseline, all of them on all
// cores (whatif/trials.h); the answer does not depend on the thread count.
#ifndef REVERIE_WHATIF_ADVISE_H_
#define REVERIE_WHATIF_ADVISE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "depgraph/facts.h"
#include "report/html.h"
#include "whatif/diagnosis.h"
#include "whatif/pipeline.h"
#include "whatif/trials.h"
#include "whatif/validation_corpus.h"

namespace reverie::whatif {

struct Candidate {
  std::string script;  // "dataloader.lua"
  // "dataloader.lua num_workers=8": the script and the settings it was
  // given (the table's, or the user's --set where it overrides them).
  std::string label;
  Trial trial;  // what ran (settings qualified: "dataloader.num_workers")
  TrialResult result;
  int order = 0;           // the table's composition order
  Backing backing;         // the validation pairs behind it (validation_corpus.h)
  std::string confidence;  // ConfidenceText(backing)
  std::string ignores;     // from the script's header ("" when it says nothing)
  // What the script says it did: its first log line ("SGD, for-loop ->
  // fused: per step 483 kernels (1313.8 us) become 1; ..."), or "".
  std::string did;
  // Other settings of the same script that predict the same gain (within
  // 0.1%), folded into this one: "num_workers=4".
  std::vector<std::string> same_gain;
  double gain() const { return result.throughput_speedup; }
};

struct Combination {
  std::vector<std::string> labels;  // the candidates combined, in run order
  Trial trial;
  TrialResult result;
  double product = 1;  // the candidates' gains multiplied: what no interaction would give
  // Why this combination gains less than the one before it (or why none
  // ran); "" when it gains at least as much.
  std::string note;
};

struct NotApplicable {
  std::string script;
  std::string label;    // the settings that share this line ("num_workers=2, 4, 8")
  std::string outcome;  // "skipped" (the trace rules it out), or a TrialOutcomeName
  std::string reason;
};

struct NotTried {
  std::string script;
  std::string why;
};

struct Advice {
  std::string trace_path;
  depgraph::TraceFacts facts;
  Diagnosis diagnosis;
  // Ranked by gain, every one; the first two swapped where their gains are
  // within noise and only the second is backed by measured pairs.
  std::vector<Candidate> candidates;
  // Why the first two's order is not decided by gain (they differ by less
  // than the noise of their predicted steps), or "" (SettleFirstPlace).
  std::string order_note;
  // The first two were swapped: the first is backed by measured pairs, the
  // second predicts the larger gain (order_note says so).
  bool first_by_evidence = false;
  std::vector<Combination> combined;  // best two, best three (CombineBest)
  int combinations_tried = 0;         // trials the search ran
  std::vector<NotApplicable> not_applicable;
  std::vector<NotTried> not_tried;
  int threads = 1;  // how many ran at once
};

struct AdviseOptions {
  // Limits, script folders and the user's --set: a setting overrides the
  // table's for every script declaring it ([SCRIPT.]KEY); one no tried
  // script declares is an error.
  ScriptSpec spec;
  int threads = 0;  // 0: every core
};

// Errors: kInvalidArgument for a --set that no tried script declared (or
// that names a script advise did not try).
absl::StatusOr<Advice> Advise(const LoadedTrace& base, const AdviseOptions& options);

// Settles the first place of `ranked` (sorted by gain) and returns the
// note on it: "" unless the first two gain within the noise of their
// predicted steps (and both gain): |g1 / g2 - 1| <=
// 2 sqrt(r1^2 + r2^2), r being a prediction's standard error of the mean
// step over the mean (the rule `validate` uses for two measured means).
// Within it, when only the second is backed by measured pairs it moves
// first (what to try first is the gain evidence backs); the note says the
// order is open, or why the two were swapped (then `*swapped` is true).
std::string SettleFirstPlace(std::vector<Candidate>* ranked, bool* swapped);

// `reverie advise --json` (the first `top` candidates).
std::string AdviceJson(const Advice& a, int top);

// One line for settings that do not apply, as advise prints it:
// "amp.lua dtype=bf16: nothing to change: the compute kernels already ...".
std::string NotApplicableLine(const NotApplicable& n);

// The HTML report's first section (`reverie report --advise`), with the
// first `top` candidates.
report::AdviceSection AdviceSectionOf(const Advice& a, int top);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_ADVISE_H_
