#include "transforms/collectives.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "depgraph/kernel_class.h"
#include "transforms/structure.h"

namespace reverie::transforms {

using depgraph::CollectiveInfo;
using depgraph::Graph;
using depgraph::TaskId;

std::vector<TaskId> KernelsOfCollectives(const Graph& g,
                                         const std::vector<CollectiveInfo>& collectives) {
  std::vector<TaskId> out(collectives.size());
  // Collectives by (pid, tid, start): a launch finds the latest record that
  // started at or before it on its thread.
  std::vector<int32_t> order;
  order.reserve(collectives.size());
  for (int32_t i = 0; i < static_cast<int32_t>(collectives.size()); ++i) {
    if (collectives[i].end_ns > collectives[i].start_ns) order.push_back(i);
  }
  auto key = [&](int32_t i) {
    const CollectiveInfo& c = collectives[i];
    return std::make_tuple(c.pid, c.tid, c.start_ns);
  };
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return key(a) < key(b); });
  // Tasks in id order: the builder numbers a stream's tasks in measured order.
  for (uint32_t v = 0; v < g.task_count(); ++v) {
    const TaskId t(v);
    if (!depgraph::IsGpuKind(g.kind(t)) || !g.measured(t) ||
        depgraph::TaskClass(g, t) != depgraph::KernelClass::kCommunication) {
      continue;
    }
    const TaskId launch = LauncherOf(g, t);
    if (!launch.valid() || !g.measured(launch)) continue;
    const depgraph::Resource& thread = g.resource(g.resource_of(launch));
    const int64_t at = g.measured_start_ns(launch);
    const auto probe = std::make_tuple(thread.pid, thread.native_id, at);
    auto it = std::upper_bound(order.begin(), order.end(), probe,
                               [&](const auto& p, int32_t i) { return p < key(i); });
    if (it == order.begin()) continue;
    const int32_t i = *std::prev(it);
    const CollectiveInfo& c = collectives[i];
    if (c.pid != thread.pid || c.tid != thread.native_id || at > c.end_ns) continue;
    if (!out[i].valid()) out[i] = t;
  }
  return out;
}

}  // namespace reverie::transforms
