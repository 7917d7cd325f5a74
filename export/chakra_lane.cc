#include "export/chakra_lane.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "export/chakra_io.h"

namespace reverie::exporter {
namespace {

using depgraph::Graph;
using depgraph::SimResult;
using depgraph::TaskId;

using Interval = std::pair<int64_t, int64_t>;
constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

// The rank's tasks and their simulated times, with the lookups the
// projection needs.
class RankView {
 public:
  explicit RankView(const LaneRequest& r)
      : g_(*r.graph), sim_(*r.sim), owner_(r.rank_of_resource), rank_(r.rank),
        net_(g_.task_count(), -1) {
    // Out-of-range tasks are refused by ExportLane just after (found by the
    // sanitize build: this wrote past net_).
    for (size_t k = 0; k < r.comms.size(); ++k) {
      if (r.comms[k].task.value() < net_.size()) net_[r.comms[k].task.value()] = static_cast<int32_t>(k);
    }
  }

  bool Mine(TaskId t) const {
    return !g_.removed(t) && (owner_.empty() || owner_[g_.resource_of(t).value()] == rank_);
  }
  int32_t NetIndex(TaskId t) const { return net_[t.value()]; }
  int64_t Start(TaskId t) const { return sim_.start_ns[t.value()]; }
  int64_t End(TaskId t) const { return sim_.end_ns[t.value()]; }
  bool Ordered(TaskId t) const { return g_.resource(g_.resource_of(t)).ordered; }
  const Graph& graph() const { return g_; }

  // Calls f(parent, ready_ns) for each dependency of `t`: edge parents (end +
  // delay) and the predecessor on an ordered resource (end + gap).
  template <typename F>
  void ForEachParent(TaskId t, F f) const {
    const depgraph::Adjacency& adj = g_.adjacency();
    for (const auto edge : adj.in(t)) {
      const depgraph::Edge& e = g_.edge(edge);
      f(e.src, End(e.src) + e.delay_ns);
    }
    const TaskId prev = g_.prev_on_resource(t);
    if (prev.valid() && Ordered(t)) f(prev, End(prev) + g_.gap_ns(prev));
  }
  template <typename F>
  void ForEachChild(TaskId t, F f) const {
    const depgraph::Adjacency& adj = g_.adjacency();
    for (const auto edge : adj.out(t)) {
      f(g_.edge(edge).dst);
    }
    const TaskId next = g_.next_on_resource(t);
    if (next.valid() && Ordered(t)) f(next);
  }

