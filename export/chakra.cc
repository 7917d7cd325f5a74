#include "export/chakra.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/sv.h"
#include "depgraph/kernel_class.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace reverie::exporter {
namespace {

using depgraph::Edge;
using depgraph::Graph;
using depgraph::SimResult;
using depgraph::TaskId;
using depgraph::TaskKind;

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// One node to write: a live task, or the gap after one.
struct Item {
  TaskId task;
  bool gap = false;
  int64_t start_ns = 0;  // simulated, relative to the earliest simulated start
  int64_t end_ns = 0;
};

int64_t RoundUs(int64_t ns) { return ns <= 0 ? 0 : (ns + 500) / 1000; }

chakra_et::AttributeProto* Attr(chakra_et::Node* node, const char* name) {
  chakra_et::AttributeProto* a = node->add_attr();
  a->set_name(name);
  return a;
}

// What the Collective records say about sizes (collective_sizes.h).
struct RecordSizes {
  RecordedCollectiveSizes match;
  std::array<bool, chakra_et::CollectiveCommType_ARRAYSIZE> mismatched{};  // per type
};

// Writes `msg` preceded by its length as a varint (Chakra's framing).
void WriteDelimited(const google::protobuf::MessageLite& msg,
                    google::protobuf::io::CodedOutputStream* out) {
  out->WriteVarint32(static_cast<uint32_t>(msg.ByteSizeLong()));
  msg.SerializeWithCachedSizes(out);
}

// Fills `node` for `item`, counting what the format cannot say.
void FillNode(const Graph& g, const Item& item, const RecordSizes& records, ChakraStats* stats,
              chakra_et::Node* node) {
  const TaskId t = item.task;
  const bool cpu = depgraph::IsCpuKind(g.kind(t));
  node->set_start_time_micros(static_cast<uint64_t>(RoundUs(item.start_ns)));
  const int64_t duration_us = RoundUs(item.end_ns) - RoundUs(item.start_ns);
  node->set_duration_micros(static_cast<uint64_t>(duration_us));
  if (duration_us == 0 && item.end_ns > item.start_ns) ++stats->zero_us_nodes;
  Attr(node, "is_cpu_op")->set_bool_val(cpu);
  if (item.gap) {
    node->set_name(absl::StrCat("[gap] ", g.resource(g.resource_of(t)).name));
    node->set_type(chakra_et::COMP_NODE);
    ++stats->gap_nodes;
    return;
  }
  node->set_name(std::string(g.name(t)));
  if (cpu) {
    node->set_type(chakra_et::COMP_NODE);
    ++stats->cpu_nodes;
    return;
  }
  if (!depgraph::IsCommunicationTask(g, t)) {
    node->set_type(chakra_et::COMP_NODE);
    ++stats->gpu_nodes;
    return;
  }
  const std::optional<chakra_et::CollectiveCommType> type = CollectiveFromName(g.name(t));
  if (!type.has_value()) {
    node->set_type(chakra_et::COMP_NODE);
    ++stats->comm_untyped;
    return;
  }
  node->set_type(chakra_et::COMM_COLL_NODE);
  Attr(node, "comm_type")->set_int64_val(*type);
  int64_t bytes = std::max<int64_t>(0, g.bytes(t));
  if (bytes == 0) {
    bytes = records.match.bytes_of_task[t.value()];
    if (bytes > 0) ++stats->comm_record_sized;
  }
  Attr(node, "comm_size")->set_int64_val(bytes);
  if (bytes == 0) {
    ++stats->comm_unsized;
    // A script's comm task is no recorded kernel: never paired, never a mismatch.
    if (records.mismatched[*type] && g.kind(t) == TaskKind::kKernel &&
        g.measured(t)) {
      ++stats->comm_count_mismatch;
    }
  }
  ++stats->comm_nodes;
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

absl::StatusOr<ChakraTrace> ExportChakra(const Graph& g, const SimResult& sim,
                                         const ChakraOptions& options) {
  const size_t n = g.task_count();
  if (sim.start_ns.size() != n || sim.end_ns.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat("simulation has ", sim.start_ns.size(),
                                                   " tasks, the graph ", n));
  }
  ChakraTrace out;
  ChakraStats& stats = out.stats;
  RecordSizes records;
  records.match = MatchCollectiveRecords(g, options.collectives);
  for (const CollectiveTypeMatch& m : records.match.types) {
    // No sized record of a type at all is plain "unsized", not a disagreement.
    records.mismatched[m.type] = m.records > 0 && !m.matched();
  }
  out.collective_types = records.match.types;

  int64_t origin = std::numeric_limits<int64_t>::max();
  for (uint32_t t = 0; t < n; ++t) {
    if (g.removed(TaskId(t))) continue;
    if (sim.start_ns[t] < 0 || sim.end_ns[t] < sim.start_ns[t]) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", t, " (", Sv(g.name(TaskId(t))), ") has no simulated time"));
    }
    origin = std::min(origin, sim.start_ns[t]);
  }

