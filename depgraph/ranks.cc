#include "depgraph/ranks.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "depgraph/replicate.h"

namespace reverie::depgraph {
namespace {

// A collective's identity within a rank: its communication stream (by order
// of first use, as stream ids need not agree across ranks) and its type.
using Key = std::pair<int, int>;  // (stream ordinal, Collective)
using Ordered = std::map<Key, std::vector<TaskId>>;

// A rank's live communication tasks under their keys, each list in the
// rank's simulated start order (ties by TaskId).
Ordered CollectivesInOrder(const Graph& g, const SimResult& alone) {
  // Classified once per distinct name: a step launches a few hundred kernel
  // names across tens of thousands of tasks.
  constexpr int8_t kUnknown = -1;
  std::vector<int8_t> is_comm(g.name_count(), kUnknown);
  std::vector<std::pair<int64_t, TaskId>> comm;
  for (uint32_t v = 0; v < g.task_count(); ++v) {
    const TaskId t(v);
    if (g.removed(t) || !(g.kind(t) == TaskKind::kKernel || g.kind(t) == TaskKind::kComm)) continue;
    int8_t& known = is_comm[g.name_id(t)];
    if (known == kUnknown) {
      // An NCCL/RCCL kernel always takes part in a collective or a
      // send/receive; a script's comm task only when its name says which
      // collective (a parameter server's "push slice" is the rank's own).
      known = g.kind(t) == TaskKind::kKernel
                  ? IsCommunicationTask(g, t)
                  : CollectiveOfName(g.name(t)) != Collective::kOther;
    }
    if (!known) continue;
    comm.emplace_back(alone.start_ns[v], t);
  }
  std::sort(comm.begin(), comm.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.value() < b.second.value();
  });
  absl::flat_hash_map<ResourceId, int> stream_ordinal;
  Ordered out;
  for (const auto& [start, t] : comm) {
    const int stream =
        stream_ordinal.try_emplace(g.resource_of(t), static_cast<int>(stream_ordinal.size()))
            .first->second;
    out[{stream, static_cast<int>(CollectiveOfName(g.name(t)))}].push_back(t);
  }
  return out;
}

std::string Ordinal(int i) {
  const int n = i + 1;
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                       : n % 10 == 1                    ? "st"
                       : n % 10 == 2                    ? "nd"
                       : n % 10 == 3                    ? "rd"
                                                        : "th";
  return absl::StrCat(n, suffix);
}

std::string Describe(const Key& k, size_t count) {
  return absl::StrCat(count, " ", Sv(CollectiveName(Collective(k.second))),
                      " collectives on its ", Ordinal(k.first), " communication stream");
}

// Why rank r's collectives cannot be matched with rank 0's, or "" if they can.
std::string Mismatch(const Ordered& first, std::string_view first_label, const Ordered& other,
                     std::string_view other_label) {
  auto say = [&](const Key& key, size_t in_other, size_t in_first) {
    return absl::StrCat(Sv(other_label), " has ", Describe(key, in_other), ", ", Sv(first_label),
                        " has ", in_first, ": the traces do not cover the same steps of one job");
  };
  for (const auto& [key, list] : first) {
    auto it = other.find(key);
    const size_t n = it == other.end() ? 0 : it->second.size();
    if (n != list.size()) return say(key, n, list.size());
  }
  for (const auto& [key, list] : other) {
    if (!first.contains(key)) return say(key, list.size(), 0);
  }
  return "";
}

int32_t ClampDelay(int64_t ns) {
  return static_cast<int32_t>(std::clamp<int64_t>(ns, 0, std::numeric_limits<int32_t>::max()));
}

// What a task waits for before it may start, besides `skip`: its predecessor
// on an ordered resource (plus that one's gap) and its edge parents (plus
// their delays). As (parent, delay) pairs.
std::vector<std::pair<TaskId, int32_t>> ReadinessParents(const Graph& g, TaskId t,
                                                         TaskId skip = TaskId()) {
  std::vector<std::pair<TaskId, int32_t>> out;
  const TaskId prev = g.prev_on_resource(t);
  if (prev.valid() && g.resource(g.resource_of(t)).ordered) {
    out.emplace_back(prev, ClampDelay(g.gap_ns(prev)));
  }
  const Adjacency& adj = g.adjacency();
  for (const auto edge : adj.in(t)) {
    const Edge& e = g.edge(edge);
    if (e.src != skip) out.emplace_back(e.src, e.delay_ns);
  }
  return out;
}

// Adds every rank's layers to `job`, shared by path; returns the id map.
std::vector<LayerId> MergeLayers(const Graph& g, Graph* job) {
  std::vector<LayerId> map(g.layer_count());
  for (uint32_t l = 0; l < g.layer_count(); ++l) {
    const Layer& layer = g.layer(LayerId(l));
    // The builder adds a parent before its children; anything else loses its parent.
    const LayerId parent =
        layer.parent.valid() && layer.parent.value() < l ? map[layer.parent.value()] : LayerId();
    map[l] = job->AddLayer(layer.path, parent);
  }
  return map;
}

// A check of the matching, never an input to the simulation: the ranks of
// one collective finish it together, so in traces that share a clock (up
// to a constant offset per rank, taken as the median) the matched kernels'
// measured ends agree within about the transfer time. Ones that do not
// suggest traces that dropped or cut collectives (down-sampled, or profiled
// over different windows) and so a matching off by some.
void CheckMeasuredEnds(const std::vector<std::pair<std::vector<int64_t>, int64_t>>& groups, int n,
                       CoupleStats* stats) {
  constexpr int64_t kSlackNs = 100'000;
  stats->measured_checked = static_cast<int64_t>(groups.size());
  if (groups.empty()) return;
  std::vector<int64_t> median(n, 0);
  for (int r = 1; r < n; ++r) {
    std::vector<int64_t> offsets;
    for (const auto& [ends, transfer] : groups) offsets.push_back(ends[r] - ends[0]);
    std::nth_element(offsets.begin(), offsets.begin() + offsets.size() / 2, offsets.end());
    median[r] = offsets[offsets.size() / 2];
  }
  for (const auto& [ends, transfer] : groups) {
    const int64_t tolerance = std::max(kSlackNs, transfer);
    for (int r = 1; r < n; ++r) {
      if (std::abs(ends[r] - ends[0] - median[r]) > tolerance) {
        ++stats->measured_misaligned;
        break;
      }
    }
  }
}

// Each rank's collectives in the order its own simulation issues them.
absl::StatusOr<std::vector<Ordered>> OrderCollectives(std::span<const RankInput> ranks) {
  std::vector<Ordered> order(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankInput& in = ranks[r];
    SimResult own;
    const SimResult* alone = in.alone;
    if (alone == nullptr) {
      absl::StatusOr<SimResult> sim = Simulate(*in.graph);
      if (!sim.ok()) {
        return absl::Status(sim.status().code(),
                            absl::StrCat(Sv(in.label), ": ", sim.status().message()));
      }
      own = std::move(*sim);
      alone = &own;
    }
    order[r] = CollectivesInOrder(*in.graph, *alone);
  }
  return order;
}

// Copies every rank's graph into the job's (its resources named after the
// rank, steps beyond the job's `steps` untagged and counted); returns
// each rank's task map.
std::vector<std::vector<TaskId>> CopyRanks(std::span<const RankInput> ranks, size_t steps,
                                           JobGraph* job) {
  std::vector<std::vector<TaskId>> task_map(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    const Graph& g = *ranks[r].graph;
    std::vector<ResourceId> resources;
    for (uint32_t i = 0; i < g.resource_count(); ++i) {
      Resource res = g.resource(ResourceId(i));
      res.name = absl::StrCat("rank ", r, ": ", res.name);
      resources.push_back(job->graph.AddResource(std::move(res)));
      job->rank_of_resource.push_back(static_cast<int>(r));
    }
    const std::vector<LayerId> layers = MergeLayers(g, &job->graph);
    std::vector<int32_t> step_map(g.step_count(), -1);
    for (size_t i = 0; i < steps; ++i) step_map[i] = static_cast<int32_t>(i);
    for (uint32_t v = 0; v < g.task_count(); ++v) {
      const TaskId t(v);
      if (!g.removed(t) && g.step_of(t) >= static_cast<int32_t>(steps)) {
        ++job->stats.untagged_tasks;
      }
    }
    task_map[r] = AppendGraph(g, {resources, layers, step_map, 0}, &job->graph);
  }
  return task_map;
}

// One barrier per matched collective on a shared channel: every rank's copy
// starts when all ranks are ready, and takes the shortest copy's duration
// (the others waited inside theirs).
void AddBarriers(std::span<const RankInput> ranks, const std::vector<Ordered>& order,
                 const std::vector<std::vector<TaskId>>& task_map, JobGraph* job) {
  const int n = static_cast<int>(ranks.size());
  Resource channel;
  channel.kind = ResourceKind::kCommChannel;
  channel.pid = -1;
  channel.name = "collectives (all ranks)";
  channel.ordered = false;
  const ResourceId barriers = job->graph.AddResource(std::move(channel));
  job->rank_of_resource.push_back(-1);

  std::vector<std::pair<std::vector<int64_t>, int64_t>> measured_ends;  // (per rank, transfer)
  // Each copy's readiness, read from its rank's graph (the job graph's
  // adjacency would be rebuilt after every edge added below).
  for (const auto& [key, first_list] : order[0]) {
    for (size_t i = 0; i < first_list.size(); ++i) {
      CollectiveGroup group;
      group.type = Collective(key.second);
      group.stream = key.first;
      group.ordinal = static_cast<int32_t>(i);
      group.duration_ns = std::numeric_limits<int64_t>::max();
      std::vector<int64_t> ends;
      for (int r = 0; r < n; ++r) {
        const Graph& g = *ranks[r].graph;
        const TaskId src = order[r].at(key)[i];
        group.tasks.push_back(task_map[r][src.value()]);
        group.duration_ns = std::min(group.duration_ns, g.duration_ns(src));
        if (g.measured(src)) ends.push_back(g.measured_start_ns(src) + g.duration_ns(src));
      }
      if (static_cast<int>(ends.size()) == n) measured_ends.push_back({std::move(ends), group.duration_ns});
      TaskSpec spec;
      spec.kind = TaskKind::kComm;
      const std::string name =
          absl::StrCat("[all ranks ready] ", Sv(CollectiveName(group.type)), " #", group.ordinal,
                       " on communication stream ", group.stream);
      spec.name = name;
      spec.resource = barriers;
      group.barrier = job->graph.AppendTask(spec);
      for (int r = 0; r < n; ++r) {
        const Graph& g = *ranks[r].graph;
        for (const auto& [parent, delay] : ReadinessParents(g, order[r].at(key)[i])) {
          job->graph.AddEdge(task_map[r][parent.value()], group.barrier, EdgeKind::kComm, delay);
        }
        job->graph.AddEdge(group.barrier, group.tasks[r], EdgeKind::kComm);
        job->graph.set_duration_ns(group.tasks[r], group.duration_ns);
      }
      job->collectives.push_back(std::move(group));
    }
  }
  CheckMeasuredEnds(measured_ends, n, &job->stats);
}

}  // namespace

