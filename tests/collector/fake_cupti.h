// File: tests/collector/fake_cupti.h
//
// A CUPTI stand-in for the collector runtime tests: a CuptiApi table whose
// functions record what the collector asked for and let the test play
// CUPTI's part (request a buffer, fill it with real activity record structs,
// complete it, possibly from several threads; fire API/NVTX callbacks).
//
// Buffer layout (the fake's own; real CUPTI's is opaque): each record is
// preceded by an 8-byte header holding its size, and records start at
// 8-byte boundaries. FakeGetNextRecord walks that layout exactly as
// cuptiActivityGetNextRecord walks CUPTI's.
#ifndef REVERIE_TESTS_COLLECTOR_FAKE_CUPTI_H_
#define REVERIE_TESTS_COLLECTOR_FAKE_CUPTI_H_

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "collector/cupti_api.h"

namespace reverie::collector::fake {

struct FakeState {
  CUptiResult subscribe_result = CUPTI_SUCCESS;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::atomic<int> subscribes{0};
  std::atomic<int> pushes{0};
  std::atomic<int> pops{0};
  std::atomic<int> flushes{0};
  std::atomic<int> forced_flushes{0};
  std::atomic<int> enables{0};
  std::atomic<int> disables{0};
  std::atomic<int> nvtx_domain_enabled{0};
  std::atomic<int> timestamp_callbacks{0};
  std::atomic<size_t> dropped_to_report{0};
  std::atomic<int> runtime_apis_disabled{0};
  std::atomic<int> driver_apis_disabled{0};

  // A buffer requested but not completed: FlushAll completes it, as CUPTI
  // hands over partially filled buffers on a flush.
  std::mutex held_mu;
  std::vector<std::pair<uint8_t*, size_t>> held;
};

inline FakeState*& State() {
  static FakeState* state = nullptr;
  return state;
}

inline CUptiResult GetVersion(uint32_t* v) {
  *v = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}
inline CUptiResult GetResultString(CUptiResult r, const char** s) {
  *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
           ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
           : (r == CUPTI_ERROR_NOT_INITIALIZED ? "CUPTI_ERROR_NOT_INITIALIZED" : "CUPTI_ERROR_UNKNOWN");
  return CUPTI_SUCCESS;
}
inline CUptiResult Subscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc f, void* u) {
  State()->subscribes++;
  if (State()->subscribe_result != CUPTI_SUCCESS) return State()->subscribe_result;
  *s = reinterpret_cast<CUpti_SubscriberHandle>(0x1);
  State()->callback = f;
  State()->userdata = u;
  return CUPTI_SUCCESS;
}
inline CUptiResult Unsubscribe(CUpti_SubscriberHandle) { return CUPTI_SUCCESS; }
inline CUptiResult EnableCallback(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                  CUpti_CallbackId) {
  return CUPTI_SUCCESS;
}
inline CUptiResult EnableDomain(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain d) {
  if (d == CUPTI_CB_DOMAIN_NVTX && enable) State()->nvtx_domain_enabled++;
  return CUPTI_SUCCESS;
}
inline CUptiResult GetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char** name) {
  if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == 211) {
    *name = "cudaLaunchKernel_v7000";
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}
inline CUptiResult ActivityEnable(CUpti_ActivityKind) {
  State()->enables++;
  return CUPTI_SUCCESS;
}
inline CUptiResult ActivityDisable(CUpti_ActivityKind) {
  State()->disables++;
  return CUPTI_SUCCESS;
}
inline CUptiResult RegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                     CUpti_BuffersCallbackCompleteFunc c) {
  State()->request = r;
  State()->complete = c;
  return CUPTI_SUCCESS;
}
inline CUptiResult GetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  size_t offset = 0;
  if (*record != nullptr) {
    const uint8_t* current = reinterpret_cast<uint8_t*>(*record);
    uint64_t size = 0;
    std::memcpy(&size, current - 8, 8);
    offset = static_cast<size_t>(current - buffer) + ((size + 7) & ~uint64_t{7});
  }
  if (offset + 8 > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset + 8);
  return CUPTI_SUCCESS;
}
inline CUptiResult GetNumDropped(CUcontext, uint32_t, size_t* dropped) {
  *dropped = State()->dropped_to_report.exchange(0);
  return CUPTI_SUCCESS;
}
inline CUptiResult FlushAll(uint32_t flag) {
  State()->flushes++;
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) State()->forced_flushes++;
  std::vector<std::pair<uint8_t*, size_t>> held;
  {
    std::lock_guard<std::mutex> lock(State()->held_mu);
    held.swap(State()->held);
  }
  for (auto& [buffer, valid] : held) State()->complete(nullptr, 0, buffer, 0, valid);
  return CUPTI_SUCCESS;
}
inline CUptiResult Push(CUpti_ExternalCorrelationKind, uint64_t) {
  State()->pushes++;
  return CUPTI_SUCCESS;
}
inline CUptiResult Pop(CUpti_ExternalCorrelationKind, uint64_t*) {
  State()->pops++;
  return CUPTI_SUCCESS;
}
inline CUptiResult RegisterTimestamp(CUpti_TimestampCallbackFunc) {
  State()->timestamp_callbacks++;
  return CUPTI_SUCCESS;
}
inline CUptiResult GetTimestamp(uint64_t* t) {
  *t = 0;
  return CUPTI_SUCCESS;
}
inline CUptiResult SetThreadIdType(CUpti_ActivityThreadIdType) { return CUPTI_SUCCESS; }
inline CUptiResult EnableRuntimeApi(CUpti_CallbackId, uint8_t enable) {
  if (!enable) State()->runtime_apis_disabled++;
  return CUPTI_SUCCESS;
}
inline CUptiResult EnableDriverApi(CUpti_CallbackId, uint8_t enable) {
  if (!enable) State()->driver_apis_disabled++;
  return CUPTI_SUCCESS;
}

