// File: whatif/validation_corpus.h
//
// How far each script's predictions were from measured runs: the step-time
// errors of the validation corpus (bench/accuracy/pairs.json, the errors
// recorded by run_accuracy.py in recorded.json; docs/ACCURACY.md), compiled
// in at build time (whatif/validation_corpus.cmake), so `advise` can say
// how much to trust a candidate, or that nothing measured backs it.
//
// An error is (predicted - measured) / measured of the AFTER run's step: a
// negative error means the prediction was faster than the real change.
#ifndef REVERIE_WHATIF_VALIDATION_CORPUS_H_
#define REVERIE_WHATIF_VALIDATION_CORPUS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reverie::whatif {

struct ValidatedPair {
  std::string_view script;    // "dataloader.lua": the one script modelling the pair
  std::string_view id;        // "D1"
  std::string_view what;      // "DataLoader num_workers 0 -> 8 (toy MLP, RTX 3080)"
  std::string_view settings;  // "num_workers=8" (comma-separated; "" for defaults)
  double step_error_pct = 0;
};

// The pairs modelled by `script` alone (a file name), in corpus order.
std::vector<ValidatedPair> PairsOf(std::string_view script);

// The pairs that back a run of `script` with `settings` (unqualified
// KEY=VALUE): those whose settings agree with it on every key both set;
// when none agrees, every pair of the script (`exact` false then).
struct Backing {
  std::vector<ValidatedPair> pairs;
  bool exact = true;
};
Backing BackingOf(std::string_view script,
                  const std::vector<std::pair<std::string, std::string>>& settings);

// "error -12.9% (D1)", "error -29.4%..+30.8% (A1, A3, A1b, A3b)",
// "error -12.9% (D1, at num_workers=8)" where the pairs ran other
// settings, or "not validated".
std::string ConfidenceText(const Backing& b);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_VALIDATION_CORPUS_H_
