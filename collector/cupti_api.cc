#include "collector/cupti_api.h"

#include <dlfcn.h>

#include <string>
#include <vector>

#ifndef REVERIE_CUPTI_LIB_DIR
#define REVERIE_CUPTI_LIB_DIR ""
#endif

namespace reverie::collector {
namespace {

// CUPTI API versions moved to <major>*10000 + n with CUDA 13; the activity
// record layouts the decoder reads (Kernel10, Memcpy6, ...) are those.
constexpr uint32_t kMinCuptiVersion = (CUPTI_API_VERSION / 10000) * 10000;

template <typename F>
bool Bind(void* handle, const char* name, F* out, bool required, std::string* missing) {
  *out = reinterpret_cast<F>(::dlsym(handle, name));
  if (*out == nullptr && required) {
    *missing = name;
    return false;
  }
  return true;
}

bool BindAll(void* handle, CuptiApi* api, std::string* missing) {
  return Bind(handle, "cuptiGetVersion", &api->GetVersion, true, missing) &&
         Bind(handle, "cuptiGetResultString", &api->GetResultString, true, missing) &&
         Bind(handle, "cuptiSubscribe", &api->Subscribe, true, missing) &&
         Bind(handle, "cuptiSubscribe_v2", &api->SubscribeV2, false, missing) &&
         Bind(handle, "cuptiUnsubscribe", &api->Unsubscribe, true, missing) &&
         Bind(handle, "cuptiEnableCallback", &api->EnableCallback, true, missing) &&
         Bind(handle, "cuptiEnableDomain", &api->EnableDomain, true, missing) &&
         Bind(handle, "cuptiGetCallbackName", &api->GetCallbackName, true, missing) &&
         Bind(handle, "cuptiActivityEnable", &api->ActivityEnable, true, missing) &&
         Bind(handle, "cuptiActivityDisable", &api->ActivityDisable, true, missing) &&
         Bind(handle, "cuptiActivityRegisterCallbacks", &api->ActivityRegisterCallbacks, true,
              missing) &&
         Bind(handle, "cuptiActivityGetNextRecord", &api->ActivityGetNextRecord, true, missing) &&
         Bind(handle, "cuptiActivityGetNumDroppedRecords", &api->ActivityGetNumDroppedRecords,
              true, missing) &&
         Bind(handle, "cuptiActivityFlushAll", &api->ActivityFlushAll, true, missing) &&
         Bind(handle, "cuptiActivityFlushPeriod", &api->ActivityFlushPeriod, false, missing) &&
         Bind(handle, "cuptiActivityPushExternalCorrelationId",
              &api->ActivityPushExternalCorrelationId, true, missing) &&
         Bind(handle, "cuptiActivityPopExternalCorrelationId",
              &api->ActivityPopExternalCorrelationId, true, missing) &&
         Bind(handle, "cuptiActivityRegisterTimestampCallback",
              &api->ActivityRegisterTimestampCallback, false, missing) &&
         Bind(handle, "cuptiGetTimestamp", &api->GetTimestamp, true, missing) &&
         Bind(handle, "cuptiSetThreadIdType", &api->SetThreadIdType, false, missing) &&
         Bind(handle, "cuptiActivityEnableRuntimeApi", &api->ActivityEnableRuntimeApi, false,
              missing) &&
         Bind(handle, "cuptiActivityEnableDriverApi", &api->ActivityEnableDriverApi, false,
              missing);
}

}  // namespace

bool LoadCuptiApi(const std::string& explicit_path, CuptiApi* api, std::string* error) {
  const std::string soname = "libcupti.so." + std::to_string(CUPTI_API_VERSION / 10000);
  void* handle = nullptr;
  std::string tried;
  if (!explicit_path.empty()) {
    handle = ::dlopen(explicit_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    tried = explicit_path;
  } else {
    // A copy the process already loaded (PyTorch ships one) must be reused:
    // two CUPTIs in one process would fight over the driver's callbacks.
    handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    const std::string dir = REVERIE_CUPTI_LIB_DIR;
    std::vector<std::string> candidates;
    if (!dir.empty()) candidates.push_back(dir + "/" + soname);
    candidates.push_back(soname);
    candidates.push_back("libcupti.so");
    for (const std::string& c : candidates) {
      if (handle != nullptr) break;
      handle = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      tried += (tried.empty() ? "" : ", ") + c;
    }
  }
  if (handle == nullptr) {
    const char* why = ::dlerror();
    *error = "cannot load libcupti (tried " + tried + ")" + (why ? std::string(": ") + why : "");
    return false;
  }
  CuptiApi loaded;
  std::string missing;
  if (!BindAll(handle, &loaded, &missing)) {
    *error = "libcupti lacks " + missing + " (too old?)";
    ::dlclose(handle);
    return false;
  }
  uint32_t version = 0;
  if (loaded.GetVersion(&version) != CUPTI_SUCCESS || version < kMinCuptiVersion) {
    *error = "libcupti API version " + std::to_string(version) + " is older than " +
             std::to_string(kMinCuptiVersion) + ", the one reverie was built for";
    ::dlclose(handle);
    return false;
  }
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(loaded.GetVersion), &info) != 0 && info.dli_fname) {
    loaded.library_path = info.dli_fname;
  }
  // The handle stays open for the life of the process (CUPTI must not be
  // unloaded under the driver).
  *api = loaded;
  return true;
}

std::string CuptiErrorString(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.GetResultString != nullptr && api.GetResultString(result, &text) == CUPTI_SUCCESS &&
      text != nullptr) {
    return text;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

}  // namespace reverie::collector
