// File: collector/device_query.h
//
// The GPUs' properties straight from the CUDA driver, for the trace header.
//
// Why: CUPTI writes DEVICE records only for contexts created after its
// DEVICE activity was enabled. reverie_torch (and any program that calls
// reverie_start after touching CUDA) starts the collector once PyTorch's
// context exists, so without this the trace would name no GPU and neither
// the facts nor the hardware model would know it.
//
// How: the driver the process already loaded (dlopen of libcuda.so.1 with
// RTLD_NOLOAD: nothing is loaded that was not, libcudart is never linked),
// and only read-only device queries (cuDeviceGetCount/Get/GetName/TotalMem/
// GetAttribute). cuInit is never called: when the driver is not initialized
// the queries fail, nothing is recorded, and CUPTI's DEVICE records will
// come with the first context instead. Not to be called from inside cuInit
// (the injection entry point).
#ifndef REVERIE_COLLECTOR_DEVICE_QUERY_H_
#define REVERIE_COLLECTOR_DEVICE_QUERY_H_

#include <cuda.h>

#include <cstddef>
#include <string>
#include <vector>

#include "collector/records.h"

namespace reverie::collector {

// The driver functions used, as a table (tests install fakes).
struct DriverApi {
  CUresult (*DeviceGetCount)(int* count) = nullptr;
  CUresult (*DeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*DeviceGetName)(char* name, int len, CUdevice device) = nullptr;
  CUresult (*DeviceTotalMem)(size_t* bytes, CUdevice device) = nullptr;
  CUresult (*DeviceGetAttribute)(int* value, CUdevice_attribute attribute, CUdevice device) = nullptr;
};

// Fills `api` from the libcuda.so.1 already loaded in the process; false
// when it is not loaded or lacks a function.
bool LoadLoadedDriver(DriverApi* api);

// Every device the driver enumerates (CUDA_VISIBLE_DEVICES applies), in
// ordinal order, as CUPTI numbers them. Empty when the driver is not
// initialized or a query fails. The memory bandwidth is derived as the
// Kineto importer does (two transfers per memory clock), since the driver
// reports clock and bus width only.
std::vector<DeviceRecord> QueryDevices(const DriverApi& api);

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_DEVICE_QUERY_H_
