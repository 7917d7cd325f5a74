// Graph::Reaches (reach_index.h): the same answers as a plain search over
// the whole graph through any sequence of edits, levels that stay
// topological, and work that does not grow with the graph behind the two
// tasks asked about.
#include "depgraph/reach_index.h"

#include <random>
#include <vector>

#include "depgraph/graph.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

TaskSpec Spec(ResourceId r, TaskKind k = TaskKind::kCpuApi) {
  return TaskSpec{.kind = k, .name = "t", .resource = r, .duration_ns = 1};
}

// The reference: depth-first over every live edge and ordered-resource
// successor, no levels.
bool PlainReaches(const Graph& g, TaskId from, TaskId to) {
  std::vector<bool> seen(g.task_count(), false);
  std::vector<TaskId> stack{from};
  seen[from.value()] = true;
  while (!stack.empty()) {
    const TaskId t = stack.back();
    stack.pop_back();
    if (t == to) return true;
    std::vector<TaskId> next;
    for (EdgeId e : g.adjacency().out(t)) next.push_back(g.edge(e).dst);
    if (g.resource(g.resource_of(t)).ordered && g.next_on_resource(t).valid()) {
      next.push_back(g.next_on_resource(t));
    }
    for (TaskId n : next) {
      if (!seen[n.value()]) seen[n.value()] = true, stack.push_back(n);
    }
  }
  return false;
}

std::vector<TaskId> Live(const Graph& g) {
  std::vector<TaskId> out;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    if (!g.removed(TaskId(i))) out.push_back(TaskId(i));
  }
  return out;
}

// Two threads, two streams and an unordered channel, with random edges
// from lower ids to higher (acyclic).
Graph RandomGraph(std::mt19937& rng, int tasks) {
  Graph g;
  std::vector<ResourceId> r;
  r.push_back(g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t1", true}));
  r.push_back(g.AddResource({ResourceKind::kCpuThread, 1, 2, -1, "t2", true}));
  r.push_back(g.AddResource({ResourceKind::kGpuStream, 0, 7, 0, "s7", true}));
  r.push_back(g.AddResource({ResourceKind::kGpuStream, 0, 8, 0, "s8", true}));
  r.push_back(g.AddResource({ResourceKind::kCommChannel, 0, 9, 0, "ch", false}));
  for (int i = 0; i < tasks; ++i) g.AppendTask(Spec(r[rng() % r.size()]));
  for (int i = 0; i < tasks; ++i) {
    const uint32_t a = rng() % tasks;
    const uint32_t b = rng() % tasks;
    if (a < b) g.AddEdge(TaskId(a), TaskId(b), EdgeKind::kUser);
  }
  return g;
}

// One random edit: a task inserted or appended, an edge added where it
// closes no cycle, an edge or some tasks removed.
void RandomEdit(std::mt19937& rng, Graph& g) {
  const std::vector<TaskId> live = Live(g);
  if (live.size() < 4) return;
  const TaskId a = live[rng() % live.size()];
  const TaskId b = live[rng() % live.size()];
  switch (rng() % 6) {
    case 0:
      g.InsertTaskAfter(a, Spec(g.resource_of(a)));
      break;
    case 1:
      g.InsertTaskBefore(a, Spec(g.resource_of(a)));
      break;
    case 2:
      g.AppendTask(Spec(g.resource_of(a)));
      break;
    case 3:
    case 4:
      if (a != b && !PlainReaches(g, b, a)) g.AddEdge(a, b, EdgeKind::kUser);
      break;
    default:
      if (rng() % 2 == 0) {
        g.RemoveTasks({a});
      } else if (!g.adjacency().out(a).empty()) {
        g.RemoveEdge(g.adjacency().out(a)[0]);
      }
      break;
  }
}

TEST(ReachIndexTest, AnswersAsAPlainSearchThroughRandomEdits) {
  std::mt19937 rng(20261129);
  int asked = 0, reached = 0;
  for (int trial = 0; trial < 60; ++trial) {
    Graph g = RandomGraph(rng, 30 + trial);
    for (int edit = 0; edit < 40; ++edit) {
      // Ask before some edits, so that edits meet a built index.
      if (edit % 3 == 0) {
        const std::vector<TaskId> live = Live(g);
        for (int q = 0; q < 20; ++q) {
          const TaskId a = live[rng() % live.size()];
          const TaskId b = live[rng() % live.size()];
          const bool want = PlainReaches(g, a, b);
          ASSERT_EQ(g.Reaches(a, b), want)
              << "trial " << trial << " edit " << edit << ": " << a.value() << " -> " << b.value();
          ++asked;
          reached += want;
        }
      }
      RandomEdit(rng, g);
    }
  }
  // Both answers were exercised.
  EXPECT_GT(reached, asked / 10);
  EXPECT_LT(reached, asked - asked / 10);
}

TEST(ReachIndexTest, LevelsStayTopologicalThroughEdits) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    Graph g = RandomGraph(rng, 40);
    ReachIndex index;
    for (int edit = 0; edit < 60; ++edit) {
      RandomEdit(rng, g);
      // Graph tells its own index; this one is told here, as Graph does.
      const std::vector<TaskId> live = Live(g);
      index.Drop();
      ASSERT_EQ(index.Reaches(g, live.front(), live.back()),
                PlainReaches(g, live.front(), live.back()));
      ASSERT_TRUE(index.built());
      for (const Edge& e : g.edges()) {
        if (e.removed) continue;
        ASSERT_LT(index.level(e.src), index.level(e.dst));
      }
      for (const TaskId t : live) {
        const TaskId next = g.next_on_resource(t);
        if (next.valid() && g.resource(g.resource_of(t)).ordered) {
          ASSERT_LT(index.level(t), index.level(next));
        }
      }
    }
  }
}

