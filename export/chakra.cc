#include "export/chakra.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "base/topological_order.h"
#include "depgraph/kernel_class.h"
#include "export/comm_typing.h"

namespace reverie::exporter {
namespace {

using depgraph::Graph;
using depgraph::SimResult;
using depgraph::TaskId;

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// One node to write: a live task, or the gap after one.
struct Item {
  TaskId task;
  bool gap = false;
  int64_t start_ns = 0;  // simulated, relative to the earliest simulated start
  int64_t end_ns = 0;
};

// Fills `node` for `item`, counting what the format cannot say.
void FillNode(const Graph& g, const Item& item, const CommTyping& comm, ChakraStats* stats,
              chakra_et::Node* node) {
  const TaskId t = item.task;
  const bool cpu = depgraph::IsCpuKind(g.kind(t));
  node->set_start_time_micros(static_cast<uint64_t>(RoundUs(item.start_ns)));
  const int64_t duration_us = RoundUs(item.end_ns) - RoundUs(item.start_ns);
  node->set_duration_micros(static_cast<uint64_t>(duration_us));
  if (duration_us == 0 && item.end_ns > item.start_ns) ++stats->zero_us_nodes;
  AddAttr(node, "is_cpu_op")->set_bool_val(cpu);
  const int64_t written_ns = duration_us * 1000;
  if (item.gap) {
    node->set_name(absl::StrCat("[gap] ", g.resource(g.resource_of(t)).name));
    node->set_type(chakra_et::COMP_NODE);
    ++stats->gap_nodes;
    (cpu ? stats->cpu_node_ns : stats->gpu_node_ns) += written_ns;
    return;
  }
  node->set_name(std::string(g.name(t)));
  const CommRole role = comm.role[t.value()];
  const bool sized = comm.bytes[t.value()] > 0;
  if (role != CommRole::kCollective || !sized) {
    node->set_type(chakra_et::COMP_NODE);
    if (cpu) {
      ++stats->cpu_nodes;
    } else if (role == CommRole::kNone) {
      ++stats->gpu_nodes;
    } else if (role != CommRole::kCollective) {
      ++stats->comm_untyped;
    }
    (cpu ? stats->cpu_node_ns : stats->gpu_node_ns) += written_ns;
    return;
  }
  node->set_type(chakra_et::COMM_COLL_NODE);
  AddAttr(node, "comm_type")->set_int64_val(comm.type[t.value()]);
  AddAttr(node, "comm_size")->set_int64_val(comm.bytes[t.value()]);
  ++stats->comm_nodes;
}

// The CPU threads and GPU streams that hold live tasks.
void CountLanes(const Graph& g, ChakraStats* stats) {
  for (uint32_t r = 0; r < g.resource_count(); ++r) {
    const depgraph::ResourceId id(r);
    if (!g.first_on_resource(id).valid()) continue;
    const depgraph::ResourceKind kind = g.resource(id).kind;
    stats->cpu_threads += kind == depgraph::ResourceKind::kCpuThread;
    stats->gpu_streams += kind == depgraph::ResourceKind::kGpuStream;
  }
}

}  // namespace

std::optional<chakra_et::CollectiveCommType> CollectiveFromName(std::string_view name) {
  switch (depgraph::CollectiveOfName(name)) {
    case depgraph::Collective::kAllReduce: return chakra_et::ALL_REDUCE;
    case depgraph::Collective::kReduceScatter: return chakra_et::REDUCE_SCATTER;
    case depgraph::Collective::kAllGather: return chakra_et::ALL_GATHER;
    case depgraph::Collective::kAllToAll: return chakra_et::ALL_TO_ALL;
    case depgraph::Collective::kBroadcast: return chakra_et::BROADCAST;
    default: return std::nullopt;  // ASTRA-sim simulates only the five above
  }
}

namespace {

// Live tasks in TaskId order, then the gaps that delay a successor.
struct ChakraItems {
  std::vector<Item> items;
  std::vector<uint32_t> item_of, gap_of;  // per task: its item, its gap's item (kNone)
};

ChakraItems MakeChakraItems(const Graph& g, const SimResult& sim, int64_t origin, ChakraStats* stats) {
  const size_t n = g.task_count();
  ChakraItems out;
  out.items.reserve(g.live_task_count());
  out.item_of.assign(n, kNone);
  out.gap_of.assign(n, kNone);
  for (uint32_t t = 0; t < n; ++t) {
    if (g.removed(TaskId(t))) continue;
    out.item_of[t] = static_cast<uint32_t>(out.items.size());
    out.items.push_back({TaskId(t), false, sim.start_ns[t] - origin, sim.end_ns[t] - origin});
  }
  for (uint32_t t = 0; t < n; ++t) {
    const TaskId id(t);
    if (g.removed(id) || g.gap_ns(id) <= 0) continue;
    if (!g.resource(g.resource_of(id)).ordered) {
      ++stats->channel_gaps;
      continue;
    }
    if (!g.next_on_resource(id).valid()) continue;
    out.gap_of[t] = static_cast<uint32_t>(out.items.size());
    const int64_t end = sim.end_ns[t] - origin;
    out.items.push_back({id, true, end, end + g.gap_ns(id)});
  }
  return out;
}

// (child, parent) pairs over item indices, deduplicated and sorted, with
// their compressed parent (in) and child (out) lists.
struct ChakraDeps {
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  std::vector<uint32_t> in_off, out_off, children;
};

ChakraDeps MakeChakraDeps(const Graph& g, const ChakraItems& it, ChakraStats* stats) {
  ChakraDeps d;
  std::vector<std::pair<uint32_t, uint32_t>>& deps = d.pairs;
  deps.reserve(2 * it.items.size() + g.live_edge_count());
  for (uint32_t t = 0; t < g.task_count(); ++t) {
    const TaskId id(t);
    if (g.removed(id)) continue;
    if (it.gap_of[t] != kNone) deps.emplace_back(it.gap_of[t], it.item_of[t]);
    const TaskId prev = g.prev_on_resource(id);
    if (g.resource(g.resource_of(id)).ordered && prev.valid()) {
      const uint32_t p = it.gap_of[prev.value()] != kNone ? it.gap_of[prev.value()] : it.item_of[prev.value()];
      deps.emplace_back(it.item_of[t], p);
    }
  }
  for (const depgraph::Edge& e : g.edges()) {
    if (e.removed || g.removed(e.src) || g.removed(e.dst)) continue;
    deps.emplace_back(it.item_of[e.dst.value()], it.item_of[e.src.value()]);
    if (e.delay_ns != 0) {
      ++stats->delayed_edges;
      stats->dropped_delay_ns += e.delay_ns;
    }
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  const size_t m = it.items.size();
  d.in_off.assign(m + 1, 0);
  d.out_off.assign(m + 1, 0);
  d.children.resize(deps.size());
  for (const auto& [child, parent] : deps) {
    ++d.in_off[child + 1];
    ++d.out_off[parent + 1];
  }
  for (size_t i = 0; i < m; ++i) {
    d.in_off[i + 1] += d.in_off[i];
    d.out_off[i + 1] += d.out_off[i];
  }
  std::vector<uint32_t> fill(d.out_off.begin(), d.out_off.end() - 1);
  for (const auto& [child, parent] : deps) d.children[fill[parent]++] = child;
  return d;
}

}  // namespace

absl::StatusOr<ChakraTrace> ExportChakra(const Graph& g, const SimResult& sim,
                                         const ChakraOptions& options) {
  const size_t n = g.task_count();
  if (sim.start_ns.size() != n || sim.end_ns.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat("simulation has ", sim.start_ns.size(),
                                                   " tasks, the graph ", n));
  }
  ChakraTrace out;
  ChakraStats& stats = out.stats;
  const CommTyping comm = TypeCommunication(g, options.collectives);
  out.collective_types = comm.order_pairing;
  stats.typed_by_record = comm.typed_by_record;
  CountLanes(g, &stats);

