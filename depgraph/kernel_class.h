// File: depgraph/kernel_class.h
//
// The one classification of GPU work, shared by the critical-path summary,
// `compare`, `validate`, selections (`class=`) and every script (`t.class`),
// so that all speak of the same "gemm" or "elementwise".
//
// By name: a kernel name is cut into words (at punctuation, underscores,
// digits and lower-to-upper case changes: "ncclKernel_AllReduce_RING" is
// nccl kernel all reduce ring), and classes are recognised by whole words or
// word sequences, never by substrings ("lamb" is not "lambda", "conv" is not
// "convert"). The words are what cuBLAS, cuDNN, CUTLASS, rocBLAS/Tensile,
// MIOpen/CK, NCCL/RCCL, Triton, PyTorch's ATen and the optimizers call their
// kernels; the first class that matches in the order of the enum below wins,
// except that the library families come first (a GEMM with a ReLU epilogue
// is a GEMM; a cuDNN batch-norm kernel is normalization, not conv).
//
// By context (TaskClass): an elementwise, activation, reduction or unnamed
// kernel launched inside the optimizer's step (`Optimizer.step#...`: a
// for-loop or foreach optimizer's ATen functors) is optimizer work, so
// `class = "optimizer"` selects what the optimizer runs whatever the
// implementation; zero_grad is not the step.
#ifndef REVERIE_DEPGRAPH_KERNEL_CLASS_H_
#define REVERIE_DEPGRAPH_KERNEL_CLASS_H_

#include <cstdint>
#include <string_view>

#include "depgraph/graph.h"
#include "hardware/math_type.h"

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
  kActivation,  // pointwise activation functions (ReLU, GELU, SiLU, ...)
};
inline constexpr int kKernelClassCount = 12;

std::string_view KernelClassName(KernelClass c);

// Classifies by name alone (case-insensitive); memcpy / memset activities are
// recognised by their Kineto / CUPTI names ("Memcpy HtoD ...", "Memset ...").
KernelClass ClassifyKernelName(std::string_view name);

// Whether a name-class is pointwise work an optimizer step runs as plain
// kernels (TaskClass turns it into kOptimizer inside the step).
bool IsGenericPointwiseClass(KernelClass c);

// The class of task `t` (GPU tasks; kOther for CPU tasks): its name's class,
// kMemcpy / kMemset / kCommunication for copies, sets and comm tasks, and
// kOptimizer for generic pointwise kernels launched inside the optimizer's
// step (Graph::in_optimizer_step).
KernelClass TaskClass(const Graph& graph, TaskId t);

// ClassifyKernelName(graph.name(t)), cached per interned name in the graph
// (a graph shared between threads has its cache filled first: the
// pipeline's LoadAndSimulate does).
KernelClass NameClass(const Graph& graph, TaskId t);

// hardware::ReadNameMath(graph.name(t)), cached per interned name in the
// graph like NameClass (and filled first likewise).
hardware::NameMath KernelNameMath(const Graph& graph, TaskId t);

// Parses a class name ("gemm", ...); false when it is not one.
bool ParseKernelClass(std::string_view name, KernelClass* out);

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
