#include "collector/cupti_decoder.h"

#include "collector/api_filter.h"

#include <cupti_runtime_cbid.h>
#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

namespace reverie::collector {
namespace {

constexpr size_t kApiSlots = 1 << 16;
constexpr size_t kExternalSlots = 1 << 16;
constexpr size_t kEventSlots = 1 << 14;
constexpr uint32_t kInvalid32 = 0xFFFFFFFFu;

int64_t Id32(uint32_t v) { return v == kInvalid32 ? 0 : static_cast<int64_t>(v); }

bool ValidSyncId(uint64_t id) {
  return id != 0 && id != kInvalid32 && id != ~static_cast<uint64_t>(0);
}

const char* MemoryKindName(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
    default: return "Unknown";
  }
}

// CUPTI's ten copy kinds folded onto trace.proto's five, plus Kineto's
// short direction label used in the activity name.
CopyKind FoldCopyKind(uint8_t kind, const char** label) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: *label = "HtoD"; return CopyKind::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: *label = "HtoA"; return CopyKind::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: *label = "DtoH"; return CopyKind::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: *label = "AtoH"; return CopyKind::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: *label = "DtoD"; return CopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: *label = "AtoA"; return CopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: *label = "AtoD"; return CopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: *label = "DtoA"; return CopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: *label = "HtoH"; return CopyKind::kHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: *label = "PtoP"; return CopyKind::kPtoP;
    default: *label = "Unknown"; return CopyKind::kUnknown;
  }
}

SyncKind FoldSyncKind(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return SyncKind::kEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return SyncKind::kStreamWaitEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return SyncKind::kStream;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return SyncKind::kContext;
    default: return SyncKind::kUnspecified;
  }
}

}  // namespace

CuptiDecoder::CuptiDecoder(TraceSink* sink, CallbackNameFn callback_name, void* name_context,
                           int64_t pid, bool filter_queries)
    : sink_(sink),
      callback_name_(callback_name),
      name_context_(name_context),
      pid_(pid),
      filter_queries_(filter_queries),
      api_(kApiSlots),
      external_(kExternalSlots),
      events_(kEventSlots) {}

void CuptiDecoder::Decode(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return DecodeApi(*reinterpret_cast<const CUpti_ActivityAPI*>(record), ApiKind::kRuntime);
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return DecodeApi(*reinterpret_cast<const CUpti_ActivityAPI*>(record), ApiKind::kDriver);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return DecodeKernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record));
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return DecodeMemcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record));
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return DecodeMemset(*reinterpret_cast<const CUpti_ActivityMemset4*>(record));
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return DecodeSync(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(record));
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
      return DecodeCudaEvent(*reinterpret_cast<const CUpti_ActivityCudaEvent2*>(record));
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return DecodeExternal(*reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record));
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return DecodeDevice(*reinterpret_cast<const CUpti_ActivityDevice5*>(record));
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return DecodeContext(*reinterpret_cast<const CUpti_ActivityContext3*>(record));
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return DecodeOverhead(*reinterpret_cast<const CUpti_ActivityOverhead3*>(record));
    default:
      sink_->Count(TraceCounter::cupti_record_unhandled_kind, 1);
      return;
  }
}

uint32_t CuptiDecoder::ApiNameSid(uint32_t domain, uint32_t cbid) {
  if (domain > 2) return 0;
  std::vector<uint32_t>& cache = api_name_sid_[domain];
  if (cbid < cache.size() && cache[cbid] != 0) return cache[cbid];
  const char* name = callback_name_ != nullptr ? callback_name_(name_context_, domain, cbid) : nullptr;
  std::string text;
  if (name != nullptr && *name != '\0') {
    text = name;
    // CUPTI names carry the API version ("cudaLaunchKernel_v7000"); the
    // trace uses the name programs call, as Kineto traces do.
    const size_t v = text.rfind("_v");
    if (v != std::string::npos && v + 2 < text.size() &&
        text.find_first_not_of("0123456789", v + 2) == std::string::npos) {
      text.resize(v);
    }
  } else {
    text = (domain == 2 ? "runtime_cbid_" : "driver_cbid_") + std::to_string(cbid);
  }
  const uint32_t sid = sink_->writer().Intern(text);
  if (cbid < 100000) {
    if (cache.size() <= cbid) cache.resize(cbid + 1, 0);
    cache[cbid] = sid;
  }
  return sid;
}