  int64_t origin = std::numeric_limits<int64_t>::max();
  for (uint32_t t = 0; t < n; ++t) {
    if (g.removed(TaskId(t))) continue;
    if (sim.start_ns[t] < 0 || sim.end_ns[t] < sim.start_ns[t]) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", t, " (", Sv(g.name(TaskId(t))), ") has no simulated time"));
    }
    origin = std::min(origin, sim.start_ns[t]);
    stats.span_ns = std::max(stats.span_ns, sim.end_ns[t]);
  }
  if (origin != std::numeric_limits<int64_t>::max()) stats.span_ns -= origin;

  const ChakraItems it = MakeChakraItems(g, sim, origin, &stats);
  const std::vector<Item>& items = it.items;
  const std::vector<uint32_t>& item_of = it.item_of;
  const std::vector<uint32_t>& gap_of = it.gap_of;
  const ChakraDeps d = MakeChakraDeps(g, it, &stats);
  const std::vector<std::pair<uint32_t, uint32_t>>& deps = d.pairs;
  const std::vector<uint32_t>& in_off = d.in_off;
  const std::vector<uint32_t>& out_off = d.out_off;
  const std::vector<uint32_t>& children = d.children;
  const size_t m = items.size();

  // Kahn's order, earliest simulated start first, so ids follow the schedule.
  std::vector<uint32_t> pending(m), id_of(m, kNone), order;
  order.reserve(m);
  for (uint32_t i = 0; i < m; ++i) pending[i] = in_off[i + 1] - in_off[i];
  const TopologicalResult sorted = TopologicalOrderBy(
      std::move(pending),
      [&](uint32_t i, auto visit) {
        for (uint32_t k = out_off[i]; k < out_off[i + 1]; ++k) visit(children[k]);
      },
      [&](uint32_t i) { return items[i].start_ns; },
      [&](uint32_t i) {
        id_of[i] = static_cast<uint32_t>(order.size());
        order.push_back(i);
      });
  if (!sorted.complete()) return depgraph::CycleError(g, items[sorted.FirstUnordered()].task);