TEST(ReachIndexTest, EditsTellTheIndexAndKeepItsLevelsTopological) {
  // An index kept through edits (not built again) still orders every
  // dependency: checked through Graph::Reaches on each pair's two ends.
  std::mt19937 rng(11);
  Graph g = RandomGraph(rng, 50);
  ASSERT_EQ(g.Reaches(TaskId(49), TaskId(0)), PlainReaches(g, TaskId(49), TaskId(0)));
  const int64_t built = g.reach_work();
  for (int edit = 0; edit < 300; ++edit) {
    RandomEdit(rng, g);
    for (const Edge& e : g.edges()) {
      if (e.removed) continue;
      ASSERT_TRUE(g.Reaches(e.src, e.dst)) << "edit " << edit;
    }
    for (const TaskId t : Live(g)) {
      const TaskId next = g.next_on_resource(t);
      if (next.valid() && g.resource(g.resource_of(t)).ordered) {
        ASSERT_TRUE(g.Reaches(t, next)) << "edit " << edit;
      }
    }
  }
  EXPECT_GT(g.reach_work(), built);
}

TEST(ReachIndexTest, AnEdgeThatClosesACycleDropsTheIndexAndSearchesStayRight) {
  Graph g;
  const ResourceId th = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const ResourceId st = g.AddResource({ResourceKind::kGpuStream, 0, 7, 0, "s", true});
  const TaskId a = g.AppendTask(Spec(th));
  const TaskId b = g.AppendTask(Spec(th));
  const TaskId k = g.AppendTask(Spec(st, TaskKind::kKernel));
  g.AddEdge(b, k, EdgeKind::kLaunch);
  EXPECT_TRUE(g.Reaches(a, k));
  EXPECT_FALSE(g.Reaches(k, a));
  g.AddEdge(k, a, EdgeKind::kSync);  // unchecked: a cycle a -> b -> k -> a
  EXPECT_TRUE(g.Reaches(k, a));
  EXPECT_TRUE(g.Reaches(a, k));
  EXPECT_TRUE(g.Reaches(k, b));
  EXPECT_FALSE(g.Validate().ok());
}

TEST(ReachIndexTest, InsertingBetweenNeighboursWithoutRoomRaisesWhatFollows) {
  Graph g;
  const ResourceId th = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const TaskId a = g.AppendTask(Spec(th));
  const TaskId z = g.AppendTask(Spec(th));
  EXPECT_TRUE(g.Reaches(a, z));
  // 100 tasks inserted right after `a`, each before the last one: the
  // room between two levels is used up after about 20.
  TaskId last = z;
  for (int i = 0; i < 100; ++i) last = g.InsertTaskBefore(last, Spec(th));
  EXPECT_TRUE(g.Reaches(a, last));
  EXPECT_TRUE(g.Reaches(last, z));
  EXPECT_FALSE(g.Reaches(z, last));
  EXPECT_FALSE(g.Reaches(last, a));
  for (TaskId t = a; g.next_on_resource(t).valid(); t = g.next_on_resource(t)) {
    EXPECT_TRUE(g.Reaches(t, g.next_on_resource(t))) << t.value();
    EXPECT_FALSE(g.Reaches(g.next_on_resource(t), t)) << t.value();
  }
}

// The shape of amp.lua's casts: per pair, a kernel inserted before a
// kernel and its launch call before that kernel's launch call, checked for
// a cycle, then joined by a launch edge. A plain search from each new
// kernel visits everything behind it, so the work grew with the square of
// the pairs; with levels it stays near a build plus a constant per pair.
int64_t CastWork(int pairs) {
  Graph g;
  const ResourceId th = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const ResourceId st = g.AddResource({ResourceKind::kGpuStream, 0, 7, 0, "s", true});
  std::vector<std::pair<TaskId, TaskId>> launches;
  for (int i = 0; i < pairs; ++i) {
    const TaskId call = g.AppendTask(Spec(th));
    const TaskId kernel = g.AppendTask(Spec(st, TaskKind::kKernel));
    g.AddEdge(call, kernel, EdgeKind::kLaunch);
    launches.push_back({call, kernel});
  }
  const int64_t before = g.reach_work();
  for (const auto& [call, kernel] : launches) {
    const TaskId cast = g.InsertTaskBefore(kernel, Spec(st, TaskKind::kKernel));
    const TaskId cast_call = g.InsertTaskBefore(call, Spec(th));
    EXPECT_FALSE(g.Reaches(cast, cast_call));
    g.AddEdge(cast_call, cast, EdgeKind::kLaunch);
  }
  return g.reach_work() - before;
}

TEST(ReachIndexTest, CastsCostWorkLinearInThePairs) {
  const int64_t small = CastWork(2000);
  const int64_t large = CastWork(8000);
  // 4x the pairs: under 5x the work (a plain search: about 16x).
  EXPECT_LT(large, 5 * small) << small << " then " << large;
  EXPECT_GT(small, 2000);  // each pair was counted
}

}  // namespace
}  // namespace reverie::depgraph
