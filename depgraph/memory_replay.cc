// File: depgraph/memory_replay.cc
#include "depgraph/memory_replay.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "base/checked_math.h"
#include "depgraph/memory.h"

namespace reverie::depgraph {
namespace {

constexpr int64_t kBeforeEverything = std::numeric_limits<int64_t>::min();

// Which events stand: not anchored on a removed task, nor paired (by the
// free's allocation) with one that is.
std::vector<bool> StandingEvents(const Graph& g) {
  const std::span<const MemoryEvent> all = g.memory_events();
  std::vector<bool> keep(all.size(), true);
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].anchor.valid() && g.removed(all[i].anchor)) keep[i] = false;
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

struct PlacedEvent {
  int64_t ns;
  uint32_t index;
};

struct ReplayPlacement {
  absl::btree_map<int32_t, std::vector<PlacedEvent>> by_device;  // each in replay order
  absl::btree_map<int32_t, int64_t> left_out;
};

ReplayPlacement PlaceEvents(const Graph& g, std::span<const int64_t> start, std::span<const int64_t> end) {
  const std::span<const MemoryEvent> all = g.memory_events();
  const std::vector<bool> keep = StandingEvents(g);
  ReplayPlacement out;
  std::vector<int64_t> placed_ns(all.size(), kBeforeEverything);
  for (uint32_t i = 0; i < all.size(); ++i) {
    const MemoryEvent& m = all[i];
    if (!out.by_device.contains(m.device) && out.by_device.size() >= kMaxMemoryDevices) continue;
    if (!keep[i]) {
      ++out.left_out[m.device];
      out.by_device[m.device];
      continue;
    }
    int64_t ns = kBeforeEverything;
    const TaskId a = m.anchor;
    if (a.valid() && a.value() < start.size() && start[a.value()] >= 0) {
      // Saturating: a hostile trace's times may be anywhere in int64.
      const int64_t room = SatAddNs(std::max<int64_t>(0, SatSubNs(end[a.value()], start[a.value()])), g.gap_ns(a));
      ns = SatAddNs(start[a.value()], std::min(m.anchor_offset_ns, room));
    }
    // A free never comes before its allocation (a script may anchor the
    // two on tasks whose simulated order it did not foresee).
    if (m.alloc != 0 && m.alloc - 1 < placed_ns.size()) ns = std::max(ns, placed_ns[m.alloc - 1]);
    placed_ns[i] = ns;
    out.by_device[m.device].push_back({ns, i});
  }
  for (auto& [device, placed] : out.by_device) {
    std::stable_sort(placed.begin(), placed.end(), [](const PlacedEvent& x, const PlacedEvent& y) { return x.ns < y.ns; });
  }
  return out;
}

// The level before the device's first event in the trace (its totals are
// the allocator's own; the simulated order does not change it), and
// whether the device's levels are absolute.
std::pair<int64_t, bool> ReplayStartLevel(const Graph& g, int32_t device) {
  int64_t level = 0;
  bool absolute = true, first = true;
  for (const MemoryEvent& m : g.memory_events()) {
    // A script's events have no recorded totals; the measured ones decide.
    if (m.device != device || m.measured_ns == kNotMeasured) continue;
    absolute &= m.total_allocated >= 0;
    if (first && m.total_allocated >= 0) level = std::max<int64_t>(0, m.total_allocated - m.recorded_bytes);
    first = false;
  }
  return {absolute ? level : 0, absolute};
}

}  // namespace

std::vector<DevicePeak> ReplayMemory(const Graph& g, std::span<const int64_t> start,
                                     std::span<const int64_t> end) {
  const std::span<const MemoryEvent> all = g.memory_events();
  ReplayPlacement placement = PlaceEvents(g, start, end);
  std::vector<DevicePeak> out;
  for (auto& [device, placed] : placement.by_device) {
    DevicePeak p;
    p.device = device;
    p.left_out = placement.left_out[device];
    p.events = static_cast<int64_t>(placed.size());
    std::tie(p.start_level, p.absolute) = ReplayStartLevel(g, device);
    int64_t level = p.start_level;
    p.peak = level;
    p.peak_ns = placed.empty() ? 0 : placed.front().ns;
    for (const PlacedEvent& e : placed) {
      level = SatAdd(level, all[e.index].bytes);
      if (level > p.peak) {
        p.peak = level;
        p.peak_ns = e.ns;
        p.peak_phase = all[e.index].phase;
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

std::vector<MemoryPoint> ReplayTimeline(const Graph& g, std::span<const int64_t> start,
                                        std::span<const int64_t> end, int32_t device) {
  const std::span<const MemoryEvent> all = g.memory_events();
  ReplayPlacement placement = PlaceEvents(g, start, end);
  std::vector<MemoryPoint> out;
  auto it = placement.by_device.find(device);
  if (it == placement.by_device.end()) return out;
  int64_t level = ReplayStartLevel(g, device).first;
  for (const PlacedEvent& e : it->second) {
    level = SatAdd(level, all[e.index].bytes);
    if (e.ns != kBeforeEverything) out.push_back({e.ns, level, -1});  // unplaced: in the level, no point
  }
  return out;
}

}  // namespace reverie::depgraph
