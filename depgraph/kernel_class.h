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

#include "depgraph/graph.h"

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

// Whether `t` is communication: a comm task (a script's modelled transfer),
// or a kernel ClassifyKernelName calls communication (NCCL / RCCL).
bool IsCommunicationTask(const Graph& graph, TaskId t);

// Which collective a communication task performs, read from its name: NCCL
// and RCCL kernels ("ncclDevKernel_AllReduce_Sum_f32_RING_LL",
// "ncclKernel_SendRecv_..."), the framework's record names ("nccl:all_to_all")
// and the scripts' comm tasks ("all-reduce bucket 3"). kOther when the name
// does not say (RCCL's "ncclDevKernel_Generic_4").
enum class Collective : uint8_t {
  kAllReduce = 0,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSendRecv,
  kOther,
};
inline constexpr int kCollectiveCount = 8;
std::string_view CollectiveName(Collective c);
Collective CollectiveOfName(std::string_view name);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_KERNEL_CLASS_H_
