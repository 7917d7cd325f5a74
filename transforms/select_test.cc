#include "transforms/select.h"

#include "gtest/gtest.h"
#include "transforms/test_graphs.h"

namespace reverie::transforms {
namespace {

using depgraph::Phase;
using depgraph::TaskKind;

class SelectTest : public ::testing::Test {
 protected:
  depgraph::Graph g_ = testing::MakeTrainingGraph(2);
  // Per step: 9 launches + 9 kernels + 1 sync = 19 tasks.
  size_t Count(const TaskQuery& q) {
    absl::StatusOr<Selection> s = Select(g_, q);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? s->size() : 0;
  }
};

TEST_F(SelectTest, ByKind) {
  TaskQuery q;
  q.kinds = KindBit(TaskKind::kKernel);
  EXPECT_EQ(Count(q), 18u);
  q.kinds = *ParseKindMask("cpu");
  EXPECT_EQ(Count(q), 20u);
  EXPECT_EQ(SelectAll(g_).size(), 38u);
}

TEST_F(SelectTest, ByNameKeywordGlobAndRegex) {
  TaskQuery q;
  q.names = {"sgemm"};
  EXPECT_EQ(Count(q), 4u);
  q.names = {"sgemm", "scudnn"};
  EXPECT_EQ(Count(q), 6u);
  q.names = {"*_nt"};
  EXPECT_EQ(Count(q), 2u);
  q.names.clear();
  // (assign()-from-literal trips GCC 12's -Wrestrict false positive at -O3)
  q.name_regex = std::string("^cuda");
  EXPECT_EQ(Count(q), 20u);  // launches and syncs
  q.name_regex = std::string("(");
  EXPECT_EQ(Select(g_, q).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SelectTest, ByLayerIncludesSubLayers) {
  TaskQuery q;
  q.kinds = KindBit(TaskKind::kKernel);
  q.layers = {"layer1"};
  EXPECT_EQ(Count(q), 8u);  // conv, relu, bn, wgrad x 2 steps
  q.layers = {"layer1.*.conv*"};
  EXPECT_EQ(Count(q), 4u);
  q.layers.clear();
  q.no_layer = true;
  EXPECT_EQ(Count(q), 6u);  // the update kernels
}

TEST_F(SelectTest, ByPhaseResourceStepCombined) {
  TaskQuery q;
  q.phases = PhaseBit(Phase::kBackward);
  EXPECT_EQ(Count(q), 12u);
  q.resources = {depgraph::ResourceId(1)};
  EXPECT_EQ(Count(q), 6u);
  q.steps = {1};
  EXPECT_EQ(Count(q), 3u);
  q.steps = {5};
  EXPECT_EQ(Count(q), 0u);
  q.resources = {depgraph::ResourceId(9)};
  EXPECT_EQ(Select(g_, q).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SelectTest, PredicateAndLaunches) {
  const Selection longer = SelectIf(g_, [&](TaskId t) { return g_.duration_ns(t) >= 60'000; });
  EXPECT_EQ(longer.size(), 6u);  // conv, bwd gemm, wgrad x 2
  const Selection launches = LaunchesOf(g_, longer);
  ASSERT_EQ(launches.size(), 6u);
  for (TaskId t : launches) EXPECT_EQ(g_.name(t), "cudaLaunchKernel");
}

TEST_F(SelectTest, SkipsRemovedTasks) {
  TaskQuery q;
  q.kinds = KindBit(TaskKind::kKernel);
  const Selection before = *Select(g_, q);
  g_.RemoveTasks({before[0]});
  EXPECT_EQ(Count(q), before.size() - 1);
}

// Refining a selection tests its members only, with Select's answers: every
// filter, on candidates taken every k-th task (the map of verdicts for a
// few, the table for many), ops nested under a matching parent included.
TEST_F(SelectTest, WithinAMemberListGivesSelectsAnswersForItsMembers) {
  const depgraph::OpId step = g_.AddOp("ProfilerStep#1", depgraph::OpId(), 0);
  const depgraph::OpId conv = g_.AddOp("aten::conv2d", step, 0);
  const depgraph::OpId other = g_.AddOp("aten::relu", depgraph::OpId(), 0);
  for (uint32_t i = 0; i < g_.task_count(); ++i) {
    g_.set_op(TaskId(i), i % 3 == 0 ? conv : (i % 3 == 1 ? other : depgraph::OpId()));
  }
  g_.RemoveTasks({TaskId(4)});
  std::vector<TaskQuery> queries(9);
  queries[0].kinds = KindBit(TaskKind::kKernel);
  queries[1].names = {"sgemm", "*_nt"};
  queries[2].name_regex = std::string("^cuda");
  queries[3].layers = {"layer1.*.conv*", "fc"};
  queries[4].no_layer = true;
  queries[5].phases = PhaseBit(Phase::kBackward);
  queries[5].steps = {1};
  queries[6].ops = {"ProfilerStep*"};
  queries[7].ops = {"relu"};
  queries[7].resource_kinds = ResourceKindBit(depgraph::ResourceKind::kCpuThread);
  queries[8].kernel_classes = *ParseKernelClassBit("gemm");
  for (size_t qi = 0; qi < queries.size(); ++qi) {
    const Selection all = *Select(g_, queries[qi]);
    for (uint32_t every : {1u, 2u, 7u, 20u}) {
      std::vector<TaskId> within;
      for (uint32_t i = 0; i < g_.task_count(); i += every) within.push_back(TaskId(i));
      int64_t work = 0;
      const absl::StatusOr<std::vector<TaskId>> got = SelectWithin(g_, queries[qi], within, &work);
      ASSERT_TRUE(got.ok()) << got.status();
      std::vector<TaskId> want;
      for (TaskId t : within) {
        if (all.Contains(t)) want.push_back(t);
      }
      EXPECT_EQ(*got, want) << "query " << qi << ", every " << every << "th task";
      EXPECT_GE(work, static_cast<int64_t>(within.size()));
    }
  }
  TaskQuery bad;
  bad.name_regex = std::string("(");
  EXPECT_EQ(SelectWithin(g_, bad, {}, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

// A few members cost what they are, on a graph of any size.
TEST(SelectWithinTest, CostsTheMembersNotTheGraph) {
  depgraph::Graph big = testing::MakeLargeGraph(200'000);
  TaskQuery q;
  q.names = {"kernel"};
  q.layers = {"**"};
  const std::vector<TaskId> few = {TaskId(1), TaskId(3), TaskId(5)};
  int64_t work = 0;
  ASSERT_TRUE(SelectWithin(big, q, few, &work).ok());
  EXPECT_LT(work, 100) << "three members";
}

TEST(ParseTest, NamesRoundTripAndErrorsListChoices) {
  EXPECT_EQ(*ParsePhase("backward"), Phase::kBackward);
  EXPECT_EQ(*ParseTaskKind("memcpy"), TaskKind::kMemcpy);
  EXPECT_EQ(*ParseEdgeKind("launch"), depgraph::EdgeKind::kLaunch);
  EXPECT_EQ(*ParseResourceKind("channel"), depgraph::ResourceKind::kCommChannel);
  const absl::Status s = ParsePhase("fwd").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("forward"), std::string::npos);
}

}  // namespace
}  // namespace reverie::transforms
