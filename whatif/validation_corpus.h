// File: whatif/validation_corpus.h
//
// How far each script's predictions were from measured runs: the step-time
// errors of the validation corpus (bench/accuracy/pairs.json, the errors
// recorded by run_accuracy.py in recorded.json; docs/ACCURACY.md), compiled
// in at build time (whatif/validation_corpus.cmake), so `advise` can say
// how much to trust a candidate, or that nothing measured backs it.
#ifndef REVERIE_WHATIF_VALIDATION_CORPUS_H_
#define REVERIE_WHATIF_VALIDATION_CORPUS_H_

#include <string>
#include <string_view>
#include <vector>

namespace reverie::whatif {

struct ValidatedPair {
  std::string_view script;  // "dataloader.lua": the one script modelling the pair
  std::string_view id;      // "D1"
  std::string_view what;    // "DataLoader num_workers 0 -> 8 (toy MLP, RTX 3080)"
  double step_error_pct = 0;
};

// The pairs modelled by `script` alone (a file name), in corpus order.
std::vector<ValidatedPair> PairsOf(std::string_view script);

// "step error -12.9% (D1), -15.9% (W1) on measured runs", or "not validated".
std::string ConfidenceText(std::string_view script);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_VALIDATION_CORPUS_H_