  ChakraStreamWriter writer(&out.bytes, "reverie export --chakra --chakra-detail kernels");

  chakra_et::Node node;
  std::vector<uint64_t> parents;
  for (uint32_t i : order) {
    node.Clear();
    node.set_id(id_of[i]);
    FillNode(g, items[i], comm, &stats, &node);
    parents.clear();
    for (uint32_t k = in_off[i]; k < in_off[i + 1]; ++k) parents.push_back(id_of[deps[k].second]);
    std::sort(parents.begin(), parents.end());
    for (uint64_t p : parents) node.add_data_deps(p);
    writer.Add(node);
  }
  out.node_of_task.assign(n, -1);
  out.gap_node_of_task.assign(n, -1);
  for (uint32_t t = 0; t < n; ++t) {
    if (item_of[t] != kNone) out.node_of_task[t] = id_of[item_of[t]];
    if (gap_of[t] != kNone) out.gap_node_of_task[t] = id_of[gap_of[t]];
  }
  stats.nodes = static_cast<int64_t>(m);
  stats.dependencies = static_cast<int64_t>(deps.size());
  for (uint32_t t = 0; t < n; ++t) {
    if (comm.role[t] == CommRole::kCollective && comm.bytes[t] == 0) ++stats.comm_unsized;
    if (comm.role[t] == CommRole::kCollective && comm.bytes[t] > 0 && g.bytes(TaskId(t)) <= 0) {
      ++stats.comm_record_sized;
    }
  }
  stats.comm_count_mismatch = comm.count_mismatch;
  REVERIE_RETURN_IF_ERROR(writer.Finish());
  return out;
}

absl::StatusOr<std::vector<std::string>> WriteChakraRanks(const ChakraTrace& trace,
                                                          std::string_view prefix, int ranks) {
  return WriteChakraFiles(prefix, ranks, [&](int) -> const std::string& { return trace.bytes; });
}

}  // namespace reverie::exporter
