#include "depgraph/memory.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace reverie::depgraph {
namespace {

constexpr size_t kTopLayers = 5;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// One device's events (indexes into Graph::memory_events) and levels.
struct DeviceEvents {
  std::vector<uint32_t> index;
  std::vector<int64_t> level;     // allocated after each event
  std::vector<int64_t> reserved;  // -1 unknown
  bool absolute = true;
  bool matched = true;
};

// Events by device, in time order.
absl::flat_hash_map<int32_t, std::vector<uint32_t>> ByDevice(const Graph& g) {
  absl::flat_hash_map<int32_t, std::vector<uint32_t>> out;
  const std::span<const MemoryEvent> all = g.memory_events();
  for (uint32_t i = 0; i < all.size(); ++i) {
    // What was measured: events a script added have no time on the trace.
    if (all[i].measured_ns != kNotMeasured) out[all[i].device].push_back(i);
  }
  return out;
}

DeviceEvents EventsOf(const Graph& g, std::vector<uint32_t> index) {
  DeviceEvents d;
  const std::span<const MemoryEvent> all = g.memory_events();
  d.index = std::move(index);
  for (uint32_t i : d.index) {
    d.absolute &= all[i].total_allocated >= 0;
    d.matched &= all[i].has_addr;
  }
  int64_t sum = 0;
  for (uint32_t i : d.index) {
    const MemoryEvent& m = all[i];
    sum += m.bytes;  // each |bytes| <= 2^50 (validation): no overflow in practice
    d.level.push_back(d.absolute ? m.total_allocated : sum);
    d.reserved.push_back(m.total_reserved);
  }
  return d;
}

// Allocated before the device's first event.
int64_t LevelBefore(const Graph& g, const DeviceEvents& d, size_t k) {
  if (k > 0) return d.level[k - 1];
  if (d.index.empty() || !d.absolute) return 0;
  return std::max<int64_t>(0, d.level[0] - g.memory_events()[d.index[0]].bytes);
}

// The peak of one step: level, index (-1: the level before k0) and the
// step's event range [k0, k1).
struct Peak {
  size_t k0 = 0, k1 = 0;
  int64_t at = -1;
};

Peak FindPeak(const Graph& g, const DeviceEvents& d, const StepTime& step, StepMemory* out) {
  const std::span<const MemoryEvent> all = g.memory_events();
  auto time_of = [&](size_t k) { return all[d.index[k]].measured_ns; };
  Peak p;
  size_t lo = 0, hi = d.index.size();
  while (lo < hi) {  // first event at or after the step's start
    const size_t mid = (lo + hi) / 2;
    if (time_of(mid) < step.start_ns) lo = mid + 1; else hi = mid;
  }
  p.k0 = p.k1 = lo;
  while (p.k1 < d.index.size() && time_of(p.k1) < step.end_ns) ++p.k1;
  out->step = step.step;
  out->events = static_cast<int64_t>(p.k1 - p.k0);
  out->start_level = LevelBefore(g, d, p.k0);
  out->peak = out->start_level;
  out->peak_ns = step.start_ns;
  out->peak_reserved = p.k0 > 0 ? d.reserved[p.k0 - 1] : -1;
  for (size_t k = p.k0; k < p.k1; ++k) {
    if (d.level[k] > out->peak) {
      out->peak = d.level[k];
      out->peak_ns = time_of(k);
      p.at = static_cast<int64_t>(k);
    }
    out->peak_reserved = std::max(out->peak_reserved, d.reserved[k]);
  }
  return p;
}

// Without addresses: the net bytes from the step's start to its peak, by phase.
void NetByPhase(const Graph& g, const DeviceEvents& d, const Peak& p, StepMemory* out) {
  if (p.at < 0) return;
  for (size_t k = p.k0; k <= static_cast<size_t>(p.at); ++k) {
    const MemoryEvent& m = g.memory_events()[d.index[k]];
    out->by_phase[static_cast<size_t>(m.phase)] += m.bytes;
  }
}

// With addresses: what is live after event `at` (the peak), sorted into the
// parts of StepMemory. `live` holds local indexes of live allocations;
// `free_time[k]` is when allocation k is freed (kNever: not in the trace).
void SplitLive(const Graph& g, const DeviceEvents& d, const Peak& p, const StepTime& step,
               const absl::flat_hash_set<uint32_t>& live, const std::vector<int64_t>& free_time,
               StepMemory* out) {
  const std::span<const MemoryEvent> all = g.memory_events();
  out->matched = true;
  out->persistent = out->from_earlier = out->kept = 0;
  absl::flat_hash_map<uint32_t, int64_t> by_layer;
  int64_t known = 0;
  for (uint32_t k : live) {
    const MemoryEvent& m = all[d.index[k]];
    known += m.bytes;
    const bool survives = free_time[k] >= step.end_ns;
    if (k < p.k0) {
      (survives ? out->persistent : out->from_earlier) += m.bytes;
      continue;
    }
    if (survives) {
      out->kept += m.bytes;
    } else {
      out->by_phase[static_cast<size_t>(m.phase)] += m.bytes;
    }
    if (m.layer.valid()) by_layer[m.layer.value()] += m.bytes;
  }
  // Live but never seen allocated: allocated before the trace. What of it
  // the step frees after its peak came from earlier; the rest persists.
  int64_t unseen = std::max<int64_t>(0, out->peak - known);
  int64_t freed_later = 0;
  for (size_t k = static_cast<size_t>(p.at + 1); k < p.k1; ++k) {
    const MemoryEvent& m = all[d.index[k]];
    if (m.bytes < 0 && m.alloc == 0) freed_later -= m.bytes;
  }
  freed_later = std::min(freed_later, unseen);
  out->from_earlier += freed_later;
  out->persistent += unseen - freed_later;
  std::vector<std::pair<uint32_t, int64_t>> layers(by_layer.begin(), by_layer.end());
  std::sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (layers.size() > kTopLayers) layers.resize(kTopLayers);
  for (const auto& [layer, bytes] : layers) {
    out->top_layers.emplace_back(g.layer(LayerId(layer)).path, bytes);
  }
}

DeviceMemory ComputeDevice(const Graph& g, int32_t device, std::vector<uint32_t> index,
                           std::span<const StepTime> steps) {
  const DeviceEvents d = EventsOf(g, std::move(index));
  const std::span<const MemoryEvent> all = g.memory_events();
  DeviceMemory out;
  out.device = device;
  out.absolute = d.absolute;
  out.events = static_cast<int64_t>(d.index.size());
  std::vector<Peak> peaks;
  for (const StepTime& s : steps) {
    out.steps.emplace_back();
    peaks.push_back(FindPeak(g, d, s, &out.steps.back()));
  }
  if (d.matched) {
    // Local index of each global allocation, and when each is freed.
    absl::flat_hash_map<uint32_t, uint32_t> local;
    std::vector<int64_t> free_time(d.index.size(), kNever);
    for (uint32_t k = 0; k < d.index.size(); ++k) {
      const MemoryEvent& m = all[d.index[k]];
      if (m.bytes > 0) local[d.index[k]] = k;
      if (m.bytes < 0 && m.alloc != 0) {
        auto it = local.find(m.alloc - 1);
        if (it != local.end()) free_time[it->second] = m.measured_ns;
      }
    }
    // One sweep; each step's split is read when the sweep passes its peak.
    std::vector<size_t> order(steps.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto at = [&](size_t i) {
      return peaks[i].at >= 0 ? peaks[i].at : static_cast<int64_t>(peaks[i].k0) - 1;
    };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return at(a) < at(b); });
    absl::flat_hash_set<uint32_t> live;
    int64_t k = -1;
    for (size_t i : order) {
      while (k < at(i)) {
        ++k;
        const MemoryEvent& m = all[d.index[static_cast<size_t>(k)]];
        if (m.bytes > 0) live.insert(static_cast<uint32_t>(k));
        if (m.bytes < 0 && m.alloc != 0) {
          auto it = local.find(m.alloc - 1);
          if (it != local.end()) live.erase(it->second);
        }
      }
      Peak p = peaks[i];
      p.at = at(i);
      SplitLive(g, d, p, steps[i], live, free_time, &out.steps[i]);
    }
  } else {
    for (size_t i = 0; i < steps.size(); ++i) NetByPhase(g, d, peaks[i], &out.steps[i]);
  }
  bool any_counted = false;
  for (const StepTime& s : steps) any_counted |= s.counted;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (any_counted && !steps[i].counted) continue;
    out.peak = std::max(out.peak, out.steps[i].peak);
    out.peak_reserved = std::max(out.peak_reserved, out.steps[i].peak_reserved);
  }
  return out;
}

}  // namespace

