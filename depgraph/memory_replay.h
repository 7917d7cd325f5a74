// File: depgraph/memory_replay.h
//
// The memory a simulated run allocates: the trace's allocations and frees
// (Graph::memory_events) replayed in the simulated order, so a prediction
// has a peak as a measured run does.
//
// Each event happens at its anchor's simulated start plus its measured
// offset from the anchor (MemoryEvent::anchor), the offset capped at the
// anchor's simulated duration and gap (the event stays before the thread's
// next task). Events are replayed in that order (ties in trace order) from
// the level before the trace's first event (the allocator's recorded total
// minus that event's bytes; 0 without totals, and the levels are relative).
// On the unchanged graph the order and so the peak are the measured ones.
//
// What a script changed: an event whose anchor it removed is left out with
// the allocation it frees or the frees of the allocation it made (the
// memory it stood for is gone with the work); bytes a script resized
// (Graph::ResizeAllocations) count as resized.
#ifndef REVERIE_DEPGRAPH_MEMORY_REPLAY_H_
#define REVERIE_DEPGRAPH_MEMORY_REPLAY_H_

#include <cstdint>
#include <span>
#include <vector>

#include "depgraph/graph.h"
#include "depgraph/memory.h"

namespace reverie::depgraph {

struct DevicePeak {
  int32_t device = -1;     // GPU ordinal; -1 the host
  bool absolute = true;    // levels include what was allocated before the trace
  int64_t start_level = 0;
  int64_t peak = 0;        // the largest allocated level of the run
  int64_t peak_ns = 0;     // when, on the replay's clock
  Phase peak_phase = Phase::kUnknown;  // of the op whose allocation reached the peak
  int64_t events = 0;      // replayed
  int64_t left_out = 0;    // whose anchor was removed (with their pairs)
};

// Per device with memory events (GPUs by ordinal, then the host), under
// per-task simulated `start`/`end` (SimResult's, indexed by TaskId value).
std::vector<DevicePeak> ReplayMemory(const Graph& g, std::span<const int64_t> start,
                                     std::span<const int64_t> end);

// The allocated level of `device` after each replayed event, in replay
// order, on the simulated clock (an event whose anchor has no time counts
// in the levels but has no point); empty when the device has no events.
std::vector<MemoryPoint> ReplayTimeline(const Graph& g, std::span<const int64_t> start,
                                        std::span<const int64_t> end, int32_t device);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_MEMORY_REPLAY_H_
