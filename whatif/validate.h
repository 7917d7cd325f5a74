// File: whatif/validate.h
//
// `reverie validate` and the Python module's Trace.validate(): BEFORE
// predicted with the scripts, profiled per counted step beside AFTER's
// measurement and BEFORE's baseline (report/validate.h judges them against
// both files' noise).
#ifndef REVERIE_WHATIF_VALIDATE_H_
#define REVERIE_WHATIF_VALIDATE_H_

#include <string>

#include "absl/status/statusor.h"
#include "report/validate.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

// One-line errors (kFailedPrecondition) when one trace has step markers and
// the other none, or their counted step counts differ (not the same loop
// profiled twice); a script's error as Predict gives it (`traceback` gets
// its Lua traceback, may be null).
absl::StatusOr<report::Validation> ValidatePrediction(const LoadedTrace& before,
                                                      const LoadedTrace& after,
                                                      const ScriptSpec& spec, int top_kernels,
                                                      std::string* traceback = nullptr);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_VALIDATE_H_