uint32_t CuptiDecoder::KernelNameSid(const char* name) {
  if (name == nullptr) return sink_->writer().Intern("<unknown kernel>");
  auto it = kernel_names_.find(name);
  // CUPTI shares one name pointer among a kernel's records; the string check
  // guards against a pointer reused after a module unload.
  if (it != kernel_names_.end() && it->second.mangled == name) return it->second.sid;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  const uint32_t sid = sink_->writer().Intern(status == 0 && demangled ? demangled : name);
  std::free(demangled);
  kernel_names_[name] = KernelName{name, sid};
  return sid;
}

uint64_t CuptiDecoder::ExternalIdOf(uint64_t correlation_id) const {
  const ExternalSlot& slot = external_[correlation_id & (kExternalSlots - 1)];
  return slot.correlation_id == correlation_id ? slot.external_id : 0;
}

void CuptiDecoder::DecodeExternal(const CUpti_ActivityExternalCorrelation& r) {
  ExternalSlot& slot = external_[r.correlationId & (kExternalSlots - 1)];
  slot.correlation_id = r.correlationId;
  slot.external_id = r.externalId;
}

void CuptiDecoder::DecodeApi(const CUpti_ActivityAPI& r, ApiKind kind) {
  const uint32_t domain = kind == ApiKind::kRuntime ? kRuntimeDomain : kDriverDomain;
  if (filter_queries_ && IsFilteredApi(domain, r.cbid)) {
    // No GPU work, sync or event refers to a query: nothing to join.
    return sink_->FilteredApiCall(r.correlationId, static_cast<int64_t>(r.start),
                                  static_cast<int64_t>(r.end));
  }
  ApiCallRecord a;
  a.kind = kind;
  a.name_sid = ApiNameSid(domain, r.cbid);
  a.pid = r.processId;
  a.tid = r.threadId;
  a.start_ns = static_cast<int64_t>(r.start);
  a.end_ns = static_cast<int64_t>(r.end);
  a.correlation_id = r.correlationId;
  a.external_id = ExternalIdOf(r.correlationId);
  a.cbid = r.cbid;

  ApiSlot& slot = api_[r.correlationId & (kApiSlots - 1)];
  if (slot.correlation_id != r.correlationId) slot = ApiSlot{};
  slot.correlation_id = r.correlationId;
  slot.pid = a.pid;
  slot.tid = a.tid;
  (kind == ApiKind::kRuntime ? slot.runtime_cbid : slot.driver_cbid) = r.cbid;
  sink_->ApiCall(a);
  if (!waiting_api_.empty()) OnApiDecoded(slot);
}

// Where and when a GPU activity ran, and what launched it: the fields that
// kernel, memcpy and memset records share under the same names.
void CuptiDecoder::NoteContext(uint32_t context, uint32_t device) {
  if (context == kInvalid32 || device == kInvalid32) return;
  if (context_device_.size() < 4096) context_device_.emplace(context, static_cast<int32_t>(device));
}

template <typename Record>
void CuptiDecoder::FillPlacement(const Record& r, GpuActivityRecord* g) {
  NoteContext(r.contextId, r.deviceId);
  g->device = static_cast<int32_t>(r.deviceId);
  g->stream = Id32(r.streamId);
  g->start_ns = static_cast<int64_t>(r.start);
  g->end_ns = static_cast<int64_t>(r.end);
  g->correlation_id = r.correlationId;
  g->external_id = ExternalIdOf(r.correlationId);
  g->context = Id32(r.contextId);
}

void CuptiDecoder::DecodeKernel(const CUpti_ActivityKernel10& r) {
  GpuActivityRecord g;
  g.kind = GpuKind::kKernel;
  g.name_sid = KernelNameSid(r.name);
  FillPlacement(r, &g);
  g.grid_x = r.gridX;
  g.grid_y = r.gridY;
  g.grid_z = r.gridZ;
  g.block_x = r.blockX;
  g.block_y = r.blockY;
  g.block_z = r.blockZ;
  g.registers_per_thread = r.registersPerThread;
  g.shared_memory_bytes = static_cast<int64_t>(r.staticSharedMemory) + r.dynamicSharedMemory;
  g.graph_id = r.graphId;
  sink_->GpuActivity(g);
}