  // Items: live tasks in TaskId order, then the gaps that delay a successor.
  std::vector<Item> items;
  items.reserve(g.live_task_count());
  std::vector<uint32_t> item_of(n, kNone), gap_of(n, kNone);
  for (uint32_t t = 0; t < n; ++t) {
    if (g.removed(TaskId(t))) continue;
    item_of[t] = static_cast<uint32_t>(items.size());
    items.push_back({TaskId(t), false, sim.start_ns[t] - origin, sim.end_ns[t] - origin});
  }
  for (uint32_t t = 0; t < n; ++t) {
    const TaskId id(t);
    if (g.removed(id) || g.gap_ns(id) <= 0) continue;
    if (!g.resource(g.resource_of(id)).ordered) {
      ++stats.channel_gaps;
      continue;
    }
    if (!g.next_on_resource(id).valid()) continue;
    gap_of[t] = static_cast<uint32_t>(items.size());
    const int64_t end = sim.end_ns[t] - origin;
    items.push_back({id, true, end, end + g.gap_ns(id)});
  }

  // (child, parent) pairs over item indices, deduplicated.
  std::vector<std::pair<uint32_t, uint32_t>> deps;
  deps.reserve(2 * items.size() + g.live_edge_count());
  for (uint32_t t = 0; t < n; ++t) {
    const TaskId id(t);
    if (g.removed(id)) continue;
    if (gap_of[t] != kNone) deps.emplace_back(gap_of[t], item_of[t]);
    const TaskId prev = g.prev_on_resource(id);
    if (g.resource(g.resource_of(id)).ordered && prev.valid()) {
      const uint32_t p = gap_of[prev.value()] != kNone ? gap_of[prev.value()] : item_of[prev.value()];
      deps.emplace_back(item_of[t], p);
    }
  }
  for (const Edge& e : g.edges()) {
    if (e.removed || g.removed(e.src) || g.removed(e.dst)) continue;
    deps.emplace_back(item_of[e.dst.value()], item_of[e.src.value()]);
    if (e.delay_ns != 0) {
      ++stats.delayed_edges;
      stats.dropped_delay_ns += e.delay_ns;
    }
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  const size_t m = items.size();
  std::vector<uint32_t> in_off(m + 1, 0), out_off(m + 1, 0), children(deps.size());
  for (const auto& [child, parent] : deps) {
    ++in_off[child + 1];
    ++out_off[parent + 1];
  }
  for (size_t i = 0; i < m; ++i) {
    in_off[i + 1] += in_off[i];
    out_off[i + 1] += out_off[i];
  }
  {
    std::vector<uint32_t> fill(out_off.begin(), out_off.end() - 1);
    for (const auto& [child, parent] : deps) children[fill[parent]++] = child;
  }

  // Kahn's order, earliest simulated start first, so ids follow the schedule.
  std::vector<uint32_t> pending(m), id_of(m, kNone), order;
  order.reserve(m);
  using Key = std::pair<int64_t, uint32_t>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
  for (uint32_t i = 0; i < m; ++i) {
    pending[i] = in_off[i + 1] - in_off[i];
    if (pending[i] == 0) ready.push({items[i].start_ns, i});
  }
  while (!ready.empty()) {
    const uint32_t i = ready.top().second;
    ready.pop();
    id_of[i] = static_cast<uint32_t>(order.size());
    order.push_back(i);
    for (uint32_t k = out_off[i]; k < out_off[i + 1]; ++k) {
      const uint32_t c = children[k];
      if (--pending[c] == 0) ready.push({items[c].start_ns, c});
    }
  }
  if (order.size() != m) {
    for (uint32_t i = 0; i < m; ++i) {
      if (id_of[i] != kNone) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          "dependency cycle through task ", items[i].task.value(), " (",
          Sv(g.name(items[i].task)), ")"));
    }
  }

  google::protobuf::io::StringOutputStream sink(&out.bytes);
  google::protobuf::io::CodedOutputStream coded(&sink);
  chakra_et::GlobalMetadata meta;
  meta.set_version(kChakraSchemaVersion);
  chakra_et::AttributeProto* producer = meta.add_attr();
  producer->set_name("producer");
  producer->set_string_val("reverie export --chakra");
  WriteDelimited(meta, &coded);

  chakra_et::Node node;
  std::vector<uint64_t> parents;
  for (uint32_t i : order) {
    node.Clear();
    node.set_id(id_of[i]);
    FillNode(g, items[i], records, &stats, &node);
    parents.clear();
    for (uint32_t k = in_off[i]; k < in_off[i + 1]; ++k) parents.push_back(id_of[deps[k].second]);
    std::sort(parents.begin(), parents.end());
    for (uint64_t p : parents) node.add_data_deps(p);
    WriteDelimited(node, &coded);
  }
  coded.Trim();
  out.node_of_task.assign(n, -1);
  out.gap_node_of_task.assign(n, -1);
  for (uint32_t t = 0; t < n; ++t) {
    if (item_of[t] != kNone) out.node_of_task[t] = id_of[item_of[t]];
    if (gap_of[t] != kNone) out.gap_node_of_task[t] = id_of[gap_of[t]];
  }
  stats.nodes = static_cast<int64_t>(m);
  stats.dependencies = static_cast<int64_t>(deps.size());
  if (coded.HadError()) return absl::InternalError("cannot serialize the Chakra trace");
  return out;
}

