#include "collector/device_query.h"

#include <dlfcn.h>

namespace reverie::collector {
namespace {

template <typename F>
bool Bind(void* handle, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(::dlsym(handle, name));
  return *fn != nullptr;
}

}  // namespace

bool LoadLoadedDriver(DriverApi* api) {
  void* handle = ::dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
  if (handle == nullptr) return false;
  // The handle keeps a reference the process already held; it is never
  // closed (the driver stays loaded for the process's life anyway).
  return Bind(handle, "cuDeviceGetCount", &api->DeviceGetCount) &&
         Bind(handle, "cuDeviceGet", &api->DeviceGet) &&
         Bind(handle, "cuDeviceGetName", &api->DeviceGetName) &&
         Bind(handle, "cuDeviceTotalMem_v2", &api->DeviceTotalMem) &&
         Bind(handle, "cuDeviceGetAttribute", &api->DeviceGetAttribute);
}

std::vector<DeviceRecord> QueryDevices(const DriverApi& api) {
  std::vector<DeviceRecord> out;
  if (api.DeviceGetCount == nullptr || api.DeviceGet == nullptr || api.DeviceGetName == nullptr ||
      api.DeviceTotalMem == nullptr || api.DeviceGetAttribute == nullptr) {
    return out;
  }
  int count = 0;
  if (api.DeviceGetCount(&count) != CUDA_SUCCESS || count <= 0) return out;
  if (count > 64) count = 64;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice dev = 0;
    if (api.DeviceGet(&dev, ordinal) != CUDA_SUCCESS) return {};
    char name[256] = {0};
    if (api.DeviceGetName(name, static_cast<int>(sizeof name) - 1, dev) != CUDA_SUCCESS) return {};
    size_t bytes = 0;
    if (api.DeviceTotalMem(&bytes, dev) != CUDA_SUCCESS) bytes = 0;
    // An attribute the driver does not report stays 0 (unknown).
    const auto attr = [&](CUdevice_attribute a) -> int {
      int v = 0;
      return api.DeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS && v > 0 ? v : 0;
    };
    DeviceRecord d;
    d.id = ordinal;
    d.name = name;
    d.vendor = "nvidia";
    d.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d.compute_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d.compute_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d.total_memory_bytes = static_cast<int64_t>(bytes);
    d.sm_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d.memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    d.memory_bus_width_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    if (d.memory_clock_khz > 0 && d.memory_bus_width_bits > 0) {
      d.memory_bandwidth_gbps = 2.0 * static_cast<double>(d.memory_clock_khz) * 1e3 *
                                d.memory_bus_width_bits / 8.0 / 1e9;
    }
    d.max_threads_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    d.registers_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    d.shared_memory_per_sm_bytes = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    d.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace reverie::collector
