// File: collector/cupti_api.h
//
// CuptiApi: the CUPTI functions the collector calls, as a table of function
// pointers filled by dlopen()/dlsym() of libcupti.
//
// Why not link libcupti: a preloaded collector must leave a program that
// never touches CUDA exactly as it was, so libcupti is loaded only once the
// collector really starts; and tests install a table of fakes
// (SetCuptiApiForTesting in collector.h) to drive the whole runtime --
// buffer callbacks, flushes, "another subscriber" errors -- without a GPU.
//
// Optional entries (newer CUPTI only) may be null; callers check.
#ifndef REVERIE_COLLECTOR_CUPTI_API_H_
#define REVERIE_COLLECTOR_CUPTI_API_H_

#include <cupti.h>

#include <string>

namespace reverie::collector {

struct CuptiApi {
  CUptiResult (*GetVersion)(uint32_t* version) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult result, const char** str) = nullptr;
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                           void* userdata) = nullptr;
  // Optional (CUDA 12.6+): names the previous subscriber on failure.
  CUptiResult (*SubscribeV2)(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                             void* userdata, CUpti_SubscriberParams* params) = nullptr;
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle subscriber) = nullptr;
  CUptiResult (*EnableCallback)(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) = nullptr;
  CUptiResult (*EnableDomain)(uint32_t enable, CUpti_SubscriberHandle subscriber,
                              CUpti_CallbackDomain domain) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain domain, uint32_t cbid,
                                 const char** name) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind kind) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t* buffer, size_t valid_size,
                                       CUpti_Activity** record) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext context, uint32_t stream_id,
                                              size_t* dropped) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t flag) = nullptr;
  CUptiResult (*ActivityFlushPeriod)(uint32_t time_ms) = nullptr;
  CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind kind,
                                                   uint64_t id) = nullptr;
  CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind kind,
                                                  uint64_t* last_id) = nullptr;
  // Optional (CUDA 12.?+): puts CUPTI's records on our clock.
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc fn) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t* timestamp) = nullptr;
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType type) = nullptr;
  // Optional (CUDA 12.6+): per-call control of RUNTIME/DRIVER records.
  CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId cbid, uint8_t enable) = nullptr;
  CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId cbid, uint8_t enable) = nullptr;

  // Path of the library the table came from ("" for fakes).
  std::string library_path;
};

// Loads libcupti: `explicit_path` when non-empty, else an already loaded
// libcupti.so.<major>, else the copy of the toolkit the collector was built
// against, else the dynamic loader's search path. On failure returns false
// and sets `error` to one line.
bool LoadCuptiApi(const std::string& explicit_path, CuptiApi* api, std::string* error);

// "CUPTI_ERROR_..." text for a result, using the table when it can.
std::string CuptiErrorString(const CuptiApi& api, CUptiResult result);

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_CUPTI_API_H_
