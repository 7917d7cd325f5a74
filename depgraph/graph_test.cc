// Graph's invariants (graph.h): resource order as a linked list, removed
// tasks skipped, edges and adjacency consistent after every mutation, deep
// copies, validation of cycles, and the columns every task carries.
#include "depgraph/graph.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

using ::testing::ElementsAre;

TaskSpec Spec(ResourceId r, int64_t d, TaskKind k = TaskKind::kCpuApi) {
  TaskSpec s{.kind = k, .name = "t", .resource = r, .duration_ns = d};
  return s;
}

std::vector<uint32_t> Order(const Graph& g, ResourceId r) {
  std::vector<uint32_t> out;
  for (TaskId t = g.first_on_resource(r); t.valid(); t = g.next_on_resource(t)) {
    out.push_back(t.value());
  }
  return out;
}

std::vector<uint32_t> Out(const Graph& g, TaskId t) {
  std::vector<uint32_t> out;
  for (EdgeId e : g.adjacency().out(t)) out.push_back(g.edge(e).dst.value());
  return out;
}

TEST(GraphTest, ResourceOrderIsALinkedListThatClosesUpOnRemoval) {
  Graph g;
  const ResourceId r = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const TaskId a = g.AppendTask(Spec(r, 1));
  const TaskId c = g.AppendTask(Spec(r, 3));
  const TaskId b = g.InsertTaskAfter(a, Spec(r, 2));
  const TaskId z = g.InsertTaskBefore(a, Spec(r, 0));
  EXPECT_THAT(Order(g, r), ElementsAre(z.value(), a.value(), b.value(), c.value()));
  g.RemoveTask(b);
  EXPECT_THAT(Order(g, r), ElementsAre(z.value(), a.value(), c.value()));
  EXPECT_TRUE(g.removed(b));
  EXPECT_EQ(g.live_task_count(), 3u);
  EXPECT_EQ(g.task_count(), 4u);  // ids are never reused
  g.RemoveTasks({z, c});
  EXPECT_THAT(Order(g, r), ElementsAre(a.value()));
  EXPECT_EQ(g.first_on_resource(r), a);
  EXPECT_EQ(g.last_on_resource(r), a);
}

TEST(GraphTest, RemovingATaskRemovesItsEdgesAndTheAdjacencyFollows) {
  Graph g;
  const ResourceId th = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const ResourceId st = g.AddResource({ResourceKind::kGpuStream, 0, 7, 0, "s", true});
  const TaskId call = g.AppendTask(Spec(th, 5));
  const TaskId k1 = g.AppendTask(Spec(st, 10, TaskKind::kKernel));
  const TaskId k2 = g.AppendTask(Spec(st, 10, TaskKind::kKernel));
  g.AddEdge(call, k1, EdgeKind::kLaunch);
  g.AddEdge(call, k2, EdgeKind::kLaunch, 3);
  EXPECT_THAT(Out(g, call), ElementsAre(k1.value(), k2.value()));
  EXPECT_EQ(g.live_edge_count(), 2u);
  g.RemoveTask(k1);
  EXPECT_THAT(Out(g, call), ElementsAre(k2.value()));
  EXPECT_EQ(g.live_edge_count(), 1u);
  EXPECT_TRUE(g.edge(EdgeId(0)).removed);
  EXPECT_TRUE(g.Validate().ok());
}

TEST(GraphTest, ValidateFindsACycleThroughResourceOrderAndEdges) {
  Graph g;
  const ResourceId r = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const TaskId a = g.AppendTask(Spec(r, 1));
  const TaskId b = g.AppendTask(Spec(r, 1));
  EXPECT_TRUE(g.Validate().ok());
  g.AddEdge(b, a, EdgeKind::kUser);  // a precedes b on the thread: a cycle
  const absl::Status s = g.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("cycle"));
}

