// File: whatif/several.h
//
// Several predictions from one loaded baseline: each script alone, then
// (with more than one) all of them in order, what `reverie report` shows and
// `advise` ranks. One --set list serves every run: a setting goes to each
// run whose scripts declare it (SCRIPT.KEY to the runs holding SCRIPT), and
// a setting no run used is refused, as predict refuses it.
#ifndef REVERIE_WHATIF_SEVERAL_H_
#define REVERIE_WHATIF_SEVERAL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

struct NamedPrediction {
  std::string name;                  // "amp.lua", or "a.lua + b.lua" for all together
  std::vector<std::string> scripts;  // what ran, in order
  Prediction prediction;
};

// Each script alone, then all of them together (when more than one), run
// at once on `threads` cores (0: all; base/parallel.h), the results those
// runs give one at a time. Errors: the first failing run's (as Predict), or
// kInvalidArgument for a setting that no run declared.
absl::StatusOr<std::vector<NamedPrediction>> PredictEachAndAll(const LoadedTrace& base,
                                                               const ScriptSpec& spec,
                                                               int threads = 0);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_SEVERAL_H_