MemoryReport ComputeMemory(const Graph& graph, std::span<const StepTime> steps) {
  MemoryReport r;
  absl::flat_hash_map<int32_t, std::vector<uint32_t>> by_device = ByDevice(graph);
  std::vector<int32_t> devices;
  for (const auto& [d, events] : by_device) devices.push_back(d);
  // GPUs by ordinal, the host (-1) last.
  std::sort(devices.begin(), devices.end(), [](int32_t a, int32_t b) {
    return (a < 0) != (b < 0) ? b < 0 : a < b;
  });
  if (devices.size() > kMaxMemoryDevices) {
    r.devices_left_out = static_cast<int64_t>(devices.size() - kMaxMemoryDevices);
    // Keep the host when there is one: it sorts last.
    if (devices.back() < 0) std::swap(devices[kMaxMemoryDevices - 1], devices.back());
    devices.resize(kMaxMemoryDevices);
  }
  for (int32_t d : devices) {
    r.devices.push_back(ComputeDevice(graph, d, std::move(by_device[d]), steps));
  }
  return r;
}

std::vector<MemoryPoint> MemoryTimeline(const Graph& graph, int32_t device) {
  absl::flat_hash_map<int32_t, std::vector<uint32_t>> by_device = ByDevice(graph);
  const DeviceEvents d = EventsOf(graph, std::move(by_device[device]));
  std::vector<MemoryPoint> out;
  out.reserve(d.index.size());
  for (size_t k = 0; k < d.index.size(); ++k) {
    out.push_back({graph.memory_events()[d.index[k]].measured_ns, d.level[k], d.reserved[k]});
  }
  return out;
}

}  // namespace reverie::depgraph
