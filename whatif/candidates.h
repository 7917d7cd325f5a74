// File: whatif/candidates.h
//
// What `reverie advise` tries: the settings a user would try with each
// shipped script (DataLoader workers 2/4/8, bf16 where the GPU has it, the
// next GPU generation, ...), in one table, and why the library's other
// scripts are not tried. Whether a script applies to the trace is the
// script's own answer (its preconditions read the trace facts: nothing to
// change, refuse); the table only skips a setting the trace rules out
// before anything runs (CUDA graphs where the GPU, not the CPU, bounds the
// step; a data-parallel question on a single-GPU trace), and says why.
//
// The table's order is also the order in which advise composes the best
// candidates (a larger batch before another GPU, since batch_size.lua
// scales work on the trace's GPU; AMP after retargeting, as the README
// shows; CUDA graphs after the scripts that add or fuse launches).
#ifndef REVERIE_WHATIF_CANDIDATES_H_
#define REVERIE_WHATIF_CANDIDATES_H_

#include <string>
#include <utility>
#include <vector>

#include "whatif/diagnosis.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {

struct CandidatePlan {
  std::string script;                                         // "dataloader.lua"
  std::vector<std::pair<std::string, std::string>> settings;  // unqualified KEY=VALUE
  std::string skip;   // why it is not tried on this trace; "" when it is
  int order = 0;      // composition order (the table's)
};

// Every setting of the table for this trace, in table order.
std::vector<CandidatePlan> PlanCandidates(const LoadedTrace& base, const Diagnosis& diagnosis);

// Why advise does not try `script` (a library file name outside the
// table): memory savers, research techniques, scale-out questions.
std::string WhyNotTried(const std::string& script);

// Whether the table tries `script` at all.
bool IsCandidateScript(const std::string& script);

// The lib/gpus.lua key of the generation after `gpu_name` (a trace's device
// name: "Tesla V100-SXM2-32GB" -> "A100-SXM4-80GB"), or "" when unknown.
std::string NextGenerationGpu(const std::string& gpu_name);

// Whether the trace's GPU has bf16 tensor math (NVIDIA compute capability
// 8.0 or newer, AMD CDNA2 or newer); false when the trace does not say.
bool HasBf16(const LoadedTrace& base);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_CANDIDATES_H_
