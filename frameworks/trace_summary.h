// File: frameworks/trace_summary.h
//
// TraceSummary: the facts `reverie info` shows about a raw trace (counts per
// task kind, threads/streams/devices/layers, steps, top kernels,
// GPU-busy fraction, counters). Computed from a Trace alone, so a Kineto
// import and its .pb give the same summary.
#ifndef REVERIE_FRAMEWORKS_TRACE_SUMMARY_H_
#define REVERIE_FRAMEWORKS_TRACE_SUMMARY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "proto/trace.h"

namespace reverie {

struct KernelStat {
  std::string name;
  int64_t count = 0;
  int64_t total_ns = 0;
};

struct StepStat {
  std::string name;  // "ProfilerStep#5"
  int64_t index = 0;
  int64_t measured_ns = 0;  // end - start of the ProfilerStep range
};

struct TraceSummary {
  int64_t runtime_calls = 0;
  int64_t driver_calls = 0;
  int64_t kernels = 0;
  int64_t kernels_with_geometry = 0;  // grid and block sizes known (retarget_gpu.lua)
  int64_t memcpys = 0;
  int64_t memsets = 0;
  int64_t syncs = 0;
  int64_t event_records = 0;
  int64_t ranges = 0;
  int64_t cpu_op_ranges = 0;
  int64_t annotation_ranges = 0;
  int64_t layer_ranges = 0;
  int64_t gpu_annotation_ranges = 0;
  int64_t collectives = 0;
  int64_t flows = 0;

  int64_t threads = 0;  // CPU threads with API calls or ranges
  int64_t streams = 0;  // (device, stream) pairs with GPU activity
  int64_t devices = 0;  // devices with GPU activity
  int64_t layers = 0;   // distinct module paths of LAYER ranges

  std::vector<StepStat> steps;
  std::vector<KernelStat> top_kernels;  // by total time, longest first
  int64_t kernel_total_ns = 0;

  bool has_gpu_events = false;
  int64_t gpu_busy_ns = 0;  // union of GPU activity intervals
  int64_t span_ns = 0;      // first to last GPU activity or API call
  double gpu_busy_fraction = 0.0;

  // Trace counters, by name: skipped_* (known events with no place in the
  // model) apart from the anomalies.
  std::vector<std::pair<std::string, int64_t>> anomalies;
  std::vector<std::pair<std::string, int64_t>> skipped;
};

TraceSummary Summarize(const Trace& trace, size_t top_kernels = 10);

}  // namespace reverie

#endif  // REVERIE_FRAMEWORKS_TRACE_SUMMARY_H_
