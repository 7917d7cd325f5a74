// File: depgraph/memory_replay.cc
#include "depgraph/memory_replay.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/btree_map.h"
#include "depgraph/memory.h"

namespace reverie::depgraph {
namespace {

constexpr int64_t kBeforeEverything = std::numeric_limits<int64_t>::min();

// Which events stand: not anchored on a removed task, nor paired (by the
// free's allocation) with one that is.
std::vector<bool> Standing(const Graph& g) {
  const std::span<const MemoryEvent> all = g.memory_events();
  std::vector<bool> keep(all.size(), true);
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].cpu_task.valid() && g.removed(all[i].cpu_task)) keep[i] = false;
  }
  // A free follows its allocation (graph.cc checks alloc < its index), so
  // one pass sees the allocation's verdict first; an allocation whose free
  // went goes too.
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].alloc == 0) continue;
    const size_t a = all[i].alloc - 1;
    if (!keep[a]) keep[i] = false;
    if (!keep[i]) keep[a] = false;
  }
  return keep;
}

}  // namespace

std::vector<DevicePeak> ReplayMemory(const Graph& g, std::span<const int64_t> start,
                                     std::span<const int64_t> end) {
  const std::span<const MemoryEvent> all = g.memory_events();
  const std::vector<bool> keep = Standing(g);
  struct Placed {
    int64_t ns;
    uint32_t index;
  };
  absl::btree_map<int32_t, std::vector<Placed>> by_device;  // -1 (host) first: moved last below
  absl::btree_map<int32_t, int64_t> left_out;
  for (uint32_t i = 0; i < all.size(); ++i) {
    const MemoryEvent& m = all[i];
    if (!by_device.contains(m.device) && by_device.size() >= kMaxMemoryDevices) continue;
    if (!keep[i]) {
      ++left_out[m.device];
      by_device[m.device];
      continue;
    }
    int64_t ns = kBeforeEverything;
    const TaskId a = m.cpu_task;
    if (a.valid() && a.value() < start.size() && start[a.value()] >= 0) {
      const int64_t room = std::max<int64_t>(0, end[a.value()] - start[a.value()]) + g.gap_ns(a);
      ns = start[a.value()] + std::min(m.cpu_offset_ns, room);
    }
    by_device[m.device].push_back({ns, i});
  }
  std::vector<DevicePeak> out;
  for (auto& [device, placed] : by_device) {
    std::stable_sort(placed.begin(), placed.end(), [](const Placed& x, const Placed& y) { return x.ns < y.ns; });
    DevicePeak p;
    p.device = device;
    p.left_out = left_out[device];
    p.events = static_cast<int64_t>(placed.size());
    // The level before the device's first event in the trace (its totals
    // are the allocator's own; the simulated order does not change it).
    bool first = true;
    for (uint32_t i = 0; i < all.size(); ++i) {
      if (all[i].device != device) continue;
      p.absolute &= all[i].total_allocated >= 0;
      if (first && all[i].total_allocated >= 0) {
        p.start_level = std::max<int64_t>(0, all[i].total_allocated - all[i].recorded_bytes);
      }
      first = false;
    }
    if (!p.absolute) p.start_level = 0;
    int64_t level = p.start_level;
    p.peak = level;
    p.peak_ns = placed.empty() ? 0 : placed.front().ns;
    for (const Placed& e : placed) {
      level += all[e.index].bytes;
      if (level > p.peak) {
        p.peak = level;
        p.peak_ns = e.ns;
      }
    }
    out.push_back(p);
  }
  // GPUs by ordinal, then the host.
  std::stable_sort(out.begin(), out.end(), [](const DevicePeak& x, const DevicePeak& y) {
    return (x.device < 0) != (y.device < 0) ? y.device < 0 : x.device < y.device;
  });
  return out;
}

}  // namespace reverie::depgraph
