// The only symbols libreverie_collector.so exports (exports.map): the C API
// of include/reverie/collector.h and the CUDA driver's InitializeInjection.
// Each is a noexcept wrapper that catches everything, so no exception ever
// reaches the host; failures are reported by return value or one stderr line.
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "collector/collector_runtime.h"
#include "collector/cuda_detect.h"
#include "reverie/collector.h"

namespace reverie::collector {
namespace {

void ExitHandler() noexcept {
  try {
    Collector::Global().Stop();
  } catch (...) {
  }
}

std::string OwnPath() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&ExitHandler), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  return info.dli_fname;
}

// After a successful start: stop (flush everything) at exit, and make sure
// nobody can unload this library while its writer thread runs.
void AfterStart(int result) {
  if (result != REVERIE_OK && result != REVERIE_HOST_ONLY) return;
  static std::atomic<bool> registered{false};
  if (registered.exchange(true)) return;
  const std::string self = OwnPath();
  if (!self.empty()) ::dlopen(self.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  std::atexit(&ExitHandler);
}

int StartGlobal(Collector::Mode mode) {
  const int result = Collector::Global().Start(mode);
  AfterStart(result);
  return result;
}

// LD_PRELOAD mode. Runs in every process the variable reaches, so it does
// nothing at all unless this library is really named in LD_PRELOAD and the
// process visibly uses CUDA (cuda_detect.h).
__attribute__((constructor)) void OnLoad() noexcept {
  try {
    const char* preload = std::getenv("LD_PRELOAD");
    if (preload == nullptr) return;
    const std::string self = OwnPath();
    const size_t slash = self.rfind('/');
    const std::string name = slash == std::string::npos ? self : self.substr(slash + 1);
    if (name.empty() || !PreloadNames(preload, name)) return;
    // With CUDA_INJECTION64_PATH set the driver calls InitializeInjection.
    if (std::getenv("CUDA_INJECTION64_PATH") != nullptr) return;
    if (!ProcessUsesCuda()) return;
    StartGlobal(Collector::Mode::kPreload);
  } catch (...) {
  }
}

}  // namespace
}  // namespace reverie::collector

using reverie::collector::Collector;

extern "C" {

int InitializeInjection(void) noexcept {
  try {
    reverie::collector::StartGlobal(Collector::Mode::kInjection);
  } catch (...) {
  }
  return 1;  // the driver treats 0 as failure; we never want to fail it
}

int reverie_configure(const char* key, const char* value) noexcept {
  try {
    return Collector::Global().Configure(key, value);
  } catch (...) {
    return REVERIE_BAD_ARGUMENT;
  }
}

int reverie_start(void) noexcept {
  try {
    return reverie::collector::StartGlobal(Collector::Mode::kApi);
  } catch (...) {
    return REVERIE_NOT_COLLECTING;
  }
}

int reverie_stop(void) noexcept {
  try {
    return Collector::Global().Stop();
  } catch (...) {
    return REVERIE_NOT_COLLECTING;
  }
}

int reverie_flush(void) noexcept {
  try {
    return Collector::Global().Flush();
  } catch (...) {
    return REVERIE_NOT_COLLECTING;
  }
}

int reverie_is_collecting(void) noexcept {
  try {
    return Collector::Global().IsCollecting() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

void reverie_set_metadata(const char* key, const char* value) noexcept {
  try {
    Collector::Global().SetMetadata(key, value);
  } catch (...) {
  }
}

void reverie_layer_push(const char* name, int phase) noexcept {
  try {
    Collector::Global().LayerPush(name, phase);
  } catch (...) {
  }
}

void reverie_layer_pop(void) noexcept {
  try {
    Collector::Global().LayerPop();
  } catch (...) {
  }
}

void reverie_range_push(const char* name, int phase) noexcept {
  try {
    Collector::Global().RangePush(name, phase);
  } catch (...) {
  }
}

void reverie_range_pop(void) noexcept {
  try {
    Collector::Global().LayerPop();
  } catch (...) {
  }
}

void reverie_step_begin(void) noexcept {
  try {
    Collector::Global().StepBegin();
  } catch (...) {
  }
}

void reverie_step_end(void) noexcept {
  try {
    Collector::Global().StepEnd();
  } catch (...) {
  }
}

// Deprecated names of reverie_step_begin/end (before "step" was the one word).
void reverie_iteration_begin(void) noexcept { reverie_step_begin(); }
void reverie_iteration_end(void) noexcept { reverie_step_end(); }

void reverie_comm_bucket(int32_t index, int64_t bytes, const char* const* param_names,
                         int32_t param_count) noexcept {
  try {
    Collector::Global().CommBucket(index, bytes, param_names, param_count);
  } catch (...) {
  }
}

void reverie_parameter(const char* name, const char* layer, int64_t bytes) noexcept {
  try {
    Collector::Global().Parameter(name, layer, bytes, nullptr);
  } catch (...) {
  }
}

void reverie_parameter_typed(const char* name, const char* layer, int64_t bytes,
                             const char* dtype) noexcept {
  try {
    Collector::Global().Parameter(name, layer, bytes, dtype);
  } catch (...) {
  }
}

const char* reverie_collector_version(void) noexcept { return "reverie-collector 0.1"; }

}  // extern "C"
