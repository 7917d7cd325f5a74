#include "depgraph/host_speed.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/median.h"
#include "depgraph/runtime_api.h"

namespace reverie::depgraph {
namespace {

using Durations = absl::flat_hash_map<std::string, std::vector<int64_t>>;

Durations LaunchDurations(const Graph& g) {
  Durations by_api;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kCpuApi || !IsKernelLaunchApi(g.name(t))) continue;
    by_api[std::string(g.name(t))].push_back(g.duration_ns(t));
  }
  return by_api;
}

}  // namespace

HostSpeed CompareHostSpeed(const Graph& before, const Graph& after) {
  Durations b = LaunchDurations(before);
  Durations a = LaunchDurations(after);
  HostSpeed h;
  double log_sum = 0, weight_sum = 0;
  int64_t most = 0;
  // Sorted names: the combined ratio does not depend on hash order.
  std::vector<std::string> apis;
  for (const auto& [api, unused] : b) apis.push_back(api);
  std::sort(apis.begin(), apis.end());
  for (const std::string& api : apis) {
    auto it = a.find(api);
    std::vector<int64_t>& bd = b[api];
    if (it == a.end()) continue;
    std::vector<int64_t>& ad = it->second;
    const auto nb = static_cast<int64_t>(bd.size()), na = static_cast<int64_t>(ad.size());
    if (nb < kMinLaunchesCompared || na < kMinLaunchesCompared) continue;
    const double mb = MedianInPlace(bd), ma = MedianInPlace(ad);
    if (!(mb > 0) || !(ma > 0)) continue;
    const double w = static_cast<double>(std::min(nb, na));
    log_sum += w * std::log(ma / mb);
    weight_sum += w;
    h.before_calls += nb;
    h.after_calls += na;
    if (std::min(nb, na) > most) {
      most = std::min(nb, na);
      h.api = api;
      h.before_median_ns = mb;
      h.after_median_ns = ma;
    }
  }
  if (weight_sum > 0) h.ratio = std::exp(log_sum / weight_sum);
  return h;
}

}  // namespace reverie::depgraph