absl::StatusOr<JobGraph> CoupleRanks(std::span<const RankInput> ranks) {
  if (ranks.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("a job needs at least two ranks' traces, got ", ranks.size()));
  }
  const int n = static_cast<int>(ranks.size());
  REVERIE_ASSIGN_OR_RETURN(const std::vector<Ordered> order, OrderCollectives(ranks));

  JobGraph job;
  job.ranks = n;
  for (int r = 1; r < n; ++r) {
    const std::string why = Mismatch(order[0], ranks[0].label, order[r], ranks[r].label);
    if (!why.empty()) return absl::FailedPreconditionError(why);
  }
  for (const auto& [key, list] : order[0]) {
    job.stats.collectives_by_type[key.second] += static_cast<int64_t>(list.size());
    job.stats.collectives += static_cast<int64_t>(list.size());
  }
  if (job.stats.collectives == 0) {
    return absl::FailedPreconditionError(
        "no rank's trace has a collective (NCCL/RCCL kernel or comm task): nothing couples the "
        "ranks");
  }

  // Job steps: the fewest any rank has, named after rank 0's.
  size_t steps = ranks[0].graph->step_count();
  for (const RankInput& in : ranks) steps = std::min(steps, in.graph->step_count());
  job.stats.steps = static_cast<int32_t>(steps);
  for (size_t i = 0; i < steps; ++i) {
    job.graph.AddStep(ranks[0].graph->step_info(static_cast<int32_t>(i)));
  }

  size_t tasks = 0, edges = 0;
  for (const RankInput& in : ranks) {
    tasks += in.graph->live_task_count();
    edges += in.graph->live_edge_count();
  }
  const size_t groups = static_cast<size_t>(job.stats.collectives);
  // Per collective: a barrier, an edge to each copy and about three from each.
  job.graph.Reserve(tasks + groups, edges + groups * 4 * static_cast<size_t>(n));
  std::vector<std::vector<TaskId>> task_map = CopyRanks(ranks, steps, &job);
  AddBarriers(ranks, order, task_map, &job);
  job.task_of_rank = std::move(task_map);
  if (absl::Status s = job.graph.Validate(); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ranks issue their collectives in orders that cannot all hold (",
        s.message(), "): they are not matched by type and order alone"));
  }
  return job;
}

