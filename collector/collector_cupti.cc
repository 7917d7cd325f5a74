// The CUPTI side of the Collector: subscription, activity kinds, the
// buffer callbacks and the API/NVTX callbacks. Every function CUPTI calls is
// a noexcept trampoline that catches everything: an exception must never
// unwind into CUPTI or the driver.
#include <cupti_driver_cbid.h>
#include <dlfcn.h>
#include <cupti_runtime_cbid.h>

#include <atomic>
#include <cstdlib>

#include "collector/collector_runtime.h"

namespace reverie::collector {
namespace {

// CUPTI's buffer and timestamp callbacks carry no user data; this is the
// collector they belong to (the one that registered them last).
std::atomic<Collector*> g_buffer_owner{nullptr};

void CUPTIAPI BufferRequestedTrampoline(uint8_t** buffer, size_t* size,
                                        size_t* max_records) noexcept {
  try {
    if (Collector* c = g_buffer_owner.load(std::memory_order_acquire)) {
      c->OnBufferRequested(buffer, size, max_records);
      return;
    }
  } catch (...) {
  }
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompletedTrampoline(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                        size_t size, size_t valid_size) noexcept {
  try {
    if (Collector* c = g_buffer_owner.load(std::memory_order_acquire)) {
      c->OnBufferCompleted(context, stream_id, buffer, size, valid_size);
    }
  } catch (...) {
  }
}

void CUPTIAPI CallbackTrampoline(void* userdata, CUpti_CallbackDomain domain,
                                 CUpti_CallbackId cbid, const void* data) noexcept {
  try {
    if (userdata != nullptr) static_cast<Collector*>(userdata)->OnCallback(domain, cbid, data);
  } catch (...) {
  }
}

uint64_t CUPTIAPI TimestampTrampoline() noexcept { return MonotonicNowNs(); }

struct KindInfo {
  CUpti_ActivityKind kind;
  const char* name;
  bool essential;
};

// DEVICE first: CUPTI reports devices only if enabled before contexts exist.
constexpr KindInfo kKinds[] = {
    {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE", false},
    {CUPTI_ACTIVITY_KIND_CONTEXT, "CONTEXT", false},
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", true},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", false},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", false},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", true},
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", false},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", false},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION", false},
    {CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT", false},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD", false},
};

}  // namespace

bool Collector::StartCupti(std::string* error) {
  if (fake_api_ != nullptr) {
    api_ = *fake_api_;
  } else if (!LoadCuptiApi(config_.cupti_lib, &api_, error)) {
    return false;
  }
  uint32_t version = 0;
  if (api_.GetVersion(&version) != CUPTI_SUCCESS) version = 0;
  // Older CUPTIs crash when bufferRequested hands back no buffer.
  allow_null_buffer_ = version >= 27;

  // Subscribe before changing anything: when another tool owns CUPTI (the
  // PyTorch profiler, Nsight) nothing of its setup may change.
  CUptiResult r;
  char previous[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {0};
  if (api_.SubscribeV2 != nullptr) {
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "reverie";
    params.oldSubscriberName = previous;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    r = api_.SubscribeV2(&subscriber_, &CallbackTrampoline, this, &params);
  } else {
    r = api_.Subscribe(&subscriber_, &CallbackTrampoline, this);
  }
  if (r != CUPTI_SUCCESS) {
    *error = CuptiErrorString(api_, r);
    if (r != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED &&
        ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) == nullptr) {
      // CUPTI loads the driver itself; if it is still absent there is none.
      *error += ": no CUDA driver (libcuda.so.1) on this machine";
    }
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      *error += ": another CUPTI client is active";
      if (previous[0] != '\0') {
        error->append(" (").append(previous).append(")");
      }
    }
    subscriber_ = nullptr;
    return false;
  }
  if (api_.SetThreadIdType != nullptr) {
    // Thread ids as gettid() reports them, like the markers' ids.
    api_.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  }
  use_cupti_clock_ = api_.ActivityRegisterTimestampCallback == nullptr ||
                     api_.ActivityRegisterTimestampCallback(&TimestampTrampoline) != CUPTI_SUCCESS;

  g_buffer_owner.store(this, std::memory_order_release);
  r = api_.ActivityRegisterCallbacks(&BufferRequestedTrampoline, &BufferCompletedTrampoline);
  if (r != CUPTI_SUCCESS) {
    *error = "cuptiActivityRegisterCallbacks: " + CuptiErrorString(api_, r);
    api_.Unsubscribe(subscriber_);
    subscriber_ = nullptr;
    return false;
  }
  if (config_.cupti_flush_period_ms > 0 && api_.ActivityFlushPeriod != nullptr) {
    api_.ActivityFlushPeriod(static_cast<uint32_t>(config_.cupti_flush_period_ms));
  }
  for (const KindInfo& k : kKinds) {
    if (k.kind == CUPTI_ACTIVITY_KIND_DRIVER && !config_.driver_api) continue;
    r = api_.ActivityEnable(k.kind);
    if (r == CUPTI_SUCCESS) continue;
    if (k.essential) {
      error->assign("cuptiActivityEnable(").append(k.name).append("): ");
      error->append(CuptiErrorString(api_, r));
      EnableActivities(false);
      api_.Unsubscribe(subscriber_);
      subscriber_ = nullptr;
      return false;
    }
    if (!unavailable_kinds_.empty()) unavailable_kinds_ += ',';
    unavailable_kinds_ += k.name;
  }
  ApplyApiFilter();
  // Flush points: what the CUPTI trace-injection sample does, so that
  // bounded regions (cudaProfilerStop) and device resets lose nothing.
  api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                      CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
  api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                      CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
  api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                      CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  api_.EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_STATE);
  if (config_.nvtx) {
    api_.EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_NVTX);
    // NVTX hands its calls to the library named here (CUPTI) on its first
    // call; only set it when the user has not chosen another tool.
    if (std::getenv("NVTX_INJECTION64_PATH") == nullptr && !api_.library_path.empty()) {
      ::setenv("NVTX_INJECTION64_PATH", api_.library_path.c_str(), 0);
    }
  }
  return true;
}

