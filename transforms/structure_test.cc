#include "transforms/structure.h"

#include "depgraph/simulator.h"
#include "gtest/gtest.h"
#include "transforms/select.h"
#include "transforms/test_graphs.h"

namespace reverie::transforms {
namespace {

using depgraph::Phase;
using depgraph::TaskKind;

class StructureTest : public ::testing::Test {
 protected:
  depgraph::Graph g_ = testing::MakeTrainingGraph(1);
  const ResourceId cpu_{0}, gpu_{1};

  TaskId Kernel(const char* name) {
    TaskQuery q;
    q.kinds = KindBit(TaskKind::kKernel);
    q.names = {name};
    return (*Select(g_, q))[0];
  }
  int64_t SimNs() { return depgraph::Simulate(g_)->makespan_ns; }
};

TEST_F(StructureTest, InsertCpuTaskAfterBeforeAndAppend) {
  const TaskId first = g_.first_on_resource(cpu_);
  TaskSpec work{.kind = TaskKind::kCpuWork, .name = "data loading", .duration_ns = 1'000'000};
  const int64_t before = SimNs();
  absl::StatusOr<TaskId> t = InsertTask(g_, Where::After(first), work);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(g_.prev_on_resource(*t), first);
  EXPECT_EQ(g_.resource_of(*t), cpu_);
  EXPECT_GT(SimNs(), before + 900'000);  // everything after it moves
  absl::StatusOr<TaskId> b = InsertTask(g_, Where::Before(first), work);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(g_.first_on_resource(cpu_), *b);
  absl::StatusOr<TaskId> e = InsertTask(g_, Where::OnResource(cpu_), work);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(g_.last_on_resource(cpu_), *e);
  EXPECT_TRUE(g_.Validate().ok());
}

TEST_F(StructureTest, InsertRejectsWrongKindDeadAnchorAndNegativeTimes) {
  TaskSpec k;
  k.kind = TaskKind::kKernel;
  k.name = "k";
  const size_t live = g_.live_task_count();
  EXPECT_EQ(InsertTask(g_, Where::OnResource(cpu_), k).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InsertTask(g_, Where::OnResource(ResourceId(42)), k).status().code(),
            absl::StatusCode::kNotFound);
  const TaskId victim = g_.first_on_resource(gpu_);
  g_.RemoveTasks({victim});
  EXPECT_EQ(InsertTask(g_, Where::After(victim), k).status().code(),
            absl::StatusCode::kFailedPrecondition);
  k.duration_ns = -1;
  EXPECT_EQ(InsertTask(g_, Where::OnResource(gpu_), k).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g_.live_task_count(), live - 1);  // only the removal above
}

TEST_F(StructureTest, LaunchModelIsTheMedianOfTheTrace) {
  // Make the launch calls 3, 5 and 100us: the median is robust to the outlier.
  TaskQuery q;
  q.names = {"cudaLaunchKernel"};
  const Selection launches = *Select(g_, q);
  ASSERT_EQ(launches.size(), 9u);
  g_.set_duration_ns(launches[0], 3'000);
  g_.set_duration_ns(launches[1], 100'000);
  const LaunchModel m = InferLaunchModel(g_);
  EXPECT_EQ(m.kernel_launch_ns, 5'000);
  EXPECT_EQ(m.kernel_launch_samples, 9);
  EXPECT_EQ(m.memcpy_launch_ns, 5'000);  // no memcpy calls: the kernel figure
  EXPECT_EQ(InferLaunchModel(depgraph::Graph()).kernel_launch_ns, LaunchModel::kDefaultLaunchNs);
}

TEST_F(StructureTest, CooperativeLaunchesAreKernelLaunchesToo) {
  // The same predicate as validate's host-speed comparison
  // (depgraph::IsKernelLaunchApi): a cooperative launch is a launch.
  TaskQuery q;
  q.names = {"cudaLaunchKernel"};
  const Selection launches = *Select(g_, q);
  ASSERT_EQ(launches.size(), 9u);
  for (size_t i = 0; i < 5; ++i) {
    g_.set_name(launches[i], "cudaLaunchCooperativeKernel");
    g_.set_duration_ns(launches[i], 40'000);
  }
  const LaunchModel m = InferLaunchModel(g_);
  EXPECT_EQ(m.kernel_launch_samples, 9);
  EXPECT_EQ(m.kernel_launch_ns, 40'000);  // five of nine at 40 us
}

TEST_F(StructureTest, InsertGpuTaskAddsItsLaunchCallAsInFig4) {
  const TaskId relu = Kernel("elementwise");
  const TaskId relu_launch = LauncherOf(g_, relu);
  ASSERT_TRUE(relu_launch.valid());
  TaskSpec enc{
      .kind = TaskKind::kKernel, .name = "gist_encode", .duration_ns = 40'000,
      .phase = Phase::kForward, .step = 0};
  const int64_t before = SimNs();
  absl::StatusOr<InsertedGpuTask> ins =
      InsertGpuTask(g_, Where::After(relu), enc, LaunchOptions{}, InferLaunchModel(g_));
  ASSERT_TRUE(ins.ok()) << ins.status();
  EXPECT_EQ(g_.prev_on_resource(ins->gpu), relu);
  EXPECT_EQ(g_.prev_on_resource(ins->launch), relu_launch);
  EXPECT_EQ(g_.name(ins->launch), "cudaLaunchKernel");
  EXPECT_EQ(g_.duration_ns(ins->launch), 5'000);
  EXPECT_EQ(g_.phase(ins->launch), Phase::kForward);
  EXPECT_EQ(LauncherOf(g_, ins->gpu), ins->launch);
  EXPECT_TRUE(g_.Validate().ok());
  EXPECT_GE(SimNs(), before + 40'000);

  // Before the first kernel: the launch goes before the first launch call.
  const TaskId first = g_.first_on_resource(gpu_);
  absl::StatusOr<InsertedGpuTask> pre = InsertGpuTask(g_, Where::Before(first), enc,
                                                      LaunchOptions{}, InferLaunchModel(g_));
  ASSERT_TRUE(pre.ok()) << pre.status();
  EXPECT_EQ(g_.first_on_resource(cpu_), pre->launch);
  EXPECT_EQ(g_.first_on_resource(gpu_), pre->gpu);

  // Memcpy without a launch call.
  TaskSpec copy{.kind = TaskKind::kMemcpy, .name = "Memcpy DtoH (offload)", .duration_ns = 1'000};
  LaunchOptions none;
  none.with_launch = false;
  absl::StatusOr<InsertedGpuTask> c =
      InsertGpuTask(g_, Where::OnResource(gpu_), copy, none, InferLaunchModel(g_));
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->launch.valid());
  EXPECT_EQ(g_.last_on_resource(gpu_), c->gpu);
}

TEST_F(StructureTest, InsertGpuTaskWithExplicitLaunchCannotCloseACycle) {
  // The sync call waits for the last update kernel; launching a kernel that
  // runs before that kernel from after the sync would be a cycle.
  const TaskId sync = g_.last_on_resource(cpu_);
  const TaskId first = g_.first_on_resource(gpu_);
  TaskSpec k{.kind = TaskKind::kKernel, .name = "late"};
  LaunchOptions o;
  o.launch_after = sync;
  const size_t live = g_.live_task_count();
  absl::StatusOr<InsertedGpuTask> ins =
      InsertGpuTask(g_, Where::After(first), k, o, InferLaunchModel(g_));
  EXPECT_EQ(ins.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(ins.status().message().find("cycle"), std::string::npos);
  EXPECT_EQ(g_.live_task_count(), live);
  EXPECT_TRUE(g_.Validate().ok());
}

TEST_F(StructureTest, AddDependencyChecksCyclesAndRemoveDependency) {
  const TaskId first_k = g_.first_on_resource(gpu_);
  const TaskId last_k = g_.last_on_resource(gpu_);
  EXPECT_EQ(AddDependency(g_, last_k, first_k).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(AddDependency(g_, first_k, first_k).status().code(),
            absl::StatusCode::kFailedPrecondition);
  const size_t edges = g_.live_edge_count();
  // A new CPU thread waiting for the first kernel is fine.
  const ResourceId t2 = AddCpuThread(g_, "helper");
  TaskSpec w{.kind = TaskKind::kCpuWork, .name = "host work", .duration_ns = 1'000};
  const TaskId h = *InsertTask(g_, Where::OnResource(t2), w);
  ASSERT_TRUE(AddDependency(g_, first_k, h, depgraph::EdgeKind::kUser, 50).ok());
  EXPECT_EQ(g_.live_edge_count(), edges + 1);
  EXPECT_TRUE(g_.Reaches(first_k, h));
  EXPECT_FALSE(g_.Reaches(h, first_k));
  EXPECT_EQ(*RemoveDependency(g_, first_k, h), 1);
  EXPECT_EQ(RemoveDependency(g_, first_k, h).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(g_.live_edge_count(), edges);
}

TEST_F(StructureTest, AddDependenciesChecksTheBatchOnce) {
  const TaskId first_k = g_.first_on_resource(gpu_);
  const TaskId last_k = g_.last_on_resource(gpu_);
  const TaskId sync = g_.last_on_resource(cpu_);
  const size_t edges = g_.live_edge_count();
  // Fine on their own, a cycle together: last -> first closes the stream.
  std::vector<Dependency> deps = {{first_k, sync}, {last_k, first_k}};
  const absl::Status s = AddDependencies(g_, deps);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("cycle"), std::string::npos);
  EXPECT_EQ(g_.live_edge_count(), edges);  // nothing kept
  deps = {{first_k, sync, depgraph::EdgeKind::kSync, 5}};
  ASSERT_TRUE(AddDependencies(g_, deps).ok());
  EXPECT_EQ(g_.live_edge_count(), edges + 1);
  g_.RemoveTasks({first_k});
  EXPECT_EQ(AddDependencies(g_, {{first_k, sync}}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(StructureTest, CommChannelIsUnorderedAndTakesOnlyCommTasks) {
  const ResourceId ch = AddCommChannel(g_, "allreduce");
  EXPECT_FALSE(g_.resource(ch).ordered);
  EXPECT_EQ(g_.resource(ch).kind, depgraph::ResourceKind::kCommChannel);
  TaskSpec ar{
      .kind = TaskKind::kComm, .name = "allreduce", .duration_ns = 500'000, .bytes = 1 << 20};
  const TaskId a = *InsertTask(g_, Where::OnResource(ch), ar);
  const TaskId b = *InsertTask(g_, Where::OnResource(ch), ar);
  // Unordered: b does not wait for a, but the channel runs one at a time.
  EXPECT_FALSE(g_.Reaches(a, b));
  ASSERT_TRUE(AddDependency(g_, Kernel("wgrad"), a, depgraph::EdgeKind::kComm).ok());
  const depgraph::SimResult r = *depgraph::Simulate(g_);
  EXPECT_GE(r.start_ns[a.value()], r.end_ns[Kernel("wgrad").value()]);
  EXPECT_TRUE(r.start_ns[b.value()] >= r.end_ns[a.value()] ||
              r.start_ns[a.value()] >= r.end_ns[b.value()]);
  ar.kind = TaskKind::kKernel;
  EXPECT_EQ(InsertTask(g_, Where::OnResource(ch), ar).status().code(),
            absl::StatusCode::kInvalidArgument);
  const ResourceId s2 = AddGpuStream(g_, 0, "");
  EXPECT_EQ(g_.resource(s2).native_id, 8);  // after stream 7 on gpu 0
}

}  // namespace
}  // namespace reverie::transforms