 private:
  const Graph& g_;
  const SimResult& sim_;
  std::span<const int32_t> owner_;
  int32_t rank_;
  std::vector<int32_t> net_;
};

std::vector<Interval> MergeIntervals(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// Step 1: the rank's busy time within [w0, w1] and its last end.
std::vector<Interval> BusyTime(const RankView& v, const SimWindow& w, int64_t* rank_end,
                               std::vector<std::pair<int64_t, uint32_t>>* lane_starts) {
  const Graph& g = v.graph();
  std::vector<Interval> busy;
  *rank_end = w.start_ns;
  auto add = [&](int64_t a, int64_t b) {
    a = std::max(a, w.start_ns);
    b = std::min(b, w.end_ns);
    if (b > a) busy.emplace_back(a, b);
  };
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (!v.Mine(t) || v.Start(t) >= w.end_ns || v.End(t) < w.start_ns) continue;
    *rank_end = std::max(*rank_end, std::min(v.End(t), w.end_ns));
    if (v.NetIndex(t) >= 0) continue;
    lane_starts->emplace_back(v.Start(t), i);
    add(v.Start(t), v.End(t));
    if (v.Ordered(t) && g.next_on_resource(t).valid() && g.gap_ns(t) > 0) {
      add(v.End(t), v.End(t) + g.gap_ns(t));
    }
  }
  std::sort(lane_starts->begin(), lane_starts->end());
  return MergeIntervals(std::move(busy));
}

// Step 2: how much of the idle stretch [a, b] the rank waits for the
// network: up to the end of the network task that held back a task starting
// at b. Returns a when none did.
int64_t NetworkWaitEnd(const RankView& v, const std::vector<std::pair<int64_t, uint32_t>>& starts,
                       int64_t a, int64_t b) {
  int64_t wait_end = a;
  auto it = std::lower_bound(starts.begin(), starts.end(), std::make_pair(b, uint32_t{0}));
  for (; it != starts.end() && it->first == b; ++it) {
    int64_t ready = kNever, net_end = kNever;
    v.ForEachParent(TaskId(it->second), [&](TaskId p, int64_t r) {
      if (r > ready) {
        ready = r;
        net_end = kNever;
      }
      if (r == ready && v.NetIndex(p) >= 0) net_end = std::max(net_end, v.End(p));
    });
    if (ready == b && net_end != kNever) wait_end = std::max(wait_end, std::min(net_end, b));
  }
  return wait_end;
}

struct Lane {
  std::vector<Interval> kept;  // disjoint, in order
  int64_t idle_ns = 0;
  int64_t dropped_ns = 0;
};

Lane BuildLane(const RankView& v, const SimWindow& w, std::span<const NetworkComm> comms,
               int64_t rank_end, const std::vector<Interval>& busy,
               const std::vector<std::pair<int64_t, uint32_t>>& starts) {
  Lane lane;
  std::vector<Interval> kept;
  auto idle = [&](int64_t a, int64_t b, int64_t wait_end) {
    lane.dropped_ns += wait_end - a;
    if (b > wait_end) {
      kept.emplace_back(wait_end, b);
      lane.idle_ns += b - wait_end;
    }
  };
  int64_t cursor = w.start_ns;
  for (const Interval& i : busy) {
    if (i.first > cursor) idle(cursor, i.first, NetworkWaitEnd(v, starts, cursor, i.first));
    kept.push_back(i);
    cursor = i.second;
  }
  if (rank_end > cursor) {
    // Only network communication runs after the last busy time: the
    // communication nodes carry it.
    bool network_after = false;
    for (const NetworkComm& c : comms) network_after |= v.End(c.task) > cursor;
    idle(cursor, rank_end, network_after ? rank_end : cursor);
  }
  lane.kept = MergeIntervals(std::move(kept));
  return lane;
}

struct Attach {
  std::vector<int64_t> producer;                        // per comm; kNever: none on the lane
  std::vector<std::pair<int32_t, int64_t>> consumers;   // (comm, consumer start)
};

// Step 3's cut times.
Attach AttachPoints(const RankView& v, std::span<const NetworkComm> comms, const SimWindow& w,
                    int64_t rank_end) {
  Attach a;
  a.producer.assign(comms.size(), kNever);
  for (size_t k = 0; k < comms.size(); ++k) {
    const TaskId c = comms[k].task;
    int64_t p = kNever;
    v.ForEachParent(c, [&](TaskId parent, int64_t ready) {
      if (v.Mine(parent) && v.NetIndex(parent) < 0) p = std::max(p, ready);
    });
    if (p != kNever && p > w.start_ns) a.producer[k] = std::min(p, v.Start(c));
    v.ForEachChild(c, [&](TaskId x) {
      if (v.Mine(x) && v.NetIndex(x) < 0 && v.Start(x) < rank_end) {
        a.consumers.emplace_back(static_cast<int32_t>(k), v.Start(x));
      }
    });
  }
  return a;
}

// The lane's pieces: the kept stretches cut at every attach time inside them.
std::vector<Interval> CutLane(const Lane& lane, const Attach& at) {
  std::vector<int64_t> cuts;
  for (int64_t p : at.producer) {
    if (p != kNever) cuts.push_back(p);
  }
  for (const auto& [k, q] : at.consumers) cuts.push_back(q);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<Interval> pieces;
  auto cut = cuts.begin();
  for (const auto& [a, b] : lane.kept) {
    int64_t from = a;
    cut = std::upper_bound(cut, cuts.end(), a);
    for (; cut != cuts.end() && *cut < b; ++cut) {
      pieces.emplace_back(from, *cut);
      from = *cut;
    }
    pieces.emplace_back(from, b);
  }
  return pieces;
}

void FillComm(const Graph& g, const SimResult& sim, const NetworkComm& c, int64_t origin,
              chakra_et::Node* node) {
  const uint32_t t = c.task.value();
  node->set_name(std::string(g.name(c.task)));
  node->set_type(c.node_type);
  const int64_t start = RoundUs(sim.start_ns[t] - origin);
  node->set_start_time_micros(static_cast<uint64_t>(start));
  node->set_duration_micros(static_cast<uint64_t>(RoundUs(sim.end_ns[t] - origin) - start));
  AddAttr(node, "is_cpu_op")->set_bool_val(false);
  if (c.node_type == chakra_et::COMM_COLL_NODE) {
    AddAttr(node, "comm_type")->set_int64_val(c.type);
  } else {
    AddAttr(node, "comm_src")->set_int64_val(c.src);
    AddAttr(node, "comm_dst")->set_int64_val(c.dst);
    AddAttr(node, "comm_tag")->set_int64_val(c.tag);
  }
  AddAttr(node, "comm_size")->set_int64_val(c.bytes);
}

// Where each communication node goes among the lane pieces: after the
// piece ending at its producer (the last ending no later) and after the
// previous communication node (pos: emitted just before piece pos), and
// before every piece it gates.
struct Placement {
  std::vector<int64_t> after;               // per comm: lane piece it follows, -1: none
  std::vector<int64_t> pos;                 // per comm
  std::vector<std::vector<uint32_t>> gates; // per piece: the comms it waits for
};

absl::StatusOr<Placement> Place(const std::vector<Interval>& pieces, const Attach& at) {
  const size_t nc = at.producer.size();
  Placement p{std::vector<int64_t>(nc, -1), std::vector<int64_t>(nc, 0),
              std::vector<std::vector<uint32_t>>(pieces.size())};
  for (size_t k = 0; k < nc; ++k) {
    if (at.producer[k] != kNever) {
      auto it = std::upper_bound(pieces.begin(), pieces.end(), at.producer[k],
                                 [](int64_t t, const Interval& piece) { return t < piece.second; });
      p.after[k] = static_cast<int64_t>(it - pieces.begin()) - 1;
    }
    p.pos[k] = std::max<int64_t>(k > 0 ? p.pos[k - 1] : 0, p.after[k] + 1);
  }
  for (const auto& [k, q] : at.consumers) {
    auto it = std::lower_bound(pieces.begin(), pieces.end(), q,
                               [](const Interval& piece, int64_t t) { return piece.first < t; });
    if (it == pieces.end()) continue;
    const size_t j = static_cast<size_t>(it - pieces.begin());
    // The issue order is the simulated start order, so a consumer never
    // precedes a producer; this guards the invariant, it does not happen.
    if (static_cast<int64_t>(j) < p.pos[k]) {
      return absl::InternalError(
          absl::StrCat("communication #", k, " would gate lane work before it can start"));
    }
    p.gates[j].push_back(static_cast<uint32_t>(k));
  }
  return p;
}

// Serialises the lane pieces and the communication nodes in id order.
absl::StatusOr<LaneTrace> Write(const LaneRequest& req, const std::vector<Interval>& pieces,
                                const Placement& p) {
  const int64_t origin = req.window.start_ns;
  const size_t m = pieces.size(), nc = req.comms.size();
  LaneTrace out;
  ChakraStreamWriter writer(&out.bytes, "reverie export --chakra (compute lane)");
  std::vector<int64_t> comm_id(nc, -1), lane_id(m, -1);
  int64_t next_id = 0;
  std::vector<uint64_t> deps;
  chakra_et::Node node;
  auto emit = [&] {
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    node.set_id(static_cast<uint64_t>(next_id));
    for (uint64_t d : deps) node.add_data_deps(d);
    out.stats.dependencies += static_cast<int64_t>(deps.size());
    writer.Add(node);
    deps.clear();
    return next_id++;
  };
  size_t k = 0;
  for (size_t j = 0; j <= m; ++j) {
    for (; k < nc && p.pos[k] == static_cast<int64_t>(j); ++k) {
      node.Clear();
      FillComm(*req.graph, *req.sim, req.comms[k], origin, &node);
      if (p.after[k] >= 0) deps.push_back(static_cast<uint64_t>(lane_id[p.after[k]]));
      if (k > 0) deps.push_back(static_cast<uint64_t>(comm_id[k - 1]));
      comm_id[k] = emit();
    }
    if (j == m) break;
    const auto [a, b] = pieces[j];
    node.Clear();
    const int64_t start = RoundUs(a - origin), end = RoundUs(b - origin);
    node.set_name(absl::StrCat("[lane] ", start, "-", end, " us"));
    node.set_type(chakra_et::COMP_NODE);
    node.set_start_time_micros(static_cast<uint64_t>(start));
    node.set_duration_micros(static_cast<uint64_t>(end - start));
    AddAttr(&node, "is_cpu_op")->set_bool_val(false);
    if (j > 0) deps.push_back(static_cast<uint64_t>(lane_id[j - 1]));
    for (uint32_t c : p.gates[j]) deps.push_back(static_cast<uint64_t>(comm_id[c]));
    lane_id[j] = emit();
    out.stats.lane_ns += b - a;
  }
  out.stats.nodes = next_id;
  REVERIE_RETURN_IF_ERROR(writer.Finish());
  return out;
}

}  // namespace

SimWindow SimulatedWindow(const Graph& g, const SimResult& sim) {
  SimWindow w{std::numeric_limits<int64_t>::max(), 0};
  for (uint32_t t = 0; t < g.task_count(); ++t) {
    if (g.removed(TaskId(t)) || t >= sim.start_ns.size()) continue;
    w.start_ns = std::min(w.start_ns, sim.start_ns[t]);
    w.end_ns = std::max(w.end_ns, sim.end_ns[t]);
  }
  if (w.end_ns < w.start_ns) w = {0, 0};
  return w;
}

CommPlan PlanSingleRank(const Graph& g, const SimResult& sim, const CommTyping& typing,
                        CommMode mode, const SimWindow& window) {
  CommPlan plan;
  std::vector<std::pair<int64_t, uint32_t>> order;
  for (uint32_t t = 0; t < g.task_count(); ++t) {
    const CommRole role = typing.role[t];
    if (role == CommRole::kNone) continue;
    const bool in_window = sim.start_ns[t] >= window.start_ns && sim.start_ns[t] < window.end_ns;
    if (mode == CommMode::kNetwork && role == CommRole::kCollective && in_window) {
      if (typing.bytes[t] > 0) {
        order.emplace_back(sim.start_ns[t], t);
        continue;
      }
      ++plan.unsized;
    }
    ++plan.replayed;
    plan.replayed_p2p += role == CommRole::kSend || role == CommRole::kRecv;
  }
  std::sort(order.begin(), order.end());
  for (const auto& [start, t] : order) {
    NetworkComm& c = plan.network.emplace_back();
    c.task = TaskId(t);
    c.type = typing.type[t];
    c.bytes = typing.bytes[t];
  }
  return plan;
}

absl::StatusOr<LaneTrace> ExportLane(const LaneRequest& req) {
  const Graph& g = *req.graph;
  const SimResult& sim = *req.sim;
  if (sim.start_ns.size() != g.task_count() || sim.end_ns.size() != g.task_count()) {
    return absl::InvalidArgumentError(absl::StrCat("simulation has ", sim.start_ns.size(),
                                                   " tasks, the graph ", g.task_count()));
  }
  const RankView v(req);
  for (const NetworkComm& c : req.comms) {
    if (c.task.value() >= g.task_count() || !v.Mine(c.task)) {
      return absl::InvalidArgumentError(
          absl::StrCat("communication task ", c.task.value(), " is no live task of rank ", req.rank));
    }
  }
  const SimWindow& w = req.window;
  int64_t rank_end = w.start_ns;
  std::vector<std::pair<int64_t, uint32_t>> starts;
  const std::vector<Interval> busy = BusyTime(v, w, &rank_end, &starts);
  const Lane lane = BuildLane(v, w, req.comms, rank_end, busy, starts);
  const Attach at = AttachPoints(v, req.comms, w, rank_end);
  const std::vector<Interval> pieces = CutLane(lane, at);
  REVERIE_ASSIGN_OR_RETURN(Placement place, Place(pieces, at));
  REVERIE_ASSIGN_OR_RETURN(LaneTrace out, Write(req, pieces, place));
  LaneStats& s = out.stats;
  s.lane_nodes = static_cast<int64_t>(pieces.size());
  s.comm_nodes = static_cast<int64_t>(req.comms.size());
  s.idle_ns = lane.idle_ns;
  s.dropped_ns = lane.dropped_ns;
  s.rank_end_ns = rank_end - w.start_ns;
  return out;
}

}  // namespace reverie::exporter
