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

}  // namespace

void ClampEventNumbers(RawEvent* e, Trace* trace) {
  // |ts| and |dur| below 2^62: their sum and difference fit in int64.
  constexpr int64_t kT = kMaxAbsTimestampNs - 1;
  // Below 2^50: times an element size of at most 16 bytes fits.
  if (Clamp(&e->ts_ns, -kT, kT) | Clamp(&e->dur_ns, -kT, kT) |
      Clamp(&e->in_nelems, 0, kMaxBytes) | Clamp(&e->out_nelems, 0, kMaxBytes) |
      Clamp(&e->bytes, 0, kMaxBytes) | Clamp(&e->shared_memory, 0, kMaxBytes)) {
    trace->AddCounter(TraceCounter::json_number_out_of_range);
  }
}

}  // namespace reverie::kineto