void Collector::ApplyApiFilter() {
  switch (config_.api_filter) {
    case ApiFilter::kNone:
      api_filter_description_ = "none";
      return;
    case ApiFilter::kQueries:
      api_filter_description_ = "queries (dropped when decoded, counted as api_calls_filtered)";
      return;
    case ApiFilter::kCupti:
      break;
  }
  // After the RUNTIME/DRIVER kinds were enabled: enabling a kind resets
  // these per-call settings. Whatever CUPTI still records is dropped by
  // the decoder, so a failure here only costs overhead.
  bool ok = api_.ActivityEnableRuntimeApi != nullptr && api_.ActivityEnableDriverApi != nullptr;
  for (const uint32_t domain : {kRuntimeDomain, kDriverDomain}) {
    size_t n = 0;
    const uint32_t* ids = FilteredApis(domain, &n);
    for (size_t i = 0; ok && i < n; ++i) {
      const CUptiResult r = domain == kRuntimeDomain ? api_.ActivityEnableRuntimeApi(ids[i], 0)
                                                     : api_.ActivityEnableDriverApi(ids[i], 0);
      ok = r == CUPTI_SUCCESS;
    }
  }
  api_filter_description_ = ok ? "queries (not recorded by CUPTI, not counted)"
                               : "queries (CUPTI cannot skip them: dropped when decoded, counted)";
}

void Collector::DetachBufferCallbacks() {
  Collector* self = this;
  g_buffer_owner.compare_exchange_strong(self, nullptr);
}

void Collector::EnableActivities(bool enable) {
  for (const KindInfo& k : kKinds) {
    if (enable) {
      api_.ActivityEnable(k.kind);
    } else {
      api_.ActivityDisable(k.kind);
    }
  }
}

void Collector::StopCuptiCollection() {
  // Caller set cupti_stopped_. No lock of ours is held here.
  api_.ActivityFlushAll(0);
  EnableActivities(false);
  RequestWriterFlush(/*wait=*/false);
}

void Collector::OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  uint8_t* p = pool_ != nullptr ? pool_->Acquire() : nullptr;
  if (p == nullptr) {
    pool_exhausted_.fetch_add(1, std::memory_order_relaxed);
    if (!allow_null_buffer_ && pool_ != nullptr) {
      p = pool_->AllocateFallback();
      if (p != nullptr) fallback_buffers_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  *buffer = p;
  *size = p != nullptr ? pool_->buffer_bytes() : 0;
  *max_records = 0;  // as many as fit
}

void Collector::OnBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                  size_t /*size*/, size_t valid_size) {
  // No lock of ours is held: querying dropped records takes CUPTI's lock.
  size_t dropped = 0;
  if (api_.ActivityGetNumDroppedRecords != nullptr &&
      api_.ActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    dropped_records_.fetch_add(static_cast<int64_t>(dropped), std::memory_order_relaxed);
  }
  if (buffer == nullptr) return;
  if (valid_size == 0 || completed_ == nullptr || !completed_->TryPush({buffer, valid_size})) {
    if (valid_size > 0) buffers_lost_.fetch_add(1, std::memory_order_relaxed);
    if (pool_ != nullptr) pool_->Release(buffer);
    return;
  }
  work_pending_.store(true, std::memory_order_release);
  wake_cv_.notify_one();
}

void Collector::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (!IsCollecting() || data == nullptr) return;
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
    case CUPTI_CB_DOMAIN_DRIVER_API: {
      const auto* info = static_cast<const CUpti_CallbackData*>(data);
      if (info->callbackSite != CUPTI_API_ENTER) return;
      const bool reset = domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                         cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020;
      FlushImpl(/*forced=*/reset);
      return;
    }
    case CUPTI_CB_DOMAIN_NVTX: {
      const NvtxAction a =
          DecodeNvtxCallback(cbid, static_cast<const CUpti_NvtxData*>(data), &nvtx_strings_);
      switch (a.type) {
        case NvtxAction::kPush:
          return PushRange(RangeKind::kUserAnnotation, a.name.c_str(), 0);
        case NvtxAction::kPop:
          return LayerPop();
        case NvtxAction::kStart:
        case NvtxAction::kEnd:
          return NvtxStartEnd(a.type == NvtxAction::kStart, a.id, a.name);
        case NvtxAction::kNone:
          return;
      }
      return;
    }
    case CUPTI_CB_DOMAIN_STATE:
      if (cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
        cupti_errors_.fetch_add(1, std::memory_order_relaxed);
        RequestWriterFlush(/*wait=*/false);
      }
      return;
    default:
      return;
  }
}

}  // namespace reverie::collector
