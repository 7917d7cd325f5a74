// File: transforms/host_memory.h
//
// Host work that grows with the bytes of a batch: releasing the host
// buffer a batch was copied to the GPU from.
//
// A training loop moves each batch to the GPU (`x = x.to(device)`); when it
// rebinds `x`, the host tensor is freed, and with DataLoader workers that
// tensor lives in shared memory, so freeing it unmaps pages: CPU time on
// the main thread proportional to its bytes, between the copy and the next
// op, that no op span covers. The profiler records it only as a host
// `[memory]` free (profile_memory=True) at the end of that stretch
// (batch 2056 of a toy MLP on an RTX 3080: 1.96 ms before the free of
// 16.9 MB, 28 us before the free of 131.6 kB at batch 16).
//
// A batch free is a host free that falls in a stretch of CPU time the graph
// models as a task (MemoryEvent::anchor) and whose size equals the bytes
// of a host-to-device copy of the same step: the buffer that copy read.
// Its cost is the time from the stretch's start to the free. The trace's
// own batch frees calibrate a line T = fixed + bytes / rate (weighted least
// squares, relative errors, through each size's median stretch), only when
// they come in at least two sizes, the
// largest at least twice the smallest: otherwise the rate cannot be told
// from the trace, and there is no prior (host memory systems differ too
// much for a table figure): the model says it is not calibrated.
#ifndef REVERIE_TRANSFORMS_HOST_MEMORY_H_
#define REVERIE_TRANSFORMS_HOST_MEMORY_H_

#include <cstdint>
#include <span>
#include <vector>

#include "depgraph/graph.h"

namespace reverie::transforms {

struct BatchFree {
  size_t event = 0;         // index into Graph::memory_events()
  depgraph::TaskId task;    // the CPU stretch it fell in
  int64_t bytes = 0;        // freed (positive)
  int64_t stretch_ns = 0;   // from the stretch's start to the free, as measured
  int32_t step = -1;   // the step of the stretch
};

struct HostFreeRate {
  bool calibrated = false;
  double fixed_ns = 0;
  double ns_per_byte = 0;  // 1 / rate
  int64_t samples = 0;  // frees
  int64_t sizes = 0;    // distinct sizes among them
  // The model's time for freeing `bytes`; 0 when not calibrated.
  double TimeNs(double bytes) const { return calibrated ? fixed_ns + ns_per_byte * bytes : 0; }
};

// The batch frees of `g` whose stretch task is live, in time order.
std::vector<BatchFree> BatchFrees(const depgraph::Graph& g);

// The line through `frees` (see the file comment).
HostFreeRate FitHostFreeRate(std::span<const BatchFree> frees);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_HOST_MEMORY_H_
