#include "transforms/session.h"

#include "gtest/gtest.h"
#include "transforms/edit.h"
#include "transforms/remove.h"
#include "transforms/select.h"
#include "transforms/structure.h"
#include "transforms/test_graphs.h"

namespace reverie::transforms {
namespace {

using depgraph::TaskKind;

TEST(SessionTest, CommitReplacesTheGraphAndCountsChanges) {
  depgraph::Graph g = testing::MakeTrainingGraph(2);
  EditSession s(g);
  TaskQuery q;
  q.kinds = KindBit(TaskKind::kKernel);
  q.names = {"sgemm"};
  ASSERT_TRUE(ScaleDuration(s.graph(), *Select(s.graph(), q), 0.5).ok());  // 4 modified
  q.names = {"elementwise"};  // "relu" alone would also match the fused conv
  const Selection relu = *Select(s.graph(), q);
  ASSERT_TRUE(RemoveTasks(s.graph(), relu.Union(LaunchesOf(s.graph(), relu))).ok());  // 4 gone
  depgraph::TaskSpec w{.kind = TaskKind::kCpuWork, .name = "extra"};
  ASSERT_TRUE(InsertTask(s.graph(), Where::OnResource(depgraph::ResourceId(0)), w).ok());
  AddCommChannel(s.graph(), "ring");
  EXPECT_EQ(g.live_task_count(), 38u);  // untouched until commit
  ChangeSummary c;
  ASSERT_TRUE(s.Commit(&g, &c).ok());
  EXPECT_EQ(c.modified, 4);
  EXPECT_EQ(c.removed, 4);
  EXPECT_EQ(c.added, 1);
  EXPECT_EQ(c.resources_added, 1);
  EXPECT_EQ(c.edges_removed, 2);  // the two relu launch edges
  EXPECT_EQ(g.live_task_count(), 35u);
  EXPECT_EQ(s.Commit(&g, &c).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SessionTest, ACycleFailsTheCommitAndLeavesTheGraphAlone) {
  depgraph::Graph g = testing::MakeTrainingGraph(1);
  const depgraph::Graph original = g;
  EditSession s(g);
  ASSERT_TRUE(ScaleDuration(s.graph(), SelectAll(s.graph()), 2).ok());
  // Bypass AddDependency's check, as a buggy transform could.
  const depgraph::ResourceId gpu(1);
  s.graph().AddEdge(s.graph().last_on_resource(gpu), s.graph().first_on_resource(gpu),
                    depgraph::EdgeKind::kUser);
  ChangeSummary c;
  const absl::Status st = s.Commit(&g, &c);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("cycle"), std::string::npos);
  EXPECT_TRUE(Diff(original, g).empty());
  EXPECT_EQ(g.duration_ns(TaskId(1)), original.duration_ns(TaskId(1)));
}

// A dangling edge (to a removed task) can no longer reach Commit: Graph
// refuses it where it is made (graph.h invariants), and the session's copy
// still commits what was done before.
TEST(SessionDeathTest, ADanglingEdgeIsRefusedWhereItIsMade) {
  depgraph::Graph g = testing::MakeTrainingGraph(1);
  EditSession s(g);
  const TaskId victim = s.graph().first_on_resource(depgraph::ResourceId(1));
  s.graph().RemoveTasks({victim});
  EXPECT_DEATH(s.graph().AddEdge(s.graph().first_on_resource(depgraph::ResourceId(0)), victim,
                                 depgraph::EdgeKind::kUser),
               "check failed");
  const size_t before = g.live_task_count();
  ASSERT_TRUE(s.Commit(&g, nullptr).ok());
  EXPECT_EQ(g.live_task_count(), before - 1);
}

TEST(SessionTest, SchedulePolicyChoice) {
  ScheduleChoice c;
  EXPECT_EQ(c.policy(), nullptr);
  c.kind = ScheduleChoice::Kind::kPriority;
  ASSERT_NE(c.policy(), nullptr);
  depgraph::Graph g = testing::MakeTrainingGraph(1);
  g.set_priority(TaskId(3), 7);
  EXPECT_EQ(c.policy()->Key(g, TaskId(3), 100), 7);
}

}  // namespace
}  // namespace reverie::transforms