void CuptiDecoder::DecodeMemcpy(const CUpti_ActivityMemcpy6& r) {
  GpuActivityRecord g;
  g.kind = GpuKind::kMemcpy;
  const char* label = "";
  g.copy_kind = FoldCopyKind(r.copyKind, &label);
  // Kineto's naming: "Memcpy HtoD (Pageable -> Device)".
  g.name_sid = sink_->writer().Intern(std::string("Memcpy ") + label + " (" +
                                      MemoryKindName(r.srcKind) + " -> " +
                                      MemoryKindName(r.dstKind) + ")");
  FillPlacement(r, &g);
  g.bytes = static_cast<int64_t>(r.bytes);
  g.graph_id = r.graphId;
  sink_->GpuActivity(g);
}

void CuptiDecoder::DecodeMemset(const CUpti_ActivityMemset4& r) {
  GpuActivityRecord g;
  g.kind = GpuKind::kMemset;
  g.name_sid = sink_->writer().Intern(std::string("Memset (") +
                                      MemoryKindName(static_cast<uint8_t>(r.memoryKind)) + ")");
  FillPlacement(r, &g);
  g.bytes = static_cast<int64_t>(r.bytes);
  g.graph_id = r.graphId;
  sink_->GpuActivity(g);
}

void CuptiDecoder::DecodeCudaEvent(const CUpti_ActivityCudaEvent2& r) {
  EventRecordRecord e;
  e.correlation_id = r.correlationId;
  e.event_id = Id32(r.eventId);
  e.device = static_cast<int32_t>(r.deviceId);
  e.stream = Id32(r.streamId);
  e.context = Id32(r.contextId);
  NoteContext(r.contextId, r.deviceId);
  if (ValidSyncId(r.cudaEventSyncId)) {
    EventSlot& slot = events_[r.cudaEventSyncId & (kEventSlots - 1)];
    slot.sync_id = r.cudaEventSyncId;
    slot.correlation_id = r.correlationId;
    slot.stream = e.stream;
    slot.device = e.device;
    if (!waiting_event_.empty()) OnEventDecoded(slot);
  }
  sink_->EventRecord(e);
}

void CuptiDecoder::DecodeContext(const CUpti_ActivityContext3& r) {
  context_device_[r.contextId] = static_cast<int32_t>(r.deviceId);
}

void CuptiDecoder::DecodeDevice(const CUpti_ActivityDevice5& r) {
  DeviceRecord d;
  d.id = static_cast<int32_t>(r.id);
  d.name = r.name != nullptr ? r.name : "";
  d.vendor = "nvidia";
  d.sm_count = static_cast<int32_t>(r.numMultiprocessors);
  d.compute_major = static_cast<int32_t>(r.computeCapabilityMajor);
  d.compute_minor = static_cast<int32_t>(r.computeCapabilityMinor);
  d.total_memory_bytes = static_cast<int64_t>(r.globalMemorySize);
  d.sm_clock_khz = r.coreClockRate;
  d.memory_bandwidth_gbps = static_cast<double>(r.globalMemoryBandwidth) / 1e6;  // KB/s -> GB/s
  d.max_threads_per_sm = static_cast<int32_t>(r.maxWarpsPerMultiprocessor * r.numThreadsPerWarp);
  d.registers_per_sm = static_cast<int32_t>(r.maxRegistersPerMultiprocessor);
  d.shared_memory_per_sm_bytes = r.maxSharedMemoryPerMultiprocessor;
  d.warp_size = static_cast<int32_t>(r.numThreadsPerWarp);
  sink_->Device(d);
}

void CuptiDecoder::DecodeOverhead(const CUpti_ActivityOverhead3& r) {
  sink_->Count(TraceCounter::cupti_overhead_count, 1);
  if (r.end > r.start) sink_->Count(TraceCounter::cupti_overhead_ns, static_cast<int64_t>(r.end - r.start));
}

void CuptiDecoder::DecodeSync(const CUpti_ActivitySynchronization2& r) {
  PendingSync p;
  p.record.kind = FoldSyncKind(r.type);
  p.record.pid = pid_;
  p.record.start_ns = static_cast<int64_t>(r.start);
  p.record.end_ns = static_cast<int64_t>(r.end);
  p.record.correlation_id = r.correlationId;
  p.record.stream = Id32(r.streamId);
  p.record.event_id = Id32(r.cudaEventId);
  p.context = r.contextId;
  if ((p.record.kind == SyncKind::kEvent || p.record.kind == SyncKind::kStreamWaitEvent) &&
      ValidSyncId(r.cudaEventSyncId)) {
    p.event_sync_id = r.cudaEventSyncId;
  }
  if (TryResolve(&p)) return EmitSync(&p, false);
  pending_.push_back(p);
  const PendingList::iterator it = std::prev(pending_.end());
  if (!it->have_thread && it->record.correlation_id != 0) waiting_api_.emplace(it->record.correlation_id, it);
  if (it->event_sync_id != 0 && !it->have_event) waiting_event_.emplace(it->event_sync_id, it);
  if (pending_.size() > kMaxPendingSyncs) {
    const PendingList::iterator oldest = pending_.begin();
    Unindex(oldest);
    EmitSync(&*oldest, true);
    pending_.erase(oldest);
  }
}

