// File: depgraph/model_info.h
//
// ModelInfo: what the trace recorded about the model's parameters and DDP
// gradient buckets (proto Parameter / GradientBucket records, written by
// frameworks/pytorch), kept beside the graph for the scripts that model
// communication (ddp, p3, blueconnect, dgc), plus the collectives a
// multi-GPU trace recorded and its world size (ddp re-times recorded NCCL
// kernels instead of adding new ones). The graph itself stays about
// tasks; these records are facts about the model, not tasks.
//
// Invariants: paths are the trace's strings; a record with a bad string id
// or a negative size is skipped and counted in `skipped`.
#ifndef REVERIE_DEPGRAPH_MODEL_INFO_H_
#define REVERIE_DEPGRAPH_MODEL_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "depgraph/facts.h"
#include "proto/trace.h"

namespace reverie::depgraph {

struct ParameterInfo {
  std::string name;   // "layer1.0.conv1.weight"
  std::string layer;  // "layer1.0.conv1"
  int64_t bytes = 0;
};

struct BucketInfo {
  int32_t index = 0;
  int64_t bytes = 0;
  std::vector<std::string> parameters;
  std::vector<std::string> layers;
};

// A collective call as the framework recorded it (proto Collective).
struct CollectiveInfo {
  std::string name;        // "allreduce", "broadcast", ...
  int64_t bytes = 0;       // payload (in_nelems x element size); 0 = unknown
  int32_t group_size = 0;  // 0 = not recorded
  int64_t start_ns = 0;    // measured CPU start: for ordering only
  int64_t end_ns = 0;      // measured CPU end (0 = not recorded)
  int64_t pid = 0;         // the thread that made the call
  int64_t tid = 0;
};

// A GPU the trace describes (proto Device): the origin of a cross-GPU
// prediction. Zero means unknown.
struct DeviceInfo {
  int32_t id = 0;
  std::string name;    // "Tesla V100-SXM2-32GB"
  std::string vendor;  // "nvidia", "amd" or ""
  int32_t sm_count = 0;
  int32_t compute_major = 0;
  int32_t compute_minor = 0;
  int64_t total_memory_bytes = 0;
  int32_t max_threads_per_sm = 0;
  int32_t registers_per_sm = 0;
  int64_t shared_memory_per_sm_bytes = 0;
};

struct ModelInfo {
  std::vector<ParameterInfo> parameters;
  std::vector<BucketInfo> buckets;  // in index order
  std::vector<CollectiveInfo> collectives;  // in measured start order
  int32_t world_size = 0;  // the trace's distributed world size; 0 = not recorded
  std::vector<DeviceInfo> devices;  // the trace header's GPUs, in its order
  int64_t skipped = 0;
  // What the run already does (depgraph/facts.h): set once the graph is
  // built (DetectFacts needs its classes and steps).
  TraceFacts facts;
};

ModelInfo ModelInfoFromTrace(const Trace& trace);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_MODEL_INFO_H_
