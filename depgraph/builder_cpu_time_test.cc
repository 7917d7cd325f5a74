// The CPU time between API calls made explicit (builder_cpu_time.cc) on a
// hand-written thread with known op spans, and the step markers.
#include <string>
#include <vector>

#include "depgraph/cpu_time.h"
#include "depgraph/simulator.h"
#include "depgraph/step_time.h"
#include "depgraph/test_trace.h"
#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

using test_trace::T;

struct Piece {
  std::string name;
  int64_t start_us, dur_us;
  std::string op;  // "" = framework
};

// The thread's tasks in order: name, measured start, duration, op name.
std::vector<Piece> ThreadTasks(const Graph& g, ResourceId r) {
  std::vector<Piece> out;
  for (TaskId t = g.first_on_resource(r); t.valid(); t = g.next_on_resource(t)) {
    out.push_back({std::string(g.name(t)), g.measured_start_ns(t) / 1000,
                   g.duration_ns(t) / 1000,
                   g.op_of(t).valid() ? std::string(g.op_name(g.op_of(t))) : ""});
  }
  return out;
}

// One step [0, 1000] us on thread 1:
//   aten::linear [100, 300] > aten::addmm [120, 280] > launch [150, 170]
//   aten::add [400, 460] > launch [420, 427]
//   aten::view [500, 510] (issues nothing)
//   enumerate(DataLoader)#... [600, 900] (an annotation, data loading)
//   aten::relu [940, 970] > launch [950, 955]
T OneThreadWithOps() {
  T t;
  constexpr int64_t us = 1000;
  t.Step(1, 1, 0, 1000 * us);
  auto op = [&](std::string_view name, int64_t a, int64_t b) { t.Op(1, a * us, b * us, name); };
  op("aten::linear", 100, 300);
  op("aten::addmm", 120, 280);
  op("aten::add", 400, 460);
  op("aten::view", 500, 510);
  op("aten::relu", 940, 970);
  t.Range(1, 600 * us, 900 * us, "", proto::DATA_LOADING,
          "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  t.Api("cudaLaunchKernel", 1, 150 * us, 170 * us, 1);
  t.Gpu("gemm", 7, 175 * us, 375 * us, 1);
  t.Api("cudaLaunchKernel", 1, 420 * us, 427 * us, 2);
  t.Gpu("add_kernel", 7, 430 * us, 440 * us, 2);
  t.Api("cudaLaunchKernel", 1, 950 * us, 955 * us, 3);
  t.Gpu("relu_kernel", 7, 960 * us, 970 * us, 3);
  return t;
}

TEST(BuilderCpuTimeTest, GapsBecomeOpAndFrameworkTasksAtTheSpansBoundaries) {
  T t = OneThreadWithOps();
  const Graph g = t.Build();
  const ResourceId thread = g.resource_of(test_trace::Find(g, "cudaLaunchKernel"));
  const std::vector<Piece> want = {
      {"ProfilerStep#1", 0, 0, ""},
      {"[framework]", 0, 100, ""},
      {"aten::linear", 100, 20, "aten::linear"},
      {"aten::addmm", 120, 30, "aten::addmm"},
      {"cudaLaunchKernel", 150, 20, "aten::addmm"},
      {"aten::addmm", 170, 110, "aten::addmm"},
      {"aten::linear", 280, 20, "aten::linear"},
      {"[framework]", 300, 100, ""},
      {"aten::add", 400, 20, "aten::add"},
      {"cudaLaunchKernel", 420, 7, "aten::add"},
      {"aten::add", 427, 33, "aten::add"},
      {"[framework]", 460, 140, ""},  // aten::view issues nothing: framework time
      {"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 600, 300, ""},
      {"[framework]", 900, 40, ""},
      {"aten::relu", 940, 10, "aten::relu"},
      {"cudaLaunchKernel", 950, 5, "aten::relu"},
      {"aten::relu", 955, 15, "aten::relu"},
      {"[framework]", 970, 30, ""},
      {"ProfilerStep#1 end", 1000, 0, ""},
  };
  const std::vector<Piece> got = ThreadTasks(g, thread);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name) << i;
    EXPECT_EQ(got[i].start_us, want[i].start_us) << i << " " << want[i].name;
    EXPECT_EQ(got[i].dur_us, want[i].dur_us) << i << " " << want[i].name;
    EXPECT_EQ(got[i].op, want[i].op) << i << " " << want[i].name;
  }
  // Op own time: everything of the op outside its calls and issuing children.
  ASSERT_EQ(g.op_count(), 4u);  // linear, addmm, add, relu (view issues nothing)
  for (uint32_t o = 0; o < g.op_count(); ++o) {
    const std::string_view name = g.op_name(OpId(o));
    const int64_t own = g.op(OpId(o)).own_ns / 1000;
    if (name == "aten::linear") {
      EXPECT_EQ(own, 40);
    }
    if (name == "aten::addmm") {
      EXPECT_EQ(own, 140);
      EXPECT_EQ(g.op_name(g.op(OpId(o)).parent), "aten::linear");
    }
    if (name == "aten::add") {
      EXPECT_EQ(own, 53);
    }
  }
  // The data loader's time is its own phase.
  const TaskId loader =
      test_trace::Find(g, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  EXPECT_EQ(g.phase(loader), Phase::kDataLoading);
  // A GPU task carries its launch's op.
  EXPECT_EQ(g.op_name(g.op_of(test_trace::Find(g, "gemm"))), "aten::addmm");
}

TEST(BuilderCpuTimeTest, ReplayIsUnchangedAndTheSplitAddsUpToTheThreadTime) {
  T t = OneThreadWithOps();
  const Graph g = t.Build();
  absl::StatusOr<SimResult> sim = Simulate(g);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(sim->steps[0].duration_ns(), MeasuredSteps(g)[0].duration_ns());
  const CpuTimeReport r = ComputeCpuTime(g, sim->start_ns, sim->end_ns);
  ASSERT_EQ(r.by_thread.size(), 1u);
  const ThreadCpuTime& th = r.by_thread[0];
  EXPECT_EQ(th.span_ns, 1000 * 1000);
  EXPECT_EQ(th.busy.api_ns, 32 * 1000);
  EXPECT_EQ(th.busy.op_ns, (40 + 140 + 53 + 25) * 1000);
  EXPECT_EQ(th.busy.framework_ns, (100 + 100 + 140 + 300 + 40 + 30) * 1000);
  EXPECT_EQ(th.busy.untraced_ns, 0);
  EXPECT_EQ(th.waiting_ns(), 0);
  EXPECT_EQ(r.threads_without_ops, 0);
}

TEST(BuilderCpuTimeTest, AThreadWithoutOpSpansKeepsItsGapsAndGetsMarkers) {
  T t;
  constexpr int64_t us = 1000;
  t.Step(1, 1, 0, 100 * us);
  t.Api("cudaLaunchKernel", 1, 10 * us, 15 * us, 1);
  t.Gpu("k", 7, 20 * us, 30 * us, 1);
  t.Api("cudaLaunchKernel", 1, 40 * us, 45 * us, 2);
  t.Gpu("k", 7, 50 * us, 60 * us, 2);
  BuildStats stats;
  const Graph g = t.Build(&stats);
  EXPECT_EQ(stats.Get(BuildCounter::cpu_threads_without_ops), 1);
  EXPECT_EQ(g.op_count(), 0u);
  const TaskId first = test_trace::Find(g, "cudaLaunchKernel");
  EXPECT_EQ(g.gap_ns(first), 25 * us);  // the old model: the gap holds the time
  const TaskId end = test_trace::Find(g, "ProfilerStep#1 end");
  EXPECT_EQ(g.step_mark(end), StepMark::kEnd);
  EXPECT_EQ(g.measured_start_ns(end), 100 * us);
  absl::StatusOr<SimResult> sim = Simulate(g);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(sim->steps[0].duration_ns(), 100 * us);
}

}  // namespace
}  // namespace reverie::depgraph

