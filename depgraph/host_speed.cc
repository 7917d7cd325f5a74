#include "depgraph/host_speed.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/median.h"
#include "depgraph/runtime_api.h"

namespace reverie::depgraph {
namespace {

// Ordered maps: the combined ratio does not depend on hash order.
template <typename Key>
using Durations = std::map<Key, std::vector<int64_t>>;

// The weighted geometric mean of AFTER's median over BEFORE's, each key
// compared with itself, weighted by the smaller count; keys with fewer
// than `min_count` in either run are skipped. `describe` names the key
// with the largest smaller count in the result.
template <typename Key, typename Describe>
SpeedRatio CompareMedians(Durations<Key>& b, Durations<Key>& a, int64_t min_count,
                          Describe describe) {
  SpeedRatio r;
  double log_sum = 0, weight_sum = 0;
  int64_t most = 0;
  for (auto& [key, bd] : b) {
    auto it = a.find(key);
    if (it == a.end()) continue;
    std::vector<int64_t>& ad = it->second;
    const auto nb = static_cast<int64_t>(bd.size()), na = static_cast<int64_t>(ad.size());
    if (nb < min_count || na < min_count) continue;
    const double mb = MedianInPlace(bd), ma = MedianInPlace(ad);
    if (!(mb > 0) || !(ma > 0)) continue;
    const double w = static_cast<double>(std::min(nb, na));
    log_sum += w * std::log(ma / mb);
    weight_sum += w;
    r.before_count += nb;
    r.after_count += na;
    if (std::min(nb, na) > most) {
      most = std::min(nb, na);
      describe(key, &r);
      r.before_median_ns = mb;
      r.after_median_ns = ma;
    }
  }
  if (weight_sum > 0) r.ratio = std::exp(log_sum / weight_sum);
  return r;
}

Durations<std::string> LaunchDurations(const Graph& g) {
  Durations<std::string> by_api;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kCpuApi || !IsKernelLaunchApi(g.name(t))) continue;
    by_api[std::string(g.name(t))].push_back(g.duration_ns(t));
  }
  return by_api;
}

using CopyKey = std::pair<std::string, int64_t>;  // name, bytes

Durations<CopyKey> PageableCopyDurations(const Graph& g) {
  Durations<CopyKey> by_copy;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kMemcpy || !IsPageableCopy(g.name(t))) continue;
    by_copy[{std::string(g.name(t)), g.bytes(t)}].push_back(g.duration_ns(t));
  }
  return by_copy;
}

}  // namespace

bool IsPageableCopy(std::string_view name) {
  return name.find("Pageable") != std::string_view::npos;
}

HostSpeed CompareHostSpeed(const Graph& before, const Graph& after) {
  HostSpeed h;
  Durations<std::string> bl = LaunchDurations(before), al = LaunchDurations(after);
  h.launches = CompareMedians(bl, al, kMinLaunchesCompared,
                              [](const std::string& api, SpeedRatio* r) { r->name = api; });
  Durations<CopyKey> bc = PageableCopyDurations(before), ac = PageableCopyDurations(after);
  h.pageable_copies =
      CompareMedians(bc, ac, kMinCopiesCompared, [](const CopyKey& copy, SpeedRatio* r) {
        r->name = copy.first;
        r->bytes = copy.second;
      });
  return h;
}

}  // namespace reverie::depgraph