void CuptiDecoder::FillThread(const ApiSlot& api, PendingSync* p) const {
  p->record.pid = api.pid;
  p->record.tid = api.tid;
  if (p->record.kind == SyncKind::kContext &&
      api.runtime_cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020) {
    p->record.kind = SyncKind::kDevice;
  }
  p->have_thread = true;
}

void CuptiDecoder::FillEvent(const EventSlot& ev, PendingSync* p) const {
  p->record.wait_on_stream = ev.stream;
  p->record.event_record_correlation_id = ev.correlation_id;
  if (!p->have_device) {
    // The recording stream's device: a stream waits on events of its own
    // device in practice, and CUDA 13 gives no other when the context is
    // unknown.
    p->record.device = ev.device;
  }
  p->have_event = true;
}

bool CuptiDecoder::TryResolve(PendingSync* p) {
  if (!p->have_device) {
    auto ctx = context_device_.find(p->context);
    if (ctx != context_device_.end()) {
      p->record.device = ctx->second;
      p->have_device = true;
    }
  }
  if (!p->have_thread && p->record.correlation_id != 0) {
    const ApiSlot& api = api_[p->record.correlation_id & (kApiSlots - 1)];
    if (api.correlation_id == p->record.correlation_id) FillThread(api, p);
  }
  if (p->event_sync_id != 0 && !p->have_event) {
    const EventSlot& ev = events_[p->event_sync_id & (kEventSlots - 1)];
    if (ev.sync_id == p->event_sync_id) FillEvent(ev, p);
  }
  return p->Complete();
}

void CuptiDecoder::OnApiDecoded(const ApiSlot& api) {
  auto [lo, hi] = waiting_api_.equal_range(api.correlation_id);
  if (lo == hi) return;
  std::vector<PendingList::iterator> ready;
  for (auto w = lo; w != hi; ++w) {
    FillThread(api, &*w->second);
    ready.push_back(w->second);
  }
  waiting_api_.erase(lo, hi);
  EmitResolved(ready);
}

void CuptiDecoder::OnEventDecoded(const EventSlot& ev) {
  auto [lo, hi] = waiting_event_.equal_range(ev.sync_id);
  if (lo == hi) return;
  std::vector<PendingList::iterator> ready;
  for (auto w = lo; w != hi; ++w) {
    FillEvent(ev, &*w->second);
    ready.push_back(w->second);
  }
  waiting_event_.erase(lo, hi);
  EmitResolved(ready);
}

void CuptiDecoder::EmitResolved(const std::vector<PendingList::iterator>& filled) {
  for (const PendingList::iterator it : filled) {
    if (!TryResolve(&*it)) continue;
    Unindex(it);
    EmitSync(&*it, false);
    pending_.erase(it);
  }
}

void CuptiDecoder::Unindex(PendingList::iterator it) {
  const auto erase = [&](std::unordered_multimap<uint64_t, PendingList::iterator>* index,
                         uint64_t key) {
    auto [lo, hi] = index->equal_range(key);
    for (auto e = lo; e != hi; ++e) {
      if (e->second == it) {
        index->erase(e);
        return;
      }
    }
  };
  if (it->record.correlation_id != 0) erase(&waiting_api_, it->record.correlation_id);
  if (it->event_sync_id != 0) erase(&waiting_event_, it->event_sync_id);
}

void CuptiDecoder::EmitSync(PendingSync* p, bool final) {
  if (final) {
    if (!p->have_thread) sink_->Count(TraceCounter::sync_thread_unknown, 1);
    if (p->event_sync_id != 0 && !p->have_event) sink_->Count(TraceCounter::sync_event_unresolved, 1);
  }
  sink_->Sync(p->record);
}

void CuptiDecoder::ResolvePending(bool final) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (TryResolve(&*it) || final) {
      Unindex(it);
      EmitSync(&*it, final);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace reverie::collector