std::vector<RankTime> AnalyzeJob(const JobGraph& job, const SimResult& sim,
                                 const std::vector<RankTime>* baseline) {
  const Graph& g = job.graph;
  std::vector<RankTime> out(job.ranks);
  std::vector<std::vector<StepTime>> frames;
  if (baseline != nullptr && baseline->size() == static_cast<size_t>(job.ranks)) {
    for (const RankTime& r : *baseline) frames.push_back(r.steps);
  }
  std::vector<std::vector<StepTime>> spans =
      StepSpansByGroup(g, sim, job.rank_of_resource, job.ranks, frames);
  for (int r = 0; r < job.ranks; ++r) {
    out[r].steps = std::move(spans[r]);
    out[r].mean_step_ns = MeanStepNs(out[r].steps);
  }
  std::vector<int64_t> ready(job.ranks);
  for (const CollectiveGroup& group : job.collectives) {
    for (int r = 0; r < job.ranks; ++r) {
      const TaskId t = group.tasks[r];
      int64_t at = 0;
      for (const auto& [parent, delay] : ReadinessParents(g, t, group.barrier)) {
        at = std::max(at, sim.end_ns[parent.value()] + delay);
      }
      ready[r] = at;
      out[r].wait_ns += std::max<int64_t>(0, sim.start_ns[t.value()] - at);
    }
    const auto [lo, hi] = std::minmax_element(ready.begin(), ready.end());
    // Ranks that arrive together have no straggler among them.
    if (*hi > *lo) ++out[hi - ready.begin()].last_arrivals;
  }
  return out;
}

}  // namespace reverie::depgraph
