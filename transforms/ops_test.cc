// The op rule of transforms/ops.h on a hand-written trace with known op spans.
#include "transforms/ops.h"

#include <utility>
#include <vector>

#include "depgraph/simulator.h"
#include "depgraph/test_trace.h"
#include "gtest/gtest.h"
#include "transforms/remove.h"
#include "transforms/select.h"

namespace reverie::transforms {
namespace {

using depgraph::Graph;
using depgraph::TaskId;
using depgraph::test_trace::Find;
using depgraph::test_trace::T;

constexpr int64_t kUs = 1000;

// One CPU-bound step [0, 1000] us on one thread:
//   aten::linear [100, 300] > aten::addmm [120, 280] > launch [150, 170] -> gemm
//   aten::add [400, 460] > launch [420, 427] -> add_kernel (10 us)
//   Python between ops elsewhere.
T Trace() {
  T t;
  t.Step(1, 1, 0, 1000 * kUs);
  auto op = [&](std::string_view name, int64_t a, int64_t b) { t.Op(1, a * kUs, b * kUs, name); };
  op("aten::linear", 100, 300);
  op("aten::addmm", 120, 280);
  op("aten::add", 400, 460);
  t.Api("cudaLaunchKernel", 1, 150 * kUs, 170 * kUs, 1);
  t.Gpu("gemm", 7, 175 * kUs, 375 * kUs, 1);
  t.Api("cudaLaunchKernel", 1, 420 * kUs, 427 * kUs, 2);
  t.Gpu("add_kernel", 7, 430 * kUs, 440 * kUs, 2);
  return t;
}

int64_t StepNs(const Graph& g) { return depgraph::Simulate(g)->steps[0].duration_ns(); }

TEST(OpsTest, RemovingAKernelAndItsLaunchRemovesItsOpsOwnTimeAndNothingElse) {
  T t = Trace();
  Graph g = t.Build();
  const int64_t before = StepNs(g);
  const TaskId k = Find(g, "add_kernel");
  const Selection s = Selection::FromUnsorted({k, LaunchesOf(g, Selection::Of(k))[0]});
  const Selection all = WithOrphanedOpTime(g, s);
  EXPECT_EQ(all.size(), 4u);  // kernel, launch, aten::add's head and tail
  ASSERT_TRUE(RemoveTasks(g, s).ok());
  ASSERT_TRUE(g.Validate().ok());
  // The step loses the launch (7 us) and aten::add's own time (20 + 33 us):
  // exactly the op's span; the framework time around it stays.
  EXPECT_EQ(before - StepNs(g), 60 * kUs);
}

TEST(OpsTest, AnOpThatStillIssuesACallKeepsItsTime) {
  T t = Trace();
  Graph g = t.Build();
  const TaskId k = Find(g, "gemm");
  // Only the kernel goes: its launch, hence aten::addmm and aten::linear, stay.
  EXPECT_EQ(WithOrphanedOpTime(g, Selection::Of(k)).size(), 1u);
  // The launch goes: addmm and linear issue nothing else, both lose their time.
  const Selection launch = LaunchesOf(g, Selection::Of(k));
  EXPECT_EQ(WithOrphanedOpTime(g, launch).size(), 1u + 2u + 2u);
  const int64_t before = StepNs(g);
  ASSERT_TRUE(RemoveTasks(g, launch).ok());
  EXPECT_EQ(before - StepNs(g), 200 * kUs);  // the whole of aten::linear
}

TEST(OpsTest, AnOpThatIssuedNoCallIsTimedByItsWholeSpan) {
  T t = Trace();
  // Casts on the CPU side (no launch inside), one of them inside aten::to,
  // each with the ops it runs: their whole span is their cost. {start, end} in us.
  const std::vector<std::pair<std::string_view, std::pair<int64_t, int64_t>>> casts = {
      {"aten::to", {500, 530}},
      {"aten::_to_copy", {502, 528}},
      {"aten::empty_strided", {503, 510}},
      {"aten::_to_copy", {600, 618}},
      {"aten::_to_copy", {700, 740}}};
  for (const auto& [name, span] : casts) t.Op(1, span.first * kUs, span.second * kUs, name);
  Graph g = t.Build();
  EXPECT_EQ(g.op_cost_without_calls("aten::_to_copy"), 26 * kUs);  // median of 26, 18, 40
  EXPECT_EQ(MedianOpCost(g, "aten::_to_copy"), 26 * kUs);
  EXPECT_EQ(MedianOpCost(g, "aten::empty_strided"), 7 * kUs);
  // An op that issued a call is timed by its own time, as before: aten::add
  // is a graph op, never timed by a span.
  EXPECT_FALSE(g.op_cost_without_calls("aten::add").has_value());
  EXPECT_EQ(MedianOpCost(g, "aten::add"), 53 * kUs);
  // The time itself stays the framework's: the step is unchanged.
  EXPECT_EQ(StepNs(g), StepNs(Trace().Build()));
}

TEST(OpsTest, InsertedOpTimeComesWithItsCallAndGoesWithIt) {
  T t = Trace();
  Graph g = t.Build();
  const std::optional<int64_t> cost = MedianOpCost(g, "aten::add");
  ASSERT_TRUE(cost.has_value());
  EXPECT_EQ(*cost, 53 * kUs);
  EXPECT_FALSE(MedianOpCost(g, "aten::nothing").has_value());
  const TaskId call = Find(g, "cudaLaunchKernel", 1);
  const int64_t before = StepNs(g);
  absl::StatusOr<TaskId> op_time = AddOpTime(g, call, "aten::_to_copy", 12 * kUs);
  ASSERT_TRUE(op_time.ok());
  EXPECT_EQ(StepNs(g) - before, 12 * kUs);
  EXPECT_EQ(g.op_name(g.op_of(call)), "aten::_to_copy");
  EXPECT_FALSE(AddOpTime(g, call, "x", -1).ok());
  ASSERT_TRUE(RemoveTasks(g, Selection::Of(call)).ok());
  EXPECT_TRUE(g.removed(*op_time));
}

TEST(OpsTest, StepMarkersAreNeverSelectedNorRemoved) {
  T t = Trace();
  Graph g = t.Build();
  const TaskId begin = Find(g, "ProfilerStep#1");
  EXPECT_TRUE(g.is_step_mark(begin));
  EXPECT_FALSE(SelectAll(g).Contains(begin));
  ASSERT_TRUE(RemoveTasks(g, Selection::Of(begin)).ok());
  EXPECT_FALSE(g.removed(begin));
}

}  // namespace
}  // namespace reverie::transforms