TEST(GraphTest, ACopyIsDeepAndRebuildsItsAdjacency) {
  Graph g;
  const ResourceId r = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const TaskId a = g.AppendTask(Spec(r, 1));
  const TaskId b = g.AppendTask(Spec(r, 2));
  g.AddEdge(a, b, EdgeKind::kUser);
  (void)g.adjacency();  // cached in g
  Graph copy = g;
  copy.set_duration_ns(a, 100);
  copy.RemoveTask(b);
  EXPECT_EQ(g.duration_ns(a), 1);
  EXPECT_FALSE(g.removed(b));
  EXPECT_THAT(Out(g, a), ElementsAre(b.value()));
  EXPECT_TRUE(Out(copy, a).empty());
  Graph assigned;
  assigned = g;
  EXPECT_THAT(Out(assigned, a), ElementsAre(b.value()));
  EXPECT_EQ(assigned.live_task_count(), 2u);
}

// The setters refuse what the class invariants forbid (a caller's bug):
// they stop rather than leave a graph the simulator would misread.
TEST(GraphDeathTest, SettersCheckTheInvariants) {
  Graph g;
  const ResourceId r = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const TaskId t = g.AppendTask(Spec(r, 5));
  TaskSpec m = Spec(r, 0, TaskKind::kCpuWork);
  m.step_mark = StepMark::kBegin;
  const TaskId mark = g.AppendTask(m);
  EXPECT_DEATH(g.set_duration_ns(t, -1), "check failed");
  EXPECT_DEATH(g.set_duration_ns(mark, 10), "check failed");  // markers are zero-length
  EXPECT_DEATH(g.set_gap_ns(t, -1), "check failed");
  EXPECT_DEATH(g.set_step(t, 0), "check failed");  // no step 0 in this graph
  EXPECT_DEATH(g.set_layer(t, LayerId(3)), "check failed");
  EXPECT_DEATH(g.set_op(t, OpId(0)), "check failed");
  EXPECT_DEATH(g.set_bytes(TaskId(99), 1), "check failed");
  g.set_duration_ns(mark, 0);
  g.set_step(t, -1);
  g.set_layer(t, LayerId());
  EXPECT_EQ(g.duration_ns(t), 5);
}

// The structural mutators refuse what would corrupt the structure: an edge
// to a removed task (never simulated, yet holding its neighbour back), a
// self-edge, a task inserted next to a removed one (on no resource's list),
// a task on a resource that does not exist.
TEST(GraphDeathTest, StructuralMutatorsCheckTheStructure) {
  Graph g;
  const ResourceId r = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const TaskId a = g.AppendTask(Spec(r, 5));
  const TaskId b = g.AppendTask(Spec(r, 5));
  const TaskId gone = g.AppendTask(Spec(r, 5));
  g.RemoveTask(gone);
  EXPECT_DEATH(g.AddEdge(a, gone, EdgeKind::kUser), "check failed");
  EXPECT_DEATH(g.AddEdge(gone, a, EdgeKind::kUser), "check failed");
  EXPECT_DEATH(g.AddEdge(a, a, EdgeKind::kUser), "check failed");
  EXPECT_DEATH(g.AddEdge(a, TaskId(99), EdgeKind::kUser), "check failed");
  EXPECT_DEATH(g.InsertTaskAfter(gone, Spec(r, 1)), "check failed");
  EXPECT_DEATH(g.InsertTaskBefore(gone, Spec(r, 1)), "check failed");
  EXPECT_DEATH(g.AppendTask(Spec(ResourceId(7), 1)), "check failed");
  EXPECT_DEATH(g.RemoveEdge(EdgeId(3)), "check failed");
  g.AddEdge(a, b, EdgeKind::kUser);  // live to live stays allowed
  EXPECT_TRUE(g.Validate().ok());
}

