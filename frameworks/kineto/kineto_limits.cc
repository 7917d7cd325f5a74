#include "frameworks/kineto/kineto_limits.h"

#include "base/checked_math.h"

namespace reverie::kineto {
namespace {

// Clamps *v into [lo, hi]; true when it had to.
bool Clamp(int64_t* v, int64_t lo, int64_t hi) {
  if (*v >= lo && *v <= hi) return false;
  *v = ClampTo(*v, lo, hi);
  return true;
}

// c10::DeviceType values stay small; an ordinal beyond this is no GPU.
constexpr int64_t kMaxDeviceType = 255;
constexpr int64_t kMaxDeviceId = 1 << 20;

}  // namespace

void ClampEventNumbers(RawEvent* e, Trace* trace) {
  // |ts| and |dur| below 2^62: their sum and difference fit in int64.
  constexpr int64_t kT = kMaxAbsTimestampNs - 1;
  // Below 2^50: times an element size of at most 16 bytes fits.
  if (Clamp(&e->ts_ns, -kT, kT) | Clamp(&e->dur_ns, -kT, kT) |
      Clamp(&e->in_nelems, 0, kMaxBytes) | Clamp(&e->out_nelems, 0, kMaxBytes) |
      Clamp(&e->bytes, 0, kMaxBytes) | Clamp(&e->shared_memory, 0, kMaxBytes) |
      Clamp(&e->mem_bytes, -kMaxBytes, kMaxBytes) | Clamp(&e->total_allocated, 0, kMaxBytes) |
      Clamp(&e->total_reserved, 0, kMaxBytes) | Clamp(&e->device_id, -1, kMaxDeviceId) |
      Clamp(&e->device_type, -1, kMaxDeviceType)) {
    trace->AddCounter(TraceCounter::json_number_out_of_range);
  }
}

}  // namespace reverie::kineto
