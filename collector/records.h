// File: collector/records.h
//
// The collector's own records: plain structs with the fields of the
// trace.proto messages they become (same names, same units: ns on the
// collector's clock, ids as CUPTI reports them). The decoder fills them from
// CUPTI activity records, the host-event path from the C API, and
// trace_encoder.h turns them into wire bytes. Nothing here knows CUPTI.
//
// String fields are string-table ids (`*_sid`, 0 = none) handed out by
// ChunkWriter::Intern, except where a field says otherwise.
#ifndef REVERIE_COLLECTOR_RECORDS_H_
#define REVERIE_COLLECTOR_RECORDS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace reverie::collector {

// Enum values are trace.proto's.
enum class ApiKind : int32_t { kUnspecified = 0, kRuntime = 1, kDriver = 2 };
enum class GpuKind : int32_t { kUnspecified = 0, kKernel = 1, kMemcpy = 2, kMemset = 3 };
enum class CopyKind : int32_t { kUnknown = 0, kHtoD = 1, kDtoH = 2, kDtoD = 3, kHtoH = 4, kPtoP = 5 };
enum class SyncKind : int32_t {
  kUnspecified = 0,
  kDevice = 1,
  kContext = 2,
  kStream = 3,
  kEvent = 4,
  kStreamWaitEvent = 5
};
enum class RangeKind : int32_t { kUnspecified = 0, kLayer = 1, kUserAnnotation = 2 };
enum class PhaseValue : int32_t {
  kUnknown = 0,
  kForward = 1,
  kBackward = 2,
  kUpdate = 3,
  kDataLoading = 4,
  kOther = 5
};

struct ApiCallRecord {
  ApiKind kind = ApiKind::kUnspecified;
  uint32_t name_sid = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t external_id = 0;
  uint32_t cbid = 0;
};

struct GpuActivityRecord {
  GpuKind kind = GpuKind::kUnspecified;
  uint32_t name_sid = 0;
  int32_t device = 0;
  int64_t stream = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t external_id = 0;
  int64_t context = 0;
  int32_t grid_x = 0, grid_y = 0, grid_z = 0;
  int32_t block_x = 0, block_y = 0, block_z = 0;
  int32_t registers_per_thread = 0;
  int64_t shared_memory_bytes = 0;
  CopyKind copy_kind = CopyKind::kUnknown;
  int64_t bytes = 0;
  int64_t graph_id = 0;
};

struct SyncRecord {
  SyncKind kind = SyncKind::kUnspecified;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  int32_t device = 0;
  int64_t stream = 0;
  int64_t event_id = 0;
  int64_t wait_on_stream = 0;
  uint64_t event_record_correlation_id = 0;
};

struct EventRecordRecord {
  uint64_t correlation_id = 0;
  int64_t event_id = 0;
  int32_t device = 0;
  int64_t stream = 0;
  int64_t context = 0;
};

struct RangeRecord {
  RangeKind kind = RangeKind::kUnspecified;
  uint32_t name_sid = 0;
  uint32_t module_path_sid = 0;
  PhaseValue phase = PhaseValue::kUnknown;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t parent = 0;  // global index + 1, 0 = none
  uint32_t depth = 0;
  uint64_t external_id = 0;
};

struct StepRecord {
  int64_t index = 0;
  uint32_t name_sid = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct GradientBucketRecord {
  int32_t index = 0;
  int64_t bytes = 0;
  std::vector<uint32_t> parameter_sids;
  std::vector<uint32_t> layer_sids;
};

struct ParameterRecord {
  uint32_t name_sid = 0;
  uint32_t layer_sid = 0;
  int64_t bytes = 0;
  uint32_t dtype_sid = 0;
};

struct ThreadRecord {
  int64_t pid = 0;
  int64_t tid = 0;
  std::string name;
};

struct ProcessRecord {
  int64_t pid = 0;
  std::string name;
  std::string label;
};

// A TraceHeader.devices entry (strings inline: the header has no string
// table).
struct DeviceRecord {
  int32_t id = 0;
  std::string name;
  std::string vendor;
  int32_t sm_count = 0;
  int32_t compute_major = 0;
  int32_t compute_minor = 0;
  int64_t total_memory_bytes = 0;
  int64_t sm_clock_khz = 0;
  int64_t memory_clock_khz = 0;
  int32_t memory_bus_width_bits = 0;
  double memory_bandwidth_gbps = 0;
  int32_t max_threads_per_sm = 0;
  int32_t registers_per_sm = 0;
  int64_t shared_memory_per_sm_bytes = 0;
  int32_t warp_size = 0;
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_RECORDS_H_