namespace reverie::depgraph {
namespace {

// The inputs an op recorded reach its graph op (interned); inputs whose
// list ranks contradict their sizes (a hand-made .pb) are dropped and
// counted.
TEST(BuilderCpuTimeTest, OpsKeepTheirRecordedInputs) {
  test_trace::T t = OneThreadWithOps();
  proto::TraceChunk& ev = t.tr.events();
  for (int i = 0; i < ev.ranges_size(); ++i) {
    proto::Range* r = ev.mutable_ranges(i);
    const std::string_view name = t.tr.String(r->name_sid());
    if (name == "aten::addmm") {
      for (std::vector<int64_t> dims : {std::vector<int64_t>{256}, {16, 2056}, {2056, 256}}) {
        proto::OpInput* in = r->add_inputs();
        for (int64_t d : dims) in->add_dims(d);
        in->set_type_sid(t.tr.Intern("float"));
      }
      proto::OpInput* alpha = r->add_inputs();
      alpha->set_type_sid(t.tr.Intern("Scalar"));
      alpha->set_concrete_sid(t.tr.Intern("1"));
    } else if (name == "aten::add") {
      proto::OpInput* list = r->add_inputs();  // ranks 2 + 2 for 3 dims: inconsistent
      list->set_is_list(true);
      list->add_list_ranks(2);
      list->add_list_ranks(2);
      for (int64_t d : {4, 4, 4}) list->add_dims(d);
      list->set_type_sid(t.tr.Intern("TensorList"));
    }
  }
  BuildStats stats;
  const Graph g = t.Build(&stats);
  int with_inputs = 0;
  for (uint32_t o = 0; o < g.op_count(); ++o) {
    const hardware::OpArgs* in = g.op_inputs(OpId(o));
    if (in == nullptr) continue;
    ++with_inputs;
    EXPECT_EQ(g.op_name(OpId(o)), "aten::addmm");
    ASSERT_EQ(in->size(), 4u);
    const std::vector<std::vector<int64_t>> x = {{16, 2056}};
    EXPECT_EQ((*in)[1].shapes, x);
    EXPECT_EQ((*in)[3].concrete, "1");
    EXPECT_TRUE((*in)[3].shapes.empty());  // a Scalar: no tensor
    const hardware::OpWork w = hardware::WorkOfOp(g.op_name(OpId(o)), *in);
    EXPECT_DOUBLE_EQ(w.flops, 2.0 * 16 * 256 * 2056 + 16 * 256);
  }
  EXPECT_EQ(with_inputs, 1);
  EXPECT_EQ(stats.Get(BuildCounter::op_inputs_inconsistent), 1);
}

}  // namespace
}  // namespace reverie::depgraph
