// The graph API as scripts see it (docs/LUA_API.md), on hand-built graphs.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "depgraph/simulator.h"
#include "lua/lua_test_util.h"
#include "transforms/select.h"
#include "transforms/structure.h"
#include "transforms/test_graphs.h"

namespace reverie::lua {
namespace {

using ::testing::HasSubstr;
using testing::RunLua;

class BindingsTest : public ::testing::Test {
 protected:
  depgraph::Graph g_ = transforms::testing::MakeTrainingGraph(2);
  // Runs `code`, expecting success.
  void Ok(const std::string& code) {
    const auto r = RunLua(code, &g_);
    ASSERT_TRUE(r.status.ok()) << r.status;
  }
  std::string Err(const std::string& code) { return testing::FirstLine(RunLua(code, &g_).status); }
  double MeanNs() { return depgraph::Simulate(g_)->mean_step_ns(); }
};

TEST_F(BindingsTest, SelectCountsAndComposes) {
  Ok(R"(
    local k = graph:select{kind = "kernel"}
    assert(#k == 18 and k:count() == 18 and not k:empty())
    local gemm = graph:select{kind = "kernel", name = {"sgemm", "scudnn"}}
    assert(#gemm == 6, #gemm)
    assert(#graph:select{name_regex = "^cuda"} == 20)
    assert(#graph:select{layer = "layer1.*.conv*", kind = "gpu"} == 4)
    assert(#graph:select{layer = "layer1"} == 16)
    assert(#graph:select{no_layer = true, kind = "kernel"} == 6)
    assert(#graph:select{phase = {"forward", "backward"}, kind = "kernel"} == 12)
    assert(#graph:select{step = 1} == 19)
    assert(#graph:select{step = {0, 1}, resource_kind = "stream"} == 18)
    local stream = graph:resources("stream")[1]
    assert(#graph:select{resource = stream} == 18)
    local bwd = graph:select{phase = "backward"}
    assert(#(k & bwd) == 6 and #(k | bwd) == 24 and #(k - bwd) == 12)
    assert(#k:intersect(bwd) == 6 and #k:union(bwd) == 24 and #k:minus(bwd) == 12)
    assert(#k:select{phase = "update"} == 6)
    local long = graph:select{kind = "kernel", where = function(t) return t.duration_ns >= 60000 end}
    assert(#long == 6)
    assert(#k:filter(function(t) return t.phase == "forward" end) == 6)
    assert(k:contains(k[1]) and not bwd:contains(k[1]))
    assert(#graph:all() == 38 and #graph:none() == 0)
  )");
}

TEST_F(BindingsTest, SelectRejectsTyposAndBadNames) {
  EXPECT_THAT(Err("graph:select{knd = 'kernel'}"), HasSubstr("unknown field 'knd'"));
  EXPECT_THAT(Err("graph:select{kind = 'kernal'}"), HasSubstr("unknown task kind 'kernal'"));
  EXPECT_THAT(Err("graph:select{phase = 'fwd'}"), HasSubstr("unknown phase 'fwd'"));
  EXPECT_THAT(Err("graph:select{name_regex = '('}"), HasSubstr("bad name regex"));
  EXPECT_THAT(Err("\ngraph:select{kind = 3}"), ::testing::StartsWith("test.lua:2:"));
}

// A float where an integer belongs names the parameter (it said "bad
// argument #-2 to 'select' (table expected, got number)").
TEST_F(BindingsTest, IntegerParametersSayIntegerExpected) {
  EXPECT_THAT(Err("graph:select{step = 1.5}"),
              HasSubstr("select: step: integer expected, got 1.5"));
  EXPECT_THAT(Err("graph:task(2.5)"), HasSubstr("task: id: integer expected, got 2.5"));
  EXPECT_THAT(Err("graph:select{kind = 'kernel'}:set_priority('high')"),
              HasSubstr("set_priority: integer expected, got string"));
  EXPECT_THAT(Err("graph:select{resource = 3}"),
              HasSubstr("'resource' must be a resource or a list of resources"));
}

// An edit on a selection that matched nothing changes nothing: the log says
// so, naming the line, instead of staying silent.
TEST_F(BindingsTest, EditsOnEmptySelectionsWarnInTheLog) {
  const auto r = RunLua("local none = graph:select{name = 'no_such_kernel'}\n"
                        "none:shrink(2)\n"
                        "graph:select{kind = 'kernel'}:shrink(2)\n",
                        &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.engine->log().size(), 1u);
  EXPECT_THAT(r.engine->log()[0],
              ::testing::AllOf(::testing::StartsWith("warning: "), HasSubstr(":2: shrink"),
                               HasSubstr("empty selection")));
}

TEST_F(BindingsTest, TaskFieldsAndNavigation) {
  Ok(R"(
    local k = graph:select{kind = "kernel", name = "wgrad"}[1]
    assert(k.kind == "kernel" and k.name:find("wgrad") and k.duration_ns == 120000)
    assert(k.phase == "backward" and k.layer == "layer1.0.conv1" and k.step == 0)
    assert(k.resource.kind == "stream" and k.resource.ordered)
    local l = k:launcher()
    assert(l.name == "cudaLaunchKernel" and l:launched()[1] == k)
    assert(k:parents("launch")[1] == l and #k:children() == 0)
    assert(k:prev().name:find("bn_bw") and k:next().phase == "update")
    assert(k:is_gpu() and not l:is_gpu())
    k.duration_ns = 1000
    k.gap_ns = 5
    k.priority = 3
    k.phase = "forward"
    k.layer = "brand.new.layer"
    assert(k.duration_ns == 1000 and k.priority == 3 and k.phase == "forward")
    assert(k.layer == "brand.new.layer")
    assert(tostring(k):find("kernel"))
  )");
  EXPECT_TRUE(g_.FindLayer("brand.new").valid() || g_.FindLayer("brand.new.layer").valid());
  EXPECT_THAT(Err("local t = graph:task(0) t.duration_ns = -1"), HasSubstr("between 0 and 2^50 ns"));
  EXPECT_THAT(Err("local t = graph:task(0) t.kind = 'kernel'"), HasSubstr("cannot be set"));
  EXPECT_THAT(Err("local t = graph:task(0) return t.colour"), HasSubstr("no field 'colour'"));
}

// Fields and methods are looked up in one table (lua_task.cc): a method is
// never a field, a field is never settable unless listed, and a key that is
// not a string is an unknown field, as before.
TEST_F(BindingsTest, FieldsAndMethodsOneLookup) {
  const depgraph::OpId op = g_.AddOp("aten::mm", depgraph::OpId(), 500);
  g_.set_op(depgraph::TaskId(1), op);
  Ok(R"(
    local with_op, without = 0, 0
    for t in graph:all():tasks() do
      local op = t.op
      assert(t.op_id == (op and op.id), "op_id is the op's id or nil")
      if op then
        assert(graph:op(t.op_id).name == op.name)
        with_op = with_op + 1
      else
        without = without + 1
      end
    end
    assert(with_op > 0 and without > 0)
    local t = graph:task(0)
    assert(type(t.next) == "function" and t.removed == false and t.id == 0)
  )");
  EXPECT_THAT(Err("local t = graph:task(0) t.op_id = 3"),
              HasSubstr("task field 'op_id' cannot be set"));
  EXPECT_THAT(Err("local t = graph:task(0) t.next = 3"),
              HasSubstr("task field 'next' cannot be set"));
  EXPECT_THAT(Err("local t = graph:task(0) return t[1]"), HasSubstr("no field '1'"));
  EXPECT_THAT(Err("local t = graph:task(0) return t[{}]"), HasSubstr("string expected"));
  EXPECT_THAT(Err("local t = graph:task(0) t[true] = 1"), HasSubstr("string expected"));
}

// Scripts written for reverie 0.1.0 said "iteration" for a step; those names
// are kept one release and mean the same as the new ones.
TEST_F(BindingsTest, DeprecatedIterationNamesMeanStep) {
  Ok(R"(
    local k = graph:select{kind = "kernel", name = "wgrad"}[1]
    assert(k.iteration == k.step and k.step == 0)
    assert(#graph:select{iteration = 0} == #graph:select{step = 0})
    assert(#graph:select{iteration = 1} == #graph:select{step = 1})
    assert(graph:iteration_count() == graph:step_count())
    assert(graph:iteration_name(1) == graph:step_name(1))
    assert(graph:iteration_counted(1) == graph:step_counted(1))
    local by_old, by_new = graph:all():group_by("iteration"), graph:all():group_by("step")
    assert(#by_old[0] == #by_new[0] and #by_old[1] == #by_new[1])
    local tl = graph:simulate()
    assert(tl.mean_iteration_ns == tl.mean_step_ns and #tl.iterations == #tl.steps)
    k.iteration = 1
    assert(k.step == 1)
    local relu = graph:select{name = "elementwise", step = 0}[1]
    local enc = graph:insert{kind = "kernel", name = "old", after = relu, duration_us = 1,
                             iteration = 1}
    assert(enc.step == 1)
  )");
}

TEST_F(BindingsTest, EditsOnSelections) {
  const double before = MeanNs();
  const auto r = RunLua(R"(
    local gemm = graph:select{kind = "kernel", name = "sgemm"}
    local total = gemm:total_duration()
    gemm:shrink(2):scale(0.5)
    assert(gemm:total_duration() == total / 4)
    graph:select{kind = "kernel", name = "wgrad"}:set_duration(0)
    graph:select{name = "bn_bw"}:add_duration(-1e9)
    graph:select{kind = "cpu_api"}:set_gap(0)
  )", &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  // 4 gemm + 2 wgrad + 2 bn kernels, and the 20 CPU calls whose gap changed.
  EXPECT_EQ(r.changes.modified, 28);
  EXPECT_LT(MeanNs(), before);
  EXPECT_THAT(Err("graph:all():scale(-1)"), HasSubstr("finite number >= 0"));
  EXPECT_THAT(Err("graph:all():shrink(0)"), HasSubstr("> 0"));
}

TEST_F(BindingsTest, InsertCpuGpuAndCommTasks) {
  const double before = MeanNs();
  const auto r = RunLua(R"(
    local relu = graph:select{name = "elementwise", step = 0}[1]
    local enc, launch = graph:insert{kind = "kernel", name = "gist_encode", after = relu,
                                     duration_us = 15}
    assert(enc.phase == "forward" and enc.layer == "layer1.0.relu" and enc.step == 0)
    assert(launch.name == "cudaLaunchKernel" and launch.duration_ns == 5000)
    assert(enc:prev() == relu and enc:launcher() == launch)
    assert(launch:prev() == relu:launcher())
    local cpu = graph:insert{kind = "cpu_work", name = "host", before = graph:task(0),
                             duration_ns = 1000, phase = "data_loading"}
    assert(cpu:next() == graph:task(0) and cpu.phase == "data_loading")
    local ch = graph:add_channel("ring")
    assert(ch.kind == "channel" and not ch.ordered)
    local wgrad = graph:select{name = "wgrad", step = 0}[1]
    local ar = graph:insert{kind = "comm", name = "allreduce", resource = ch, duration_us = 50,
                            bytes = 1024, step = 0, phase = "backward"}
    graph:add_edge(wgrad, ar, {kind = "comm"})
    graph:add_edge(ar, graph:select{phase = "update", kind = "kernel", step = 0}[1])
    local s2 = graph:add_stream{device = 0}
    local t2 = graph:add_thread("helper")
    assert(s2.kind == "stream" and t2.kind == "thread")
    local c = graph:changes()
    assert(c.added == 4 and c.resources_added == 3, c.added)
  )", &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.changes.added, 4);
  EXPECT_GT(MeanNs(), before);  // +15us encode, comm on the critical path
}

TEST_F(BindingsTest, InsertErrors) {
  EXPECT_THAT(Err("graph:insert{name = 'x', duration_ns = 1}"), HasSubstr("exactly one of"));
  EXPECT_THAT(Err("graph:insert{kind = 'kernel', name = 'x', resource = graph:resources('thread')[1]}"),
              HasSubstr("must go on a stream"));
  EXPECT_THAT(Err("graph:insert{kind = 'kernle', name = 'x', after = graph:task(1)}"),
              HasSubstr("unknown task kind"));
  EXPECT_THAT(Err("graph:insert{name = 'x', after = graph:task(0), colour = 1}"),
              HasSubstr("unknown field 'colour'"));
  EXPECT_THAT(Err("graph:insert{after = graph:task(0)}"), HasSubstr("'name' is required"));
}

TEST_F(BindingsTest, RemoveKeepsOrderAndStaleHandlesRaise) {
  const auto r = RunLua(R"(
    local upd = graph:select{phase = "update", kind = "kernel"}
    local n, edges = graph:remove(upd | upd:launches())
    assert(n == 12, n)
    local sync = graph:select{name = "cudaStreamSynchronize"}[1]
    local p = sync:parents("sync")[1]
    assert(p.name:find("wgrad"), p.name)
    assert(upd[1].removed)
    graph:remove(graph:task(0))
  )", &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.changes.removed, 13);
  EXPECT_TRUE(g_.Validate().ok());
  EXPECT_THAT(Err("local t = graph:task(1) graph:remove(t) return t.name"),
              HasSubstr("was removed"));
}

TEST_F(BindingsTest, AddEdgeRefusesCycles) {
  EXPECT_THAT(Err("local k = graph:select{kind = 'kernel'}\n"
                  "graph:add_edge(k[#k], k[1])"),
              ::testing::AllOf(::testing::StartsWith("test.lua:2:"), HasSubstr("cycle")));
  EXPECT_THAT(Err("graph:add_edge(graph:task(0), graph:task(0))"), HasSubstr("itself"));
  EXPECT_THAT(Err("graph:remove_edge(graph:task(0), graph:task(3))"),
              HasSubstr("no dependency"));
  EXPECT_THAT(Err("graph:add_edge(graph:task(0), graph:task(3), {kind = 'magic'})"),
              HasSubstr("unknown edge kind"));
}

TEST_F(BindingsTest, SimulateTimelineAndGroupBy) {
  Ok(R"(
    local tl = graph:simulate()
    assert(tl.mean_step_ns > 0 and #tl.steps == 2)
    local k = graph:select{kind = "kernel", step = 0}
    local last = tl:latest(k)
    assert(last.name:find("multi_tensor"), last.name)
    assert(tl:earliest(k).name:find("scudnn"))
    local order = tl:order(k)
    assert(#order == 9 and order[1] == tl:earliest(k))
    assert(tl:start_ns(order[2]) >= tl:end_ns(order[1]))
    local lo, hi = tl:span(k)
    assert(hi - lo >= k:total_duration())
    local by_it = graph:select{kind = "kernel"}:group_by("step")
    assert(#by_it[0] == 9 and #by_it[1] == 9)
    local by_layer = graph:select{kind = "kernel"}:group_by("layer")
    assert(#by_layer["fc"] == 4 and #by_layer[""] == 6)
    local by_phase = graph:all():group_by("phase")
    assert(#by_phase.update == 14)
  )");
}

TEST_F(BindingsTest, SchedulePolicies) {
  // Two comm tasks on one channel, both ready at the same time: the policy
  // decides which goes first.
  const std::string setup = R"(
    local ch = graph:add_channel("ps")
    local last = graph:select{kind = "kernel", step = 1}
    last = last[#last]
    local a = graph:insert{kind = "comm", name = "push a", resource = ch, duration_us = 100, step = 1}
    local b = graph:insert{kind = "comm", name = "push b", resource = ch, duration_us = 100, step = 1}
    graph:add_edge(last, a)
    graph:add_edge(last, b)
    a.priority = 5
    b.priority = 1
  )";
  auto r = RunLua(setup + R"(
    graph:set_policy("priority")
    local tl = graph:simulate()
    local b = graph:select{name = "push b"}[1]
    local a = graph:select{name = "push a"}[1]
    assert(tl:start_ns(b) < tl:start_ns(a))
  )", &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.schedule.kind, transforms::ScheduleChoice::Kind::kPriority);

  g_ = transforms::testing::MakeTrainingGraph(2);
  r = RunLua(setup + R"(
    graph:set_policy(function(task, ready_ns) return -task.priority end)
    local tl = graph:simulate()
    local b = graph:select{name = "push b"}[1]
    local a = graph:select{name = "push a"}[1]
    assert(tl:start_ns(a) < tl:start_ns(b))
  )", &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.schedule.kind, transforms::ScheduleChoice::Kind::kCustom);
  // The policy keeps working after the script, on the committed graph.
  depgraph::SimOptions o;
  o.policy = r.schedule.policy();
  const depgraph::SimResult sim = *depgraph::Simulate(g_, o);
  EXPECT_TRUE(r.engine->policy_status().ok());
  EXPECT_GT(sim.makespan_ns, 0);

  g_ = transforms::testing::MakeTrainingGraph(2);
  r = RunLua(setup + "graph:set_policy(function(task)\n  error('bad key')\nend)\n", &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  o.policy = r.schedule.policy();
  (void)depgraph::Simulate(g_, o);
  EXPECT_EQ(testing::FirstLine(r.engine->policy_status()), "test.lua:12: bad key");

  g_ = transforms::testing::MakeTrainingGraph(2);
  EXPECT_THAT(Err(setup + "graph:set_policy(function(task) return 'soon' end)\ngraph:simulate()"),
              HasSubstr("must return a finite number, got string"));
  g_ = transforms::testing::MakeTrainingGraph(2);
  EXPECT_THAT(Err(setup + "graph:set_policy(function(task) task.duration_ns = 1 return 0 end)\n"
                          "graph:simulate()"),
              HasSubstr("cannot be changed inside a schedule policy"));
  EXPECT_THAT(Err("graph:set_policy('fifo')"), HasSubstr("unknown schedule policy"));
}

TEST_F(BindingsTest, ModelFactsAndLaunchModel) {
  depgraph::ModelInfo info;
  info.parameters.push_back({"fc.weight", "fc", 4096});
  info.buckets.push_back({0, 4096, {"fc.weight"}, {"fc"}});
  info.collectives.push_back({"allreduce", 4096, 2, 123});
  info.world_size = 2;
  const auto r = RunLua(R"(
    local c = graph:collectives()
    assert(#c == 1 and c[1].name == "allreduce" and c[1].bytes == 4096 and c[1].group_size == 2)
    assert(c[1].measured_start_ns == 123 and graph:world_size() == 2)
    local p = graph:parameters()
    assert(#p == 1 and p[1].layer == "fc" and p[1].bytes == 4096)
    local b = graph:gradient_buckets()
    assert(#b == 1 and b[1].layers[1] == "fc")
    local m = graph:launch_model()
    assert(m.kernel_launch_ns == 5000 and m.samples == 18)
    assert(#graph:layers() == 6 and graph:step_count() == 2)
    assert(graph:step_name(1) == "ProfilerStep#1")
  )", &g_, {}, {}, &info);
  ASSERT_TRUE(r.status.ok()) << r.status;
}

TEST_F(BindingsTest, RetargetGpuScalesKernelsAndChecksItsArguments) {
  // Give the forward conv a launch geometry; the rest have none.
  const transforms::Selection conv = *transforms::Select(g_, [] {
    transforms::TaskQuery q;
    q.names = {"scudnn"};
    return q;
  }());
  for (depgraph::TaskId t : conv) g_.set_geometry(t, {80 * 8 * 10, 256, 32, 0});
  depgraph::ModelInfo info;
  info.devices.push_back({0, "Tesla V100-SXM2-32GB", "nvidia", 80, 7, 0, 32ll << 30, 2048, 65536, 96 * 1024});
  const std::string gpus = R"(
    local v = {name = "v", sm_count = 80, max_threads_per_sm = 2048, max_blocks_per_sm = 32,
               registers_per_sm = 65536, shared_memory_per_sm_kb = 96, clock_mhz = 1500,
               memory_bandwidth_gbs = 1000, tflops = {fp32 = 10}}
    local fast = {name = "fast", sm_count = 80, max_threads_per_sm = 2048, max_blocks_per_sm = 32,
                  registers_per_sm = 65536, shared_memory_per_sm_kb = 96, clock_mhz = 1500,
                  memory_bandwidth_gbs = 2000, tflops = {fp32 = 40}}
  )";
  const auto r = RunLua(gpus + R"(
    local d = graph:devices()
    assert(#d == 1 and d[1].name == "Tesla V100-SXM2-32GB" and d[1].sm_count == 80)
    assert(d[1].shared_memory_per_sm_kb == 96)
    local conv = graph:select{kind = "kernel", name = "scudnn"}
    local g = conv[1].geometry
    assert(g.blocks == 6400 and g.threads_per_block == 256 and g.registers_per_thread == 32)
    assert(graph:select{kind = "kernel", name = "sgemm"}[1].geometry == nil)
    -- Compute-bound (gamma 0), 10 waves on both, 4x the per-SM peak: a quarter.
    local st = conv:retarget_gpu{from = v, to = fast, gamma = 0, math = "fp32"}
    assert(st.kernels == 2 and st.unknown_geometry == 0 and st.single_wave == 0, st.kernels)
    assert(st.before_ns == 200000 and st.after_ns == 50000, st.after_ns)
    assert(conv[1].duration_ns == 25000)
    -- Memory-bound without geometry: the bandwidth ratio; launch calls are skipped.
    local bn = graph:select{name = "bn_bw"}
    st = (bn | bn:launches()):retarget_gpu{from = v, to = fast, gamma = 1}
    assert(st.kernels == 2 and st.unknown_geometry == 2 and st.skipped == 2)
    assert(bn[1].duration_ns == 15000 and bn:launches()[1].duration_ns == 5000)
  )", &g_, {}, {}, &info);
  ASSERT_TRUE(r.status.ok()) << r.status;
  const std::string k = gpus + "local k = graph:select{kind = 'kernel'}\n";
  EXPECT_THAT(Err(k + "k:retarget_gpu{from = v, to = fast, gama = 1}"), HasSubstr("unknown field 'gama'"));
  EXPECT_THAT(Err(k + "k:retarget_gpu{from = v, to = fast}"), HasSubstr("'gamma'"));
  EXPECT_THAT(Err(k + "k:retarget_gpu{from = v, to = 'H100', gamma = 1}"),
              HasSubstr("'to' must be a GPU table"));
  EXPECT_THAT(Err(k + "v.sm_count = 'many'\nk:retarget_gpu{from = v, to = fast, gamma = 1}"),
              HasSubstr("from.sm_count must be a number"));
  EXPECT_THAT(Err(k + "fast.memory_bandwidth_gbs = nil\nk:retarget_gpu{from = v, to = fast, gamma = 1}"),
              HasSubstr("gpu 'fast': memory_bandwidth_gbs must be > 0"));
  EXPECT_THAT(Err(k + "k:retarget_gpu{from = v, to = fast, gamma = 2}"), HasSubstr("gamma must be in [0, 1]"));
  EXPECT_THAT(Err("local x = graph:select{kind = 'kernel'}[1].geometr"), HasSubstr("no field 'geometr'"));
  // The failed calls changed nothing after the first run's quarter.
  EXPECT_EQ(g_.duration_ns(*conv.begin()), 25'000);
}

}  // namespace
}  // namespace reverie::lua
