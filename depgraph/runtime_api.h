// File: depgraph/runtime_api.h
//
// What a CUDA / HIP runtime or driver call is, by its name: one predicate
// per question, shared by whoever asks it (the launch model of inserted
// kernels, validate's comparison of two hosts' launch times), so a call
// counts the same everywhere.
#ifndef REVERIE_DEPGRAPH_RUNTIME_API_H_
#define REVERIE_DEPGRAPH_RUNTIME_API_H_

#include <string_view>

namespace reverie::depgraph {

// True for a runtime or driver call that launches GPU work one kernel at a
// time: cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel, ... and their
// cooperative forms (a graph launch, which replays many, is not one).
inline bool IsKernelLaunchApi(std::string_view name) {
  return name.find("LaunchKernel") != std::string_view::npos ||
         name.find("LaunchCooperativeKernel") != std::string_view::npos;
}

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_RUNTIME_API_H_
