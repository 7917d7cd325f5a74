// File: transforms/model_info.h
//
// ModelInfo: what the trace recorded about the model's parameters and DDP
// gradient buckets (proto Parameter / GradientBucket records, written by
// frameworks/pytorch), kept beside the graph for the scripts that model
// communication (ddp, p3, blueconnect, dgc). The graph itself stays about
// tasks; these records are facts about the model, not tasks.
//
// Invariants: paths are the trace's strings; a record with a bad string id
// or a negative size is skipped and counted in `skipped`.
#ifndef REVERIE_TRANSFORMS_MODEL_INFO_H_
#define REVERIE_TRANSFORMS_MODEL_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/trace.h"

namespace reverie::transforms {

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

struct ModelInfo {
  std::vector<ParameterInfo> parameters;
  std::vector<BucketInfo> buckets;  // in index order
  int64_t skipped = 0;
};

ModelInfo ModelInfoFromTrace(const Trace& trace);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_MODEL_INFO_H_
