// File: depgraph/memory.h
//
// A step's memory, read off the allocations and frees the trace recorded
// (Graph::memory_events; PyTorch profiler `profile_memory=True`): per device
// the allocated level over time (and reserved where recorded), each step's
// peak, and what is live at that peak.
//
// Steps are the one step definition (depgraph/step_time.h): an event
// belongs to step i when start_i <= t < end_i of the measured spans.
//
// The level: the allocator's recorded total after each event when the trace
// has it (current Kineto schema, `Total Allocated`); otherwise (2021 schema)
// the running sum of the events' bytes, which is relative to the unknown
// level at the trace's start (`absolute` false).
//
// What is live at a step's peak, when allocations carry addresses (so each
// free is matched to its allocation, frameworks/kineto/kineto_memory.h):
// - persistent: allocated before the step and still live after it (weights,
//   optimizer state, and what was allocated before the trace began and is
//   not freed in the step);
// - from_earlier: allocated before the step and freed in it after the peak
//   (the previous step's gradients, the input batch);
// - kept: allocated in the step before the peak and live after it ends
//   (gradients kept until the next zero_grad; state created on first use);
// - by_phase: allocated in the step before the peak and freed in it
//   (activations and temporaries), by the phase of the op that allocated it.
// The parts sum to the peak. Without addresses only the net growth from the
// step's start to its peak is known, by the phase of the events' ops
// (`matched` false; persistent etc. are -1).
#ifndef REVERIE_DEPGRAPH_MEMORY_H_
#define REVERIE_DEPGRAPH_MEMORY_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/step_time.h"

namespace reverie::depgraph {

// A report covers at most this many devices (a hostile trace may name a
// million); the rest are counted (devices_left_out).
inline constexpr size_t kMaxMemoryDevices = 64;

struct StepMemory {
  int32_t step = -1;
  int64_t events = 0;          // allocations and frees in the step
  int64_t start_level = 0;     // allocated when the step starts
  int64_t peak = 0;            // its peak allocated in the step (bytes)
  int64_t peak_ns = 0;         // when (trace clock); the step's start if no event
  int64_t peak_reserved = -1;  // the largest reserved in the step; -1 unknown
  bool matched = false;        // addresses known: the split below is exact
  int64_t persistent = -1;
  int64_t from_earlier = -1;
  int64_t kept = -1;
  // matched: live at the peak, allocated in the step, freed in it;
  // else: net bytes from the step's start to its peak. By Phase.
  std::array<int64_t, kPhaseCount> by_phase{};
  // Of what the step allocated and is live at the peak: the largest layers.
  std::vector<std::pair<std::string, int64_t>> top_layers;  // module path, bytes
};

struct DeviceMemory {
  int32_t device = -1;   // GPU ordinal; -1 the host
  bool absolute = true;  // levels are the allocator's totals (else relative)
  int64_t events = 0;
  int64_t peak = 0;      // over the counted steps
  int64_t peak_reserved = -1;
  std::vector<StepMemory> steps;  // one per step span given
};

struct MemoryReport {
  std::vector<DeviceMemory> devices;  // GPUs by ordinal, then the host
  int64_t devices_left_out = 0;       // beyond the report's limit (64 devices)
  bool empty() const { return devices.empty(); }
};

// One point of the timeline: the levels after an event.
struct MemoryPoint {
  int64_t ns = 0;
  int64_t allocated = 0;
  int64_t reserved = -1;
};

// The report for every device with memory events, per span of `steps`
// (normally MeasuredSteps(graph)).
MemoryReport ComputeMemory(const Graph& graph, std::span<const StepTime> steps);

// The allocated (and reserved) level of `device` after each of its events.
std::vector<MemoryPoint> MemoryTimeline(const Graph& graph, int32_t device);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_MEMORY_H_
