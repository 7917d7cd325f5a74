// File: frameworks/kineto/kineto_event.h
//
// RawEvent: the fields of one Kineto trace event that the importer uses,
// decoded from JSON by kineto_parser.cc and consumed by kineto_builder.cc.
// Keeping the two apart lets the builder be tested without JSON and keeps the
// parser free of trace semantics.
//
// Invariants: string_views point into the input text (valid until the
// import ends) or into the simdjson parser's string buffer (valid until its
// next chunk of the document); `has_*` flags tell a missing field from a zero.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_EVENT_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_EVENT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "proto/trace_counters.h"

namespace reverie::kineto {

// Event categories (`cat`). Both schemas map to one value: the 2021 names
// (Kernel, Runtime, Operator, Memcpy, Memset, async) are aliases.
enum class Category : uint8_t {
  kNone,  // no `cat` (metadata, some instants)
  kCpuOp,
  kUserAnnotation,
  kGpuUserAnnotation,
  kPythonFunction,
  kCudaRuntime,
  kCudaDriver,
  kCudaSync,
  kCudaEvent,
  kKernel,
  kGpuMemcpy,
  kGpuMemset,
  kAc2g,     // CPU launch -> GPU flow (2021: "async")
  kFwdBwd,   // forward op -> backward op flow
  // Known categories the trace model has no place for (counted as skipped).
  kCpuInstantEvent,
  kOverhead,
  kTraceSpan,           // "Trace": the profiler's own span
  kCudaProfilerRange,
  kCollectiveComm,
  kOtherKnown,
  kUnknown,
};

// Decodes a `cat` value; unknown names give Category::kUnknown.
Category CategoryFromName(std::string_view cat);
// Name for counters ("skipped_<name>").
TraceCounter SkippedCounter(Category c);

// An op's inputs as recorded with record_shapes (args "Input Dims",
// "Input type", "Concrete Inputs", aligned by position), parsed into storage
// the parser reuses: valid until the next event. Cut at the limits below
// (counter op_inputs_truncated): a hostile trace cannot make it grow
// without bound per event.
struct OpInputsScratch {
  static constexpr size_t kMaxInputs = 64;
  static constexpr size_t kMaxDims = 16;          // per tensor
  static constexpr size_t kMaxListTensors = 4096;  // per tensor list
  static constexpr size_t kMaxEventDims = 1 << 16;  // all inputs of one op together
  struct Input {
    bool is_list = false;
    uint32_t dims_begin = 0, dims_count = 0;    // into `dims`
    uint32_t ranks_begin = 0, ranks_count = 0;  // into `ranks` (lists)
    std::string_view type;
    std::string_view concrete;
  };
  std::vector<Input> inputs;
  std::vector<int64_t> dims;
  std::vector<int32_t> ranks;
  bool truncated = false;
  bool any = false;
  void Clear() {
    if (!any) return;
    inputs.clear();
    dims.clear();
    ranks.clear();
    truncated = any = false;
  }
  // The input at position i, or nullptr past the limit (counted).
  Input* At(size_t i) {
    any = true;
    if (i >= kMaxInputs) {
      truncated = true;
      return nullptr;
    }
    if (i >= inputs.size()) inputs.resize(i + 1);
    return &inputs[i];
  }
};

struct RawEvent {
  char ph = 0;
  Category cat = Category::kNone;
  std::string_view cat_name;
  std::string_view name;
  bool has_name = false;
  int64_t pid = 0;
  int64_t tid = 0;
  bool has_pid = false;
  bool has_tid = false;
  bool pid_is_text = false;  // pid was a non-numeric string ("Spans")
  bool tid_is_text = false;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  bool has_ts = false;
  bool has_dur = false;
  bool bad_number = false;  // a ts/dur that was present but unparsable
  // Flow events.
  uint64_t flow_id = 0;
  bool has_flow_id = false;
  bool binding_enclosing = false;  // "bp": "e"

  // args.
  uint64_t correlation = 0;
  bool has_correlation = false;
  uint64_t external_id = 0;
  int64_t stream = 0;
  bool has_stream = false;
  int32_t device = 0;
  bool has_device = false;
  int64_t context = 0;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t registers_per_thread = 0;
  int64_t shared_memory = 0;
  int64_t bytes = 0;
  int64_t graph_id = 0;
  uint32_t cbid = 0;
  std::string_view copy_kind_arg;  // AMD "kind": "DtoD"
  std::string_view sync_kind;
  int64_t wait_on_stream = 0;
  bool has_wait_on_stream = false;
  int64_t wait_on_event_record_corr = 0;
  int64_t event_id = 0;
  bool has_event_id = false;
  int64_t sequence_number = -1;
  bool has_sequence_number = false;
  int64_t fwd_thread_id = 0;
  int64_t python_id = 0;
  int64_t python_parent_id = 0;
  bool has_python_id = false;
  std::string_view collective_name;
  int64_t in_nelems = 0;
  int64_t out_nelems = 0;
  int64_t group_size = 0;
  std::string_view dtype;
  std::string_view process_group_name;
  int64_t seq = 0;
  // [memory] events (profile_memory=True): args Addr, Bytes, Total
  // Allocated, Total Reserved, Device Type, Device Id.
  int64_t mem_addr = 0;
  int64_t mem_bytes = 0;
  bool has_mem_bytes = false;
  int64_t total_allocated = 0;
  bool has_total_allocated = false;
  int64_t total_reserved = 0;
  bool has_total_reserved = false;
  int64_t device_type = 0;
  bool has_device_type = false;
  int64_t device_id = 0;
  // cpu_op input shapes (record_shapes), or nullptr.
  const OpInputsScratch* inputs = nullptr;
  // Metadata events ("ph":"M"): args.name / args.labels.
  std::string_view meta_name;
  std::string_view meta_labels;
};

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_EVENT_H_