std::string ChakraRankPath(std::string_view prefix, int rank) {
  return absl::StrCat(Sv(prefix), ".", rank, ".et");
}

absl::StatusOr<std::vector<std::string>> WriteChakraRanks(const ChakraTrace& trace,
                                                          std::string_view prefix, int ranks) {
  if (ranks < 1) return absl::InvalidArgumentError(absl::StrCat("ranks must be >= 1, got ", ranks));
  std::vector<std::string> paths;
  for (int r = 0; r < ranks; ++r) {
    std::string path = ChakraRankPath(prefix, r);
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) {
      return absl::PermissionDeniedError(
          absl::StrCat(path, ": cannot open for writing: ", std::strerror(errno)));
    }
    f.write(trace.bytes.data(), static_cast<std::streamsize>(trace.bytes.size()));
    f.close();
    if (!f) {
      return absl::DataLossError(absl::StrCat(path, ": write failed: ", std::strerror(errno)));
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

absl::StatusOr<ChakraFile> ReadChakra(std::string_view bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  ChakraFile file;
  auto read_one = [&](google::protobuf::MessageLite* msg) {
    uint32_t size = 0;
    if (!in.ReadVarint32(&size)) return false;
    const auto limit = in.PushLimit(static_cast<int>(size));
    const bool ok = msg->ParseFromCodedStream(&in) && in.BytesUntilLimit() == 0;
    in.PopLimit(limit);
    return ok;
  };
  if (bytes.empty()) return absl::InvalidArgumentError("empty Chakra trace: no GlobalMetadata");
  if (!read_one(&file.metadata)) return absl::DataLossError("malformed GlobalMetadata");
  while (in.CurrentPosition() < static_cast<int>(bytes.size())) {
    chakra_et::Node& node = file.nodes.emplace_back();
    if (!read_one(&node)) {
      return absl::DataLossError(
          absl::StrCat("malformed or truncated node message #", file.nodes.size() - 1));
    }
  }
  return file;
}

}  // namespace reverie::exporter
