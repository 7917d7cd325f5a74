// File: collector/nvtx_decode.h
//
// What one CUPTI NVTX-domain callback means for the trace: a nested range
// opening or closing (nvtxRangePush*/Pop, nvtxDomainRangePush*/Pop), a
// non-nested range starting or ending (nvtxRangeStart*/End), or a string
// registration to remember. Decoding is separate from the collector so that
// tests build the callback payloads (generated_nvtx_meta.h structs)
// themselves.
//
// Registered strings (NVTX_MESSAGE_TYPE_REGISTERED) are looked up through
// NvtxStrings, which is thread-safe: NVTX callbacks arrive on any thread.
#ifndef REVERIE_COLLECTOR_NVTX_DECODE_H_
#define REVERIE_COLLECTOR_NVTX_DECODE_H_

#include <cupti.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace reverie::collector {

class NvtxStrings {
 public:
  void Register(const void* handle, std::string text) {
    std::lock_guard<std::mutex> lock(mu_);
    strings_[handle] = std::move(text);
  }
  std::string Lookup(const void* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = strings_.find(handle);
    return it == strings_.end() ? std::string() : it->second;
  }

 private:
  std::mutex mu_;
  std::unordered_map<const void*, std::string> strings_;
};

struct NvtxAction {
  enum Type { kNone, kPush, kPop, kStart, kEnd } type = kNone;
  std::string name;  // kPush / kStart
  uint64_t id = 0;   // kStart / kEnd: the NVTX range id
};

// Interprets one NVTX callback. Registers strings as a side effect.
NvtxAction DecodeNvtxCallback(CUpti_CallbackId cbid, const CUpti_NvtxData* data,
                              NvtxStrings* strings);

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_NVTX_DECODE_H_
