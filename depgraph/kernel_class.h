// File: depgraph/kernel_class.h
//
// One classification of GPU work by kernel name, shared by the critical-path
// summary and `reverie compare`, so that both speak of the same "gemm" or
// "elementwise". Name patterns are what cuBLAS, cuDNN, CUTLASS, NCCL/RCCL,
// PyTorch's ATen and the common optimizers call their kernels; the first
// matching class in the order below wins (attention before gemm: FMHA kernels
// are often CUTLASS GEMMs underneath).
#ifndef REVERIE_DEPGRAPH_KERNEL_CLASS_H_
#define REVERIE_DEPGRAPH_KERNEL_CLASS_H_

#include <cstdint>
#include <string_view>

namespace reverie::depgraph {

enum class KernelClass : uint8_t {
  kGemm = 0,
  kConv,
  kAttention,
  kElementwise,
  kReduction,
  kNormalization,
  kCommunication,
  kMemcpy,
  kMemset,
  kOptimizer,
  kOther,
};
inline constexpr int kKernelClassCount = 11;

std::string_view KernelClassName(KernelClass c);

// Classifies by name alone (case-insensitive); memcpy / memset activities are
// recognised by their Kineto / CUPTI names ("Memcpy HtoD ...", "Memset ...").
KernelClass ClassifyKernelName(std::string_view name);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_KERNEL_CLASS_H_
