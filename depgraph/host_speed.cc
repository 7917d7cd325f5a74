#include "depgraph/host_speed.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "base/checked_math.h"
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

double StepAtHostSpeed(Graph& g, const SimOptions& options, double cpu_ratio, double copy_ratio) {
  // Two hostile traces' medians can be any ratio apart: capped like every
  // duration a trace may hold.
  auto scaled = [](int64_t ns, double ratio) {
    const double x = static_cast<double>(ns) * ratio;
    return x >= static_cast<double>(kMaxDurationNs) ? kMaxDurationNs : std::llround(x);
  };
  struct Saved {
    TaskId task;
    int64_t duration_ns, gap_ns;
  };
  std::vector<Saved> saved;
  // Given back whatever happens below (an allocation that fails included).
  absl::Cleanup restore = [&] {
    for (const Saved& s : saved) {
      g.set_duration_ns(s.task, s.duration_ns);
      g.set_gap_ns(s.task, s.gap_ns);
    }
  };
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t)) continue;
    const bool cpu = IsCpuKind(g.kind(t));
    if (!cpu && !(g.kind(t) == TaskKind::kMemcpy && IsPageableCopy(g.name(t)))) continue;
    saved.push_back({t, g.duration_ns(t), g.gap_ns(t)});
    const double ratio = cpu ? cpu_ratio : copy_ratio;
    g.set_duration_ns(t, scaled(g.duration_ns(t), ratio));
    if (cpu) g.set_gap_ns(t, scaled(g.gap_ns(t), ratio));
  }
  absl::StatusOr<SimResult> sim = Simulate(g, options);
  return sim.ok() ? sim->mean_step_ns() : 0;
}

std::string HostBoundPhrase(double sensitivity_pct) {
  if (!(sensitivity_pct >= kHostBoundPct)) return "";
  return absl::StrFormat(
      "the predicted step is bound by the host's CPU (%+.1f%% with it %.0f%% slower)",
      sensitivity_pct, kHostProbe * 100);
}

double HostSensitivityPct(Graph& g, const SimOptions& options, double step_ns) {
  if (!(step_ns > 0)) return -1;
  double slower = 0;
  try {
    slower = StepAtHostSpeed(g, options, 1 + kHostProbe, 1 + kHostProbe);
  } catch (const std::bad_alloc&) {
    return -1;  // a figure beside the answer, not worth failing it for
  }
  if (!(slower > 0)) return -1;
  return (slower - step_ns) / step_ns * 100;
}

}  // namespace reverie::depgraph
