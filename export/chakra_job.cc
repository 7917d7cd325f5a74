#include "export/chakra_job.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "depgraph/kernel_class.h"

namespace reverie::exporter {
namespace {

using depgraph::CollectiveGroup;
using depgraph::TaskId;

constexpr uint32_t kNoIndex = std::numeric_limits<uint32_t>::max();

// One rank's copy of a matched collective, as its own trace types it.
struct Copy {
  CommRole role = CommRole::kNone;
  chakra_et::CollectiveCommType type = chakra_et::ALL_REDUCE;
  int64_t bytes = 0;
  bool typed() const { return role != CommRole::kNone && role != CommRole::kOther; }
  bool same(const Copy& o) const {
    return role == o.role && (role != CommRole::kCollective || type == o.type);
  }
};

std::string Describe(const Copy& c) {
  switch (c.role) {
    case CommRole::kCollective: return chakra_et::CollectiveCommType_Name(c.type);
    case CommRole::kSend: return "a send";
    case CommRole::kRecv: return "a receive";
    default: return "no collective ASTRA-sim simulates";
  }
}

// How the ranks' copies of one collective go to the network: the copies
// when they do (all typed ones alike, or a send / receive pair), an empty
// list when none is typed (replayed on the lanes), an error when they
// disagree.
absl::StatusOr<std::vector<NetworkComm>> GroupComms(const CollectiveGroup& group, size_t index,
                                                    const std::vector<Copy>& copies,
                                                    std::span<const std::string> labels,
                                                    JobPlan* plan) {
  const int n = static_cast<int>(copies.size());
  int first = -1;
  for (int r = 0; r < n; ++r) {
    if (!copies[r].typed()) continue;
    if (first < 0) first = r;
    const bool p2p_pair = n == 2 && first != r &&
                          ((copies[first].role == CommRole::kSend && copies[r].role == CommRole::kRecv) ||
                           (copies[first].role == CommRole::kRecv && copies[r].role == CommRole::kSend));
    if (copies[r].same(copies[first]) || p2p_pair) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        labels[first], ", ", labels[r], ": collective #", group.ordinal, " (",
        Sv(depgraph::CollectiveName(group.type)), ") on communication stream ", group.stream, " is ",
        Describe(copies[first]), " on one rank and ", Describe(copies[r]),
        " on the other: the traces do not describe one job"));
  }
  std::vector<NetworkComm> out;
  if (first < 0) return out;
  int64_t bytes = 0;
  for (const Copy& c : copies) bytes = std::max(bytes, c.bytes);
  for (const Copy& c : copies) plan->size_disagreements += c.bytes > 0 && c.bytes != bytes ? 1 : 0;
  if (bytes == 0) {  // as a single rank's (chakra_lane.h PlanSingleRank)
    plan->unsized += n;
    return out;
  }
  const bool p2p = copies[first].role != CommRole::kCollective;
  if (p2p && n != 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        labels[first], ": point-to-point collective #", group.ordinal,
        " matched across ", n, " ranks: its peer is unknown"));
  }
  int src = -1, dst = -1;
  for (int r = 0; r < n; ++r) {
    if (copies[r].role == CommRole::kSend) src = r;
    if (copies[r].role == CommRole::kRecv) dst = r;
  }
  if (p2p && (src < 0 || dst < 0)) {
    // One side untyped: the other rank is its peer.
    (src < 0 ? src : dst) = first == 0 ? 1 : 0;
  }
  for (int r = 0; r < n; ++r) {
    NetworkComm& c = out.emplace_back();
    c.task = group.tasks[r];
    c.bytes = bytes;
    if (!p2p) {
      c.type = copies[first].type;
      continue;
    }
    c.node_type = r == src ? chakra_et::COMM_SEND_NODE : chakra_et::COMM_RECV_NODE;
    c.src = src;
    c.dst = dst;
    c.tag = static_cast<int64_t>(index);
  }
  plan->p2p += p2p;
  return out;
}

}  // namespace

absl::StatusOr<JobPlan> PlanJob(const depgraph::JobGraph& job, const depgraph::SimResult& sim,
                                std::span<const CommTyping> typing,
                                std::span<const std::string> labels, CommMode mode,
                                const SimWindow& window) {
  const int n = job.ranks;
  if (static_cast<int>(typing.size()) != n || static_cast<int>(labels.size()) != n ||
      static_cast<int>(job.task_of_rank.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat("a job of ", n, " ranks needs as many typings"));
  }
  std::vector<uint32_t> local(job.graph.task_count(), kNoIndex);
  JobPlan plan;
  plan.network.resize(n);
  for (int r = 0; r < n; ++r) {
    for (uint32_t v = 0; v < job.task_of_rank[r].size(); ++v) {
      const TaskId t = job.task_of_rank[r][v];
      if (t.valid()) local[t.value()] = v;
      plan.replayed += typing[r].role[v] != CommRole::kNone;
    }
  }
  // (rank 0's start, group index, the copies' network nodes)
  std::vector<std::tuple<int64_t, size_t, std::vector<NetworkComm>>> chosen;
  for (size_t i = 0; mode == CommMode::kNetwork && i < job.collectives.size(); ++i) {
    const CollectiveGroup& group = job.collectives[i];
    const int64_t start = sim.start_ns[group.tasks[0].value()];
    if (start < window.start_ns || start >= window.end_ns) continue;
    std::vector<Copy> copies(n);
    for (int r = 0; r < n; ++r) {
      const uint32_t v = local[group.tasks[r].value()];
      copies[r] = {typing[r].role[v], typing[r].type[v], typing[r].bytes[v]};
    }
    REVERIE_ASSIGN_OR_RETURN(std::vector<NetworkComm> comms, GroupComms(group, i, copies, labels, &plan));
    if (!comms.empty()) chosen.emplace_back(start, i, std::move(comms));
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const auto& a, const auto& b) { return std::tie(std::get<0>(a), std::get<1>(a)) <
                                                      std::tie(std::get<0>(b), std::get<1>(b)); });
  for (int r = 0; r < n; ++r) {
    int64_t last = std::numeric_limits<int64_t>::min();
    for (const auto& [start, index, comms] : chosen) {
      const int64_t own = sim.start_ns[comms[r].task.value()];
      if (own < last) {
        const CollectiveGroup& group = job.collectives[index];
        return absl::FailedPreconditionError(absl::StrCat(
            labels[r], ": reaches collective #", group.ordinal, " (",
            Sv(depgraph::CollectiveName(group.type)), ") on communication stream ", group.stream,
            " in another order than rank 0; ASTRA-sim needs one issue order on every rank"));
      }
      last = own;
      plan.network[r].push_back(comms[r]);
      --plan.replayed;
    }
  }
  plan.collectives = static_cast<int64_t>(chosen.size());
  return plan;
}

}  // namespace reverie::exporter
