// File: whatif/candidates.h
//
// What `reverie advise` tries: the settings a user would try with each
// shipped script (DataLoader workers 2/4/8, bf16 where the GPU has it, the
// next GPU generation, ...), in one table, and why the library's other
// scripts are not tried. Whether a script applies to the trace is the
// script's own answer (its preconditions read the trace facts: nothing to
// change, refuse); the table only skips a setting it cannot even state for
// this trace (the next GPU generation of a GPU the trace does not name),
// and says why. Nothing is ruled out by the diagnosis: a guess there would
// hide a gain the prediction would have shown.
//
// The table's order is also the order in which advise composes the best
// candidates (a larger batch before another GPU, since batch_size.lua
// scales work on the trace's GPU; AMP after retargeting, as the README
// shows; CUDA graphs after the scripts that add or fuse launches).
#ifndef REVERIE_WHATIF_CANDIDATES_H_
#define REVERIE_WHATIF_CANDIDATES_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

struct CandidatePlan {
  std::string script;                                         // "dataloader.lua"
  std::vector<std::pair<std::string, std::string>> settings;  // unqualified KEY=VALUE
  std::string skip;   // why it is not tried on this trace; "" when it is
  int order = 0;      // composition order (the table's)
};

// Every setting of the table for this trace, in table order.
std::vector<CandidatePlan> PlanCandidates(const LoadedTrace& base);

// Why advise does not try `script` (a library file name outside the
// table): memory savers, research techniques, scale-out questions.
std::string WhyNotTried(const std::string& script);

// Whether the table tries `script` at all.
bool IsCandidateScript(const std::string& script);

// The GPU table's key (hardware/gpu_table.cc) of the part a user of `key`
// would move to ("V100-SXM2" -> "A100-SXM4-80GB"), or "" when none is newer.
std::string NextGenerationGpu(std::string_view key);

// The table's key of the GPU the trace ran on (transforms::ResolveTraceGpu),
// or its error (kNotFound naming the device, kFailedPrecondition when the
// trace describes no GPU).
absl::StatusOr<std::string> TraceGpuKey(const LoadedTrace& base);

// Whether the trace's GPU has bf16 matrix units (Ampere, CDNA2 and newer);
// false when the trace's GPU is not in the table.
bool HasBf16(const LoadedTrace& base);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_CANDIDATES_H_
