// File: collector/trace_encoder.h
//
// trace.proto messages -> wire bytes, one function per message. Each
// Encode* writes the *body* of the message (its fields) into `out`, which the
// caller then embeds as a length-delimited field of TraceChunk (see
// ChunkWriter). Field numbers are trace.proto's; trace_encoder_test.cc checks
// every one against the generated parser.
//
// The header is special: the collector learns the GPUs (CUPTI DEVICE
// records) and the framework only after it has started writing, so the
// header is written into a fixed-size region at the start of the file and
// rewritten in place as facts arrive. EncodeHeaderRegion pads the message
// with an unknown length-delimited field (number kHeaderPaddingField), which
// every protobuf parser skips, so that the region always has the same size
// and the file stays valid whatever is rewritten.
#ifndef REVERIE_COLLECTOR_TRACE_ENCODER_H_
#define REVERIE_COLLECTOR_TRACE_ENCODER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collector/records.h"
#include "collector/wire.h"

namespace reverie::collector {

// TraceChunk field numbers (trace.proto).
enum ChunkField : uint32_t {
  kChunkStrings = 1,
  kChunkProcesses = 2,
  kChunkThreads = 3,
  kChunkApiCalls = 4,
  kChunkGpuActivities = 5,
  kChunkSyncs = 6,
  kChunkEventRecords = 7,
  kChunkRanges = 8,
  kChunkSteps = 9,
  kChunkCollectives = 10,
  kChunkGradientBuckets = 11,
  kChunkParameters = 12,
  kChunkFlows = 13,
  kChunkCounters = 14,
  kChunkEnd = 15,  // TraceEnd {chunks = 1, records = 2}: the last chunk
};

// The trace schema this encoder writes (proto/trace.h kTraceSchemaVersion).
inline constexpr uint32_t kSchemaVersion = 2;

// Largest field number protobuf allows; far from anything trace.proto will
// ever use, and not in the reserved 19000-19999 range.
inline constexpr uint32_t kHeaderPaddingField = 536870911;

struct HeaderInfo {
  std::string producer;
  std::string framework;
  int64_t base_time_ns = 0;
  std::vector<DeviceRecord> devices;
  std::vector<std::pair<std::string, std::string>> metadata;  // in insertion order
};

void EncodeApiCall(const ApiCallRecord& r, WireBuffer* out);
void EncodeGpuActivity(const GpuActivityRecord& r, WireBuffer* out);
void EncodeSync(const SyncRecord& r, WireBuffer* out);
void EncodeEventRecord(const EventRecordRecord& r, WireBuffer* out);
void EncodeRange(const RangeRecord& r, WireBuffer* out);
void EncodeStep(const StepRecord& r, WireBuffer* out);
void EncodeGradientBucket(const GradientBucketRecord& r, WireBuffer* out);
void EncodeParameter(const ParameterRecord& r, WireBuffer* out);
void EncodeThread(const ThreadRecord& r, WireBuffer* out);
void EncodeProcess(const ProcessRecord& r, WireBuffer* out);
void EncodeCounter(const std::string& name, int64_t value, WireBuffer* out);
void EncodeDevice(const DeviceRecord& r, WireBuffer* out);
void EncodeHeader(const HeaderInfo& h, WireBuffer* out);

// Encodes `h` as a delimited message of exactly `region_size` bytes
// (length varint included) into `out`. Returns false, leaving `out` empty,
// when the header does not fit.
bool EncodeHeaderRegion(const HeaderInfo& h, size_t region_size, std::string* out);

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_TRACE_ENCODER_H_
