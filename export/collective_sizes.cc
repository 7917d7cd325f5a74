#include "export/collective_sizes.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "depgraph/kernel_class.h"
#include "export/chakra.h"

namespace reverie::exporter {

using depgraph::Graph;
using depgraph::TaskId;
using depgraph::TaskKind;

RecordedCollectiveSizes MatchCollectiveRecords(const Graph& g,
                                               std::span<const CollectiveRecord> records) {
  // Indexed by CollectiveCommType; only the five CollectiveFromName returns occur.
  constexpr int kTypes = chakra_et::CollectiveCommType_ARRAYSIZE;
  std::array<std::vector<int64_t>, kTypes> sized;  // record bytes, in measured order
  std::array<std::vector<std::pair<int64_t, uint32_t>>, kTypes> kernels;  // (start, task)

  for (const CollectiveRecord& r : records) {
    if (r.bytes <= 0) continue;
    const std::optional<chakra_et::CollectiveCommType> type = CollectiveFromName(r.name);
    if (type.has_value()) sized[*type].push_back(r.bytes);
  }
  const uint32_t n = static_cast<uint32_t>(g.task_count());
  for (uint32_t t = 0; t < n; ++t) {
    const TaskId id(t);
    if (g.kind(id) != TaskKind::kKernel || !g.measured(id) ||
        !depgraph::IsCommunicationTask(g, id)) {
      continue;
    }
    const std::optional<chakra_et::CollectiveCommType> type = CollectiveFromName(g.name(id));
    if (type.has_value()) kernels[*type].emplace_back(g.measured_start_ns(id), t);
  }

  RecordedCollectiveSizes out;
  out.bytes_of_task.assign(n, 0);
  for (int type = 0; type < kTypes; ++type) {
    std::vector<std::pair<int64_t, uint32_t>>& k = kernels[type];
    const std::vector<int64_t>& r = sized[type];
    if (k.empty() && r.empty()) continue;
    out.types.push_back({static_cast<chakra_et::CollectiveCommType>(type),
                         static_cast<int64_t>(k.size()), static_cast<int64_t>(r.size())});
    if (k.size() != r.size()) continue;
    std::sort(k.begin(), k.end());  // measured start, then TaskId
    for (size_t i = 0; i < k.size(); ++i) out.bytes_of_task[k[i].second] = r[i];
  }
  return out;
}

}  // namespace reverie::exporter