TEST(GraphTest, EveryTaskCarriesItsColumns) {
  Graph g;
  const ResourceId r = g.AddResource({ResourceKind::kCpuThread, 1, 1, -1, "t", true});
  const OpId parent = g.AddOp("aten::linear", OpId(), 40);
  const OpId child = g.AddOp("aten::addmm", parent, 12);
  TaskSpec s = Spec(r, 7, TaskKind::kCpuWork);
  s.name = "aten::addmm";
  s.op = child;
  s.gap_ns = 2;
  s.phase = Phase::kBackward;
  s.step = 3;
  s.bytes = 64;
  const TaskId t = g.AppendTask(s);
  TaskSpec m = Spec(r, 0, TaskKind::kCpuWork);
  m.step_mark = StepMark::kEnd;
  const TaskId mark = g.AppendTask(m);
  EXPECT_EQ(g.name(t), "aten::addmm");
  EXPECT_EQ(g.op_of(t), child);
  EXPECT_EQ(g.op(child).parent, parent);
  EXPECT_EQ(g.op_name(parent), "aten::linear");
  EXPECT_EQ(g.op(child).own_ns, 12);
  EXPECT_EQ(g.gap_ns(t), 2);
  EXPECT_EQ(g.phase(t), Phase::kBackward);
  EXPECT_EQ(g.step_of(t), 3);
  EXPECT_EQ(g.bytes(t), 64);
  EXPECT_FALSE(g.measured(t));  // not from a trace
  EXPECT_EQ(g.step_mark(t), StepMark::kNone);
  EXPECT_EQ(g.step_mark(mark), StepMark::kEnd);
  EXPECT_TRUE(g.is_step_mark(mark));
  EXPECT_FALSE(g.pinned_gap(t));
  g.set_pinned_gap(t);
  EXPECT_TRUE(g.pinned_gap(t));
  EXPECT_FALSE(g.removed(t));  // flags are independent bits
  EXPECT_GT(g.MemoryBytes(), 0u);
}

TEST(GraphTest, NamesLayersAndGeometriesAreInterned) {
  Graph g;
  EXPECT_EQ(g.InternName("gemm"), g.InternName("gemm"));
  EXPECT_NE(g.InternName("gemm"), g.InternName("relu"));
  const LayerId a = g.AddLayer("encoder", LayerId());
  EXPECT_EQ(g.AddLayer("encoder", LayerId()), a);
  EXPECT_EQ(g.FindLayer("encoder"), a);
  EXPECT_FALSE(g.FindLayer("decoder").valid());
  const ResourceId r = g.AddResource({ResourceKind::kGpuStream, 0, 7, 0, "s", true});
  TaskSpec s = Spec(r, 1, TaskKind::kKernel);
  s.geometry = {128, 256, 32, 0};
  const TaskId k1 = g.AppendTask(s);
  const TaskId k2 = g.AppendTask(s);
  EXPECT_EQ(&g.geometry(k1), &g.geometry(k2));
  EXPECT_FALSE(g.geometry(g.AppendTask(Spec(r, 1, TaskKind::kKernel))).known());
}

// The adjacency after any mix of task and edge changes, patched or built
// again, lists every task's live edges in id order, as one built from
// scratch (a copy's) does: checked after random edits read at random.
TEST(GraphTest, APatchedAdjacencyIsTheBuiltOne) {
  std::mt19937 rng(29);
  for (int trial = 0; trial < 40; ++trial) {
    Graph g;
    const ResourceId r = g.AddResource({.name = "thread"});
    std::vector<TaskId> tasks;
    std::vector<EdgeId> edges;
    for (int i = 0; i < 20; ++i) tasks.push_back(g.AppendTask(Spec(r, 1)));
    const int steps = 200 + static_cast<int>(rng() % 400);
    for (int step = 0; step < steps; ++step) {
      const unsigned op = rng() % 100;
      const TaskId a = tasks[rng() % tasks.size()], b = tasks[rng() % tasks.size()];
      if (op < 45) {
        if (g.live(a) && g.live(b) && a != b) edges.push_back(g.AddEdge(a, b, EdgeKind::kUser));
      } else if (op < 75) {
        if (!edges.empty()) g.RemoveEdge(edges[rng() % edges.size()]);
      } else if (op < 85) {
        tasks.push_back(g.live(a) ? g.InsertTaskAfter(a, Spec(r, 1)) : g.AppendTask(Spec(r, 1)));
      } else if (op < 90) {
        g.RemoveTask(a);
      } else if (op < 92) {
        g.RemoveTasks({a, b});
      } else {
        const Graph fresh = g;  // a copy builds its adjacency from scratch
        for (uint32_t t = 0; t < g.task_count(); ++t) {
          const auto got_out = g.adjacency().out(TaskId(t));
          const auto want_out = fresh.adjacency().out(TaskId(t));
          ASSERT_TRUE(std::equal(got_out.begin(), got_out.end(), want_out.begin(), want_out.end()))
              << "trial " << trial << " step " << step << ": out of task " << t;
          const auto got_in = g.adjacency().in(TaskId(t));
          const auto want_in = fresh.adjacency().in(TaskId(t));
          ASSERT_TRUE(std::equal(got_in.begin(), got_in.end(), want_in.begin(), want_in.end()))
              << "trial " << trial << " step " << step << ": in of task " << t;
        }
      }
    }
  }
}