inline CuptiApi MakeFakeApi() {
  CuptiApi api;
  api.GetVersion = &GetVersion;
  api.GetResultString = &GetResultString;
  api.Subscribe = &Subscribe;
  api.Unsubscribe = &Unsubscribe;
  api.EnableCallback = &EnableCallback;
  api.EnableDomain = &EnableDomain;
  api.GetCallbackName = &GetCallbackName;
  api.ActivityEnable = &ActivityEnable;
  api.ActivityDisable = &ActivityDisable;
  api.ActivityRegisterCallbacks = &RegisterCallbacks;
  api.ActivityGetNextRecord = &GetNextRecord;
  api.ActivityGetNumDroppedRecords = &GetNumDropped;
  api.ActivityFlushAll = &FlushAll;
  api.ActivityPushExternalCorrelationId = &Push;
  api.ActivityPopExternalCorrelationId = &Pop;
  api.ActivityRegisterTimestampCallback = &RegisterTimestamp;
  api.GetTimestamp = &GetTimestamp;
  api.SetThreadIdType = &SetThreadIdType;
  api.ActivityEnableRuntimeApi = &EnableRuntimeApi;
  api.ActivityEnableDriverApi = &EnableDriverApi;
  return api;
}

// Appends records to a buffer in the fake layout.
class RecordWriter {
 public:
  RecordWriter(uint8_t* buffer, size_t size) : buffer_(buffer), size_(size) {}
  template <typename R>
  bool Add(const R& record) {
    const size_t need = 8 + ((sizeof(R) + 7) & ~size_t{7});
    if (used_ + need > size_) return false;
    const uint64_t n = sizeof(R);
    std::memcpy(buffer_ + used_, &n, 8);
    std::memcpy(buffer_ + used_ + 8, &record, sizeof(R));
    used_ += need;
    return true;
  }
  size_t used() const { return used_; }

 private:
  uint8_t* buffer_;
  size_t size_;
  size_t used_ = 0;
};

}  // namespace reverie::collector::fake

#endif  // REVERIE_TESTS_COLLECTOR_FAKE_CUPTI_H_
