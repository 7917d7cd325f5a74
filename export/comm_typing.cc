#include "export/comm_typing.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <tuple>

#include "depgraph/kernel_class.h"
#include "export/chakra.h"

namespace reverie::exporter {
namespace {

// A record's nesting depth is small (record_param_comms around an nccl:*
// annotation); looking this many records back from the launch finds the
// outermost one without a quadratic scan.
constexpr int kMaxRecordsBack = 16;

// Records sorted by (pid, tid, start), for the record around a launch.
class RecordIndex {
 public:
  explicit RecordIndex(std::span<const CollectiveRecord> records) {
    order_.reserve(records.size());
    for (const CollectiveRecord& r : records) order_.push_back(&r);
    std::sort(order_.begin(), order_.end(), [](const CollectiveRecord* a, const CollectiveRecord* b) {
      return std::tie(a->pid, a->tid, a->start_ns) < std::tie(b->pid, b->tid, b->start_ns);
    });
  }

  // The record on thread (pid, tid) whose span holds `ns`: a sized one when
  // several nest, else the innermost; nullptr when none does.
  const CollectiveRecord* Around(int64_t pid, int64_t tid, int64_t ns) const {
    auto it = std::upper_bound(order_.begin(), order_.end(), std::make_tuple(pid, tid, ns),
                               [](const std::tuple<int64_t, int64_t, int64_t>& key,
                                  const CollectiveRecord* r) {
                                 return key < std::tie(r->pid, r->tid, r->start_ns);
                               });
    const CollectiveRecord* found = nullptr;
    for (int back = 0; back < kMaxRecordsBack && it != order_.begin(); ++back) {
      const CollectiveRecord* r = *--it;
      if (r->pid != pid || r->tid != tid) break;
      if (r->end_ns < ns) continue;
      if (r->bytes > 0) return r;
      if (found == nullptr) found = r;
    }
    return found;
  }

 private:
  std::vector<const CollectiveRecord*> order_;
};

// The record around the CPU call that launched recorded kernel `t`.
const CollectiveRecord* LaunchRecord(const depgraph::Graph& g, depgraph::TaskId t,
                                     const RecordIndex& index) {
  if (g.kind(t) != depgraph::TaskKind::kKernel || !g.measured(t)) return nullptr;
  const depgraph::Adjacency& adj = g.adjacency();
  for (const auto edge : adj.in(t)) {
    const depgraph::Edge& e = g.edge(edge);
    if (e.kind != depgraph::EdgeKind::kLaunch || !g.measured(e.src)) continue;
    const depgraph::Resource& thread = g.resource(g.resource_of(e.src));
    if (thread.kind != depgraph::ResourceKind::kCpuThread) continue;
    return index.Around(thread.pid, thread.native_id, g.measured_start_ns(e.src));
  }
  return nullptr;
}

std::string Normalized(std::string_view name) {
  std::string s;
  s.reserve(name.size());
  for (char c : name) {
    if (c == '_' || c == '-' || c == ' ') continue;
    s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return s;
}

}  // namespace

P2p P2pOfName(std::string_view name) {
  std::string s = Normalized(name);
  if (s.rfind("nccl:", 0) == 0) s = s.substr(5);
  if (s.find("sendrecv") != std::string::npos) return P2p::kNone;
  if (s == "send" || s == "isend" || s.rfind("ncclkernelsend", 0) == 0 ||
      s.rfind("nccldevkernelsend", 0) == 0) {
    return P2p::kSend;
  }
  if (s == "recv" || s == "irecv" || s.rfind("ncclkernelrecv", 0) == 0 ||
      s.rfind("nccldevkernelrecv", 0) == 0) {
    return P2p::kRecv;
  }
  return P2p::kNone;
}

std::vector<CollectiveRecord> CollectiveRecordsOf(const Trace& trace) {
  std::vector<CollectiveRecord> out;
  for (const proto::Collective& c : trace.events().collectives()) {
    if (c.bytes() < 0 || c.name_sid() >= trace.string_count()) continue;
    out.push_back({std::string(trace.String(c.name_sid())), c.bytes(), c.group_size(), c.pid(),
                   c.tid(), c.start_ns(), std::max(c.start_ns(), c.end_ns())});
  }
  std::stable_sort(out.begin(), out.end(), [](const CollectiveRecord& a, const CollectiveRecord& b) {
    return a.start_ns < b.start_ns;
  });
  return out;
}

CommTyping TypeCommunication(const depgraph::Graph& g, std::span<const CollectiveRecord> records) {
  const size_t n = g.task_count();
  CommTyping out;
  out.role.assign(n, CommRole::kNone);
  out.type.assign(n, chakra_et::ALL_REDUCE);
  out.bytes.assign(n, 0);
  const RecordedCollectiveSizes by_order = MatchCollectiveRecords(g, records);
  out.order_pairing = by_order.types;
  std::vector<bool> mismatched(chakra_et::CollectiveCommType_ARRAYSIZE, false);
  for (const CollectiveTypeMatch& m : by_order.types) mismatched[m.type] = m.records > 0 && !m.matched();
  const RecordIndex index(records);

  for (uint32_t v = 0; v < n; ++v) {
    const depgraph::TaskId t(v);
    if (g.removed(t) || !depgraph::IsCommunicationTask(g, t)) continue;
    const CollectiveRecord* around = LaunchRecord(g, t, index);
    std::optional<chakra_et::CollectiveCommType> type = CollectiveFromName(g.name(t));
    P2p p2p = P2pOfName(g.name(t));
    if (!type.has_value() && p2p == P2p::kNone && around != nullptr) {
      type = CollectiveFromName(around->name);
      p2p = P2pOfName(around->name);
      if (type.has_value() || p2p != P2p::kNone) ++out.typed_by_record;
    }
    if (type.has_value()) {
      out.role[v] = CommRole::kCollective;
      out.type[v] = *type;
    } else if (p2p != P2p::kNone) {
      out.role[v] = p2p == P2p::kSend ? CommRole::kSend : CommRole::kRecv;
    } else {
      out.role[v] = CommRole::kOther;
      ++out.other;
      continue;
    }
    const bool around_fits =
        around != nullptr && around->bytes > 0 &&
        (type.has_value() ? CollectiveFromName(around->name) == type : P2pOfName(around->name) == p2p);
    int64_t bytes = std::max<int64_t>(0, g.bytes(t));
    if (bytes == 0 && around_fits) bytes = around->bytes;
    if (bytes == 0 && type.has_value()) bytes = by_order.bytes_of_task[v];
    if (bytes > 0 && g.bytes(t) <= 0) ++out.sized_by_record;
    out.bytes[v] = bytes;
    if (bytes > 0) continue;
    ++out.unsized;
    // A script's comm task is no recorded kernel: never paired, never a mismatch.
    if (type.has_value() && mismatched[*type] && g.kind(t) == depgraph::TaskKind::kKernel &&
        g.measured(t)) {
      ++out.count_mismatch;
    }
  }
  return out;
}

}  // namespace reverie::exporter
