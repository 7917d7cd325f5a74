// File: depgraph/facts.h
//
// What the profiled run already does, read once from the trace and its
// graph, so that a script checks its preconditions before changing
// anything ("kernels already bf16: nothing to change"), `info` and the
// report show them, and `advise` skips what the run already does. Each
// fact says where it came from: recorded (an annotation, a record, the
// header) or inferred (kernel names, timing), and an inference says so.
//
// Facts are about the counted steps where a per-step figure is given
// (depgraph/step_time.h), else the whole trace.
#ifndef REVERIE_DEPGRAPH_FACTS_H_
#define REVERIE_DEPGRAPH_FACTS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "depgraph/graph.h"
#include "proto/trace.h"

namespace reverie::depgraph {

enum class FactSource : uint8_t { kAbsent = 0, kRecorded, kInferred };
std::string_view FactSourceName(FactSource s);  // "absent", "recorded", "inferred"

// Where a fact came from, in words a user checks ("Optimizer.step#SGD.step
// annotations", "kernel names").
struct Origin {
  FactSource source = FactSource::kAbsent;
  std::string how;
};

// Number types of the compute-bound kernels (gemm, conv, attention classes).
struct PrecisionFact {
  std::string compute;  // "fp32", "tf32", "fp16", "bf16", "fp8", "fp64" or "unknown"
  double share = 0;     // of the compute kernels' time in `compute`
  // Time per type over every counted step (from the launching op's input
  // type and the name: hardware::MathOfKernel; "unknown": neither says).
  std::vector<std::pair<std::string, int64_t>> by_type_ns;
  Origin origin;
  bool half_or_lower() const { return compute == "fp16" || compute == "bf16" || compute == "fp8"; }
};

struct OptimizerFact {
  std::string name;            // "SGD", "Adam", "AdamW", ... ("" when unknown)
  std::string implementation;  // "for-loop", "foreach", "fused" or "unknown"
  double step_us = 0;          // Optimizer.step per counted step (CPU span)
  double step_kernels = 0;     // GPU tasks inside it per counted step
  double step_gpu_us = 0;      // their time per counted step
  double zero_grad_us = 0;     // Optimizer.zero_grad per counted step
  double zero_grad_kernels = 0;
  Origin origin;
};

struct DataParallelFact {
  bool used = false;
  std::string backend;       // "nccl", "rccl", "gloo", ...
  int32_t world_size = 0;    // 0: not recorded
  double collectives_per_step = 0;      // recorded Collective records
  double allreduce_bytes_per_step = 0;  // their recorded payload
  double comm_kernels_per_step = 0;     // NCCL / RCCL kernels
  double comm_kernel_us_per_step = 0;
  bool generic_kernels = false;  // ncclDevKernel_Generic: typed only by the records
  int32_t buckets = 0;           // GradientBucket records, else all-reduces per step
  // The counted steps run forward kernels and none in a backward phase (a
  // tensor-parallel inference): the collectives carry activations, the
  // ranks are not data-parallel replicas. False when the phases are unknown.
  bool inference = false;
  Origin origin;
};

struct UsedFact {
  bool used = false;
  double count = 0;  // what the evidence counts (per counted step where it says so)
  Origin origin;
};

struct DataLoaderFact {
  std::string mode;  // "main thread" (num_workers=0), "worker processes", "unknown"
  double loading_us_per_step = 0;  // main-thread loading per counted step
  Origin origin;
};

struct CopiesFact {
  int64_t pageable = 0, pinned = 0, device = 0, other = 0;  // host/device copies by kind
  Origin origin;
};

struct GpuFact {
  std::string name;    // the device the GPU work ran on
  std::string vendor;  // "nvidia", "amd"
  int32_t devices_used = 0;
  Origin origin;
};

struct TraceFacts {
  GpuFact gpu;
  PrecisionFact precision;
  OptimizerFact optimizer;
  DataParallelFact data_parallel;
  UsedFact checkpointing;    // activation checkpointing
  UsedFact cuda_graphs;      // count: graph launches per counted step
  UsedFact compiled;         // torch.compile / Triton; count: Triton kernels per step
  DataLoaderFact dataloader;
  CopiesFact copies;
  int32_t counted_steps = 0;
};

TraceFacts DetectFacts(const Trace& trace, const Graph& graph);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_FACTS_H_
