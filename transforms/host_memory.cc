// File: transforms/host_memory.cc
#include "transforms/host_memory.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_set.h"
#include "transforms/cost_model.h"

namespace reverie::transforms {

using depgraph::Graph;
using depgraph::MemoryEvent;
using depgraph::TaskId;
using depgraph::TaskKind;

std::vector<BatchFree> BatchFrees(const Graph& g) {
  // (step, bytes) of every host-to-device copy.
  absl::flat_hash_set<std::pair<int32_t, int64_t>> copied;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kMemcpy || g.bytes(t) <= 0) continue;
    const std::optional<CopyKind> k = CopyKindOf(g.name(t));
    if (k == CopyKind::kHtoDPageable || k == CopyKind::kHtoDPinned) copied.insert({g.step_of(t), g.bytes(t)});
  }
  std::vector<BatchFree> out;
  if (copied.empty()) return out;
  const std::span<const MemoryEvent> events = g.memory_events();
  for (size_t e = 0; e < events.size(); ++e) {
    const MemoryEvent& m = events[e];
    if (m.device != -1 || m.bytes >= 0 || !m.anchor.valid() || g.removed(m.anchor)) continue;
    // In a stretch of framework or op time, not in or after an API call.
    if (g.kind(m.anchor) != TaskKind::kCpuWork || m.anchor_offset_ns > g.duration_ns(m.anchor)) continue;
    const int32_t step = g.step_of(m.anchor);
    if (!copied.contains({step, -m.bytes})) continue;
    out.push_back({e, m.anchor, -m.bytes, m.anchor_offset_ns, step});
  }
  return out;
}

HostFreeRate FitHostFreeRate(std::span<const BatchFree> frees) {
  HostFreeRate r;
  // Per size, the median stretch: a stretch that also held other work (a
  // page fault, the GIL) moves the median of three frees of that size no
  // more than a well-behaved one.
  absl::btree_map<int64_t, std::vector<int64_t>> by_size;
  for (const BatchFree& f : frees) {
    if (f.stretch_ns <= 0 || f.bytes <= 0) continue;
    by_size[f.bytes].push_back(f.stretch_ns);
    ++r.samples;
  }
  // Weighted sums over sizes, weight 1 / T: minimizes sum (a + b x - T)^2 / T.
  double sw = 0, sx = 0, st = 0, sxx = 0, sxt = 0;
  for (auto& [bytes, stretches] : by_size) {
    auto mid = stretches.begin() + static_cast<std::ptrdiff_t>(stretches.size() / 2);
    std::nth_element(stretches.begin(), mid, stretches.end());
    const double x = static_cast<double>(bytes), t = static_cast<double>(*mid), w = 1.0 / t;
    sw += w;
    sx += w * x;
    st += w * t;
    sxx += w * x * x;
    sxt += w * x * t;
  }
  const double det = sw * sxx - sx * sx;
  if (by_size.size() < 2 || by_size.rbegin()->first < 2 * by_size.begin()->first || !(det > 0)) return r;
  double b = (sw * sxt - sx * st) / det;
  double a = (st - b * sx) / sw;
  if (a < 0) {  // through the origin
    a = 0;
    b = sxt / sxx;
  }
  if (!std::isfinite(b) || b <= 0) return r;  // freeing more took no longer: nothing per byte
  r.calibrated = true;
  r.fixed_ns = a;
  r.ns_per_byte = b;
  r.sizes = static_cast<int64_t>(by_size.size());
  return r;
}

}  // namespace reverie::transforms
