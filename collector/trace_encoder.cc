#include "collector/trace_encoder.h"

namespace reverie::collector {

void EncodeApiCall(const ApiCallRecord& r, WireBuffer* out) {
  out->I32(1, static_cast<int32_t>(r.kind));
  out->U32(2, r.name_sid);
  out->I64(3, r.pid);
  out->I64(4, r.tid);
  out->I64(5, r.start_ns);
  out->I64(6, r.end_ns);
  out->U64(7, r.correlation_id);
  out->U64(8, r.external_id);
  out->U32(9, r.cbid);
}

void EncodeGpuActivity(const GpuActivityRecord& r, WireBuffer* out) {
  out->I32(1, static_cast<int32_t>(r.kind));
  out->U32(2, r.name_sid);
  out->I32(3, r.device);
  out->I64(4, r.stream);
  out->I64(5, r.start_ns);
  out->I64(6, r.end_ns);
  out->U64(7, r.correlation_id);
  out->U64(8, r.external_id);
  out->I64(9, r.context);
  out->I32(10, r.grid_x);
  out->I32(11, r.grid_y);
  out->I32(12, r.grid_z);
  out->I32(13, r.block_x);
  out->I32(14, r.block_y);
  out->I32(15, r.block_z);
  out->I32(16, r.registers_per_thread);
  out->I64(17, r.shared_memory_bytes);
  out->I32(18, static_cast<int32_t>(r.copy_kind));
  out->I64(19, r.bytes);
  out->I64(20, r.graph_id);
}

void EncodeSync(const SyncRecord& r, WireBuffer* out) {
  out->I32(1, static_cast<int32_t>(r.kind));
  out->I64(2, r.pid);
  out->I64(3, r.tid);
  out->I64(4, r.start_ns);
  out->I64(5, r.end_ns);
  out->U64(6, r.correlation_id);
  out->I32(7, r.device);
  out->I64(8, r.stream);
  out->I64(9, r.event_id);
  out->I64(10, r.wait_on_stream);
  out->U64(11, r.event_record_correlation_id);
}

void EncodeEventRecord(const EventRecordRecord& r, WireBuffer* out) {
  out->U64(1, r.correlation_id);
  out->I64(2, r.event_id);
  out->I32(3, r.device);
  out->I64(4, r.stream);
  out->I64(5, r.context);
}

void EncodeRange(const RangeRecord& r, WireBuffer* out) {
  out->I32(1, static_cast<int32_t>(r.kind));
  out->U32(2, r.name_sid);
  out->U32(3, r.module_path_sid);
  out->I32(4, static_cast<int32_t>(r.phase));
  out->I64(5, r.pid);
  out->I64(6, r.tid);
  out->I64(7, r.start_ns);
  out->I64(8, r.end_ns);
  out->U32(9, r.parent);
  out->U32(10, r.depth);
  out->U64(11, r.external_id);
}

void EncodeStep(const StepRecord& r, WireBuffer* out) {
  out->I64(1, r.index);
  out->U32(2, r.name_sid);
  out->I64(3, r.pid);
  out->I64(4, r.tid);
  out->I64(5, r.start_ns);
  out->I64(6, r.end_ns);
}

void EncodeGradientBucket(const GradientBucketRecord& r, WireBuffer* out) {
  out->I32(1, r.index);
  out->I64(2, r.bytes);
  out->PackedU32(3, r.parameter_sids);
  out->PackedU32(4, r.layer_sids);
}

void EncodeParameter(const ParameterRecord& r, WireBuffer* out) {
  out->U32(1, r.name_sid);
  out->U32(2, r.layer_sid);
  out->I64(3, r.bytes);
  out->U32(4, r.dtype_sid);
}

void EncodeThread(const ThreadRecord& r, WireBuffer* out) {
  out->I64(1, r.pid);
  out->I64(2, r.tid);
  out->String(3, r.name);
}

void EncodeProcess(const ProcessRecord& r, WireBuffer* out) {
  out->I64(1, r.pid);
  out->String(2, r.name);
  out->String(3, r.label);
}

void EncodeCounter(const std::string& name, int64_t value, WireBuffer* out) {
  out->String(1, name);
  out->I64(2, value);
}

void EncodeDevice(const DeviceRecord& r, WireBuffer* out) {
  out->I32(1, r.id);
  out->String(2, r.name);
  out->String(3, r.vendor);
  out->I32(4, r.sm_count);
  out->I32(5, r.compute_major);
  out->I32(6, r.compute_minor);
  out->I64(7, r.total_memory_bytes);
  out->I64(8, r.sm_clock_khz);
  out->I64(9, r.memory_clock_khz);
  out->I32(10, r.memory_bus_width_bits);
  out->Double(11, r.memory_bandwidth_gbps);
  out->I32(12, r.max_threads_per_sm);
  out->I32(13, r.registers_per_sm);
  out->I64(14, r.shared_memory_per_sm_bytes);
  out->I32(15, r.warp_size);
}

void EncodeHeader(const HeaderInfo& h, WireBuffer* out) {
  out->String(1, "reverie.trace");
  out->U32(2, kSchemaVersion);
  out->String(3, h.producer);
  out->String(4, h.framework);
  out->I64(6, h.base_time_ns);
  for (const DeviceRecord& d : h.devices) {
    const size_t at = out->BeginMessage(7);
    EncodeDevice(d, out);
    out->EndMessage(at);
  }
  // map<string, string> is a repeated entry message {key = 1, value = 2}.
  for (const auto& [key, value] : h.metadata) {
    const size_t at = out->BeginMessage(9);
    out->String(1, key);
    out->String(2, value);
    out->EndMessage(at);
  }
}

bool EncodeHeaderRegion(const HeaderInfo& h, size_t region_size, std::string* out) {
  out->clear();
  // Message length L such that varint(L) + L == region_size.
  size_t length = 0;
  bool found = false;
  for (size_t k = 1; k <= 5 && k < region_size; ++k) {
    if (VarintSize(region_size - k) == k) {
      length = region_size - k;
      found = true;
      break;
    }
  }
  if (!found) return false;

  WireBuffer message;
  EncodeHeader(h, &message);
  if (message.size() > length) return false;
  const size_t tag_size = VarintSize((static_cast<uint64_t>(kHeaderPaddingField) << 3) | 2);
  size_t remaining = length - message.size();
  while (remaining > 0) {
    // One padding field = tag + varint(p) + p bytes. Some totals have no
    // exact single-field solution (the varint of p changes size), so an
    // empty padding field is added first and the rest retried.
    bool filled = false;
    for (size_t lv = 1; lv <= 3 && !filled; ++lv) {
      if (remaining < tag_size + lv) break;
      const size_t p = remaining - tag_size - lv;
      if (VarintSize(p) != lv) continue;
      message.Tag(kHeaderPaddingField, WireType::kLen);
      message.Varint(p);
      message.Raw(std::string(p, '\0'));
      remaining = 0;
      filled = true;
    }
    if (filled) break;
    if (remaining < 2 * (tag_size + 1)) return false;  // too little room to split
    message.Tag(kHeaderPaddingField, WireType::kLen);
    message.Varint(0);
    remaining -= tag_size + 1;
  }
  WireBuffer framed;
  framed.Varint(length);
  framed.Raw(message.view());
  if (framed.size() != region_size) return false;
  *out = framed.str();
  return true;
}

}  // namespace reverie::collector
