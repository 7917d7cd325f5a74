// File: collector/api_filter.h
//
// Which CUDA API calls the collector leaves out of the trace
// (REVERIE_API_FILTER, collector/README.md).
//
// Why: PyTorch makes ~7,500 cudaGetDevice and ~2,500 cuDevicePrimaryCtxGetState
// calls per ResNet-50 step (H100, torch 2.11, issue 32): 13,000 recorded
// calls per step where the PyTorch profiler keeps 1,660. They launch
// nothing, wait for nothing and order nothing, so they add no dependency;
// but each becomes a CPU task (8x the graph's CPU side), their time counts
// as API time instead of framework time, and scripts that treat runtime
// calls (cuda_graphs.lua) see calls Kineto traces never have.
//
// The runtime list is Kineto's own (libkineto's blocklist: cudaGetDevice,
// cudaSetDevice, cudaGetLastError, cudaEventCreate[WithFlags],
// cudaEventDestroy), so runtime calls per step match a torch.profiler
// trace. Kineto keeps only kernel launches of the driver API; here every
// driver call is kept except pure queries (device, context, stream,
// function and pointer attributes, error strings, capture status,
// occupancy), so a driver-level copy, sync, allocation or launch (Triton,
// NCCL, cuBLASLt) stays.
#ifndef REVERIE_COLLECTOR_API_FILTER_H_
#define REVERIE_COLLECTOR_API_FILTER_H_

#include <cstddef>
#include <cstdint>

namespace reverie::collector {

enum class ApiFilter {
  kNone,     // every call recorded
  kQueries,  // the calls below decoded and dropped (counted: api_calls_filtered)
  kCupti,    // the calls below never recorded by CUPTI (cheapest; not counted)
};

// CUPTI callback domains, as in cupti_callbacks.h.
inline constexpr uint32_t kDriverDomain = 1;
inline constexpr uint32_t kRuntimeDomain = 2;

// True when the call `cbid` of `domain` is one the filter leaves out.
bool IsFilteredApi(uint32_t domain, uint32_t cbid);

// The filtered callback ids of a domain (for cuptiActivityEnable*Api).
const uint32_t* FilteredApis(uint32_t domain, size_t* count);

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_API_FILTER_H_