// Many edges added and removed one at a time, each followed by a read (a
// script's loop): the adjacency is patched, never built again, so the work
// is linear; the slack it leaves is bounded by the live edges.
TEST(GraphTest, EditsReadOneByOnePatchTheAdjacency) {
  Graph g;
  const ResourceId r = g.AddResource({.name = "thread"});
  std::vector<TaskId> tasks;
  for (int i = 0; i < 2000; ++i) tasks.push_back(g.AppendTask(Spec(r, 1)));
  for (int i = 0; i + 1 < 2000; ++i) g.AddEdge(tasks[i], tasks[i + 1], EdgeKind::kUser);
  const size_t builds = g.adjacency().builds;
  for (int i = 0; i + 2 < 2000; i += 2) {
    const EdgeId e = g.AddEdge(tasks[i], tasks[i + 2], EdgeKind::kUser);
    EXPECT_EQ(g.adjacency().out(tasks[i]).size(), 2u);
    g.RemoveEdge(e);
    EXPECT_EQ(g.adjacency().in(tasks[i + 2]).size(), 1u);
    EXPECT_EQ(g.adjacency().builds, builds);
  }
  EXPECT_LE(g.adjacency().slack, 2 * g.live_edge_count() + 1024);
}

// The ops of one name and the ops inside one op are walked through links
// kept as ops are added, the same as a pass over every op finds, also on a
// copy.
TEST(GraphTest, OpsAreFoundByNameAndByParentWithoutAPass) {
  Graph g;
  std::mt19937 rng(5);
  const char* names[] = {"aten::mm", "aten::add", "aten::_to_copy"};
  for (int i = 0; i < 300; ++i) {
    const OpId parent = i > 0 && rng() % 2 ? OpId(rng() % static_cast<uint32_t>(i)) : OpId();
    g.AddOp(names[rng() % 3], parent, i);
  }
  const Graph copy = g;
  for (const Graph* h : {static_cast<const Graph*>(&g), &copy}) {
    for (const char* name : names) {
      std::vector<uint32_t> want, got;
      for (uint32_t o = 0; o < h->op_count(); ++o) {
        if (h->op_name(OpId(o)) == name) want.push_back(o);
      }
      EXPECT_EQ(h->ForEachOpNamed(name, [&](OpId o) { got.push_back(o.value()); }),
                static_cast<int64_t>(want.size()));
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << name;
    }
    EXPECT_EQ(h->ForEachOpNamed("aten::none", [](OpId) {}), 0);
    for (uint32_t p = 0; p < h->op_count(); ++p) {
      std::vector<uint32_t> want, got;
      for (uint32_t o = 0; o < h->op_count(); ++o) {
        if (h->op(OpId(o)).parent == OpId(p)) want.push_back(o);
      }
      h->ForEachChildOp(OpId(p), [&](OpId o) { got.push_back(o.value()); });
      EXPECT_EQ(got, want) << "children of op " << p;  // in id order
    }
  }
}

}  // namespace
}  // namespace reverie::depgraph
