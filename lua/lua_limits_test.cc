// The limits that bound a script (lua/lua_limits.cc): issue 17's D1
// (pcall swallowing the budget), D2 (__gc finalizers), D4 (C++ memory outside
// the cap), D5 (quadratic resource numbering), D7 (numbers beyond the
// bounds) and D14 (messages), each as a script that used to escape.
#include <string>

#include "depgraph/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lua/lua_engine.h"
#include "lua/lua_test_util.h"
#include "transforms/structure.h"
#include "transforms/test_graphs.h"

namespace reverie::lua {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::FirstLine;
using testing::RunLua;

EngineLimits Budget(int64_t instructions) {
  EngineLimits l;
  l.instruction_budget = instructions;
  return l;
}

EngineLimits Cap(size_t mib) {
  EngineLimits l;
  l.memory_limit_bytes = mib << 20;
  return l;
}

class LimitsTest : public ::testing::Test {
 protected:
  // Runs `code` on `g`, expecting a limit error whose first line names the
  // script and holds `words`.
  testing::LuaRun ExpectStops(const std::string& code, depgraph::Graph* g, EngineLimits l,
                              const std::string& words) {
    auto r = RunLua(code, g, {}, l);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kResourceExhausted) << code << "\n" << r.status;
    EXPECT_THAT(FirstLine(r.status), HasSubstr(words)) << code;
    EXPECT_THAT(FirstLine(r.status), StartsWith("test.lua")) << code;
    return r;
  }

  void ExpectBudgetStops(const std::string& code, EngineLimits l = Budget(1'000'000)) {
    const auto r = ExpectStops(code, &g_, l, "instruction budget of");
    // Stopped within a few hook periods of the budget, not later.
    ASSERT_NE(r.engine, nullptr);
    EXPECT_LT(r.engine->instructions_used(), l.instruction_budget + 100'000) << code;
  }

  depgraph::Graph g_ = transforms::testing::MakeTrainingGraph(2);
};

// D1: the budget error raised inside a pcall used to be caught on every
// firing, so the loop never ended.
TEST_F(LimitsTest, PcallCannotSwallowTheBudget) {
  ExpectBudgetStops("while true do pcall(function() while true do end end) end");
  ExpectBudgetStops("while true do pcall(pcall, function() while true do end end) end");
  ExpectBudgetStops(
      "local function f() while true do end end\n"
      "while true do xpcall(f, function(e) while true do end end) end");
  ExpectBudgetStops(
      "while true do pcall(function()\n"
      "  local x <close> = setmetatable({}, {__close = function() while true do end end})\n"
      "  while true do end\n"
      "end) end");
  ExpectBudgetStops("while true do pcall(error, 'x') end");
  ExpectBudgetStops("local s = 0 while true do s = s + 1 end");
}

// A caught error unwinds a C++ exception no instruction count sees: each
// costs kErrorUnits (1,000), so `while true do pcall(f) end` with a failing
// f stops after about budget / 1,000 errors (the fuzzer's 2e6-unit budget
// once ran 6.7 s of them, past its 10 s limit on a loaded machine).
TEST_F(LimitsTest, CaughtErrorsAreCharged) {
  auto run = [&](const std::string& code) { return RunLua(code, &g_, {}, Budget(500'000)).status; };
  EXPECT_TRUE(run("for i = 1, 100 do pcall(error, 'x') end").ok());
  EXPECT_EQ(run("for i = 1, 1000 do pcall(error, 'x') end").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(run("for i = 1, 100 do xpcall(error, type) end").ok());
  EXPECT_EQ(run("for i = 1, 1000 do xpcall(error, type) end").code(),
            absl::StatusCode::kResourceExhausted);
  // Calls that do not fail cost their instructions only.
  EXPECT_TRUE(run("for i = 1, 10000 do pcall(type, i) end").ok());
}

TEST_F(LimitsTest, CoroutinesCannotSwallowTheBudgetEither) {
  EngineLimits l = Budget(1'000'000);
  l.sandbox = false;  // coroutines are outside the sandbox
  ExpectBudgetStops(
      "while true do\n"
      "  local co = coroutine.create(function() while true do end end)\n"
      "  coroutine.resume(co)\n"
      "end",
      l);
  ExpectBudgetStops(
      "local co = coroutine.wrap(function() while true do pcall(function() while true do end "
      "end) end end)\n"
      "while true do pcall(co) end",
      l);
}

// D1 in a schedule key function: the policy is called by the simulator,
// after the script; the budget covers it too.
TEST_F(LimitsTest, ScheduleKeyFunctionsShareTheBudget) {
  depgraph::Graph g = transforms::testing::MakeTrainingGraph(2);
  const std::string script =
      "local ch = graph:add_channel('ring')\n"
      "local t = graph:select{kind = 'kernel'}[1]\n"
      "for i = 1, 3 do graph:insert{kind = 'comm', name = 'ar' .. i, resource = ch,\n"
      "  duration_ns = 10} end\n"
      "graph:set_policy(function(task, ready)\n"
      "  while true do pcall(function() while true do end end) end\n"
      "end)\n";
  auto r = RunLua(script, &g, {}, Budget(2'000'000));
  ASSERT_TRUE(r.status.ok()) << r.status;
  depgraph::SimOptions o;
  o.policy = r.schedule.policy();
  (void)depgraph::Simulate(g, o);
  const absl::Status p = r.engine->policy_status();
  EXPECT_EQ(p.code(), absl::StatusCode::kResourceExhausted) << p;
  EXPECT_THAT(FirstLine(p), HasSubstr("instruction budget"));
  EXPECT_LT(r.engine->instructions_used(), 2'000'000 + 100'000);
}

// D2: Lua 5.4 runs finalizers with hooks off, outside any budget.
TEST_F(LimitsTest, FinalizersAreRefused) {
  const auto r = RunLua(
      "setmetatable({}, {__gc = function() while true do end end})\ncollectgarbage()", &g_, {},
      Budget(1'000'000));
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("test.lua:1: setmetatable: __gc finalizers are not allowed"));
  // A placeholder __gc (set later to a function) is refused as well.
  EXPECT_FALSE(RunLua("local mt = {__gc = true} setmetatable({}, mt)", &g_).status.ok());
  // Other metatables work as before.
  EXPECT_TRUE(RunLua("local t = setmetatable({}, {__index = function() return 7 end})\n"
                     "assert(t.x == 7)", &g_).status.ok());
  EngineLimits open = Budget(1'000'000);
  open.sandbox = false;
  EXPECT_FALSE(RunLua("debug.setmetatable({}, {__gc = function() end})", &g_, {}, open).status.ok());
}

// D4: C++ memory a script causes counts against the same cap as its heap.
TEST_F(LimitsTest, TaskNamesCountAgainstTheCap) {
  const auto r = ExpectStops(
      "local big = string.rep('n', 4 << 20)\n"
      "local i = 0\n"
      "for t in graph:all():tasks() do i = i + 1; t.name = big .. i end\n",
      &g_, Cap(64), "memory limit of 64 MiB exceeded");
  EXPECT_THAT(FirstLine(r.status), StartsWith("test.lua:3:"));
  EXPECT_LE(r.engine->peak_memory_bytes(), (size_t{64} << 20) + (size_t{9} << 20));
}

TEST_F(LimitsTest, PrintedOutputCountsAgainstTheCap) {
  const auto r = ExpectStops("local big = string.rep('p', 1 << 20)\nfor i = 1, 2000 do print(big) end",
                             &g_, Cap(32), "memory limit of 32 MiB exceeded");
  EXPECT_LT(r.engine->log().size(), 20u);
}

TEST_F(LimitsTest, InsertedTasksLayersAndResourcesCountAgainstTheCap) {
  for (const char* code : {
           "local a = graph:select{kind = 'cpu_api'}[1]\n"
           "while true do graph:insert{name = 'w', after = a, duration_ns = 1} end",
           "local t = graph:select{kind = 'kernel'}[1]\n"
           "local i = 0 while true do i = i + 1; t.layer = 'l' .. i .. string.rep('x', 1000) end",
           "while true do graph:add_channel() end",
           "while true do graph:add_stream{device = 3} end",
       }) {
    ExpectStops(code, &g_, Cap(16), "memory limit of 16 MiB exceeded");
  }
}

// Once over the cap, a pcall cannot catch the error and go on growing.
TEST_F(LimitsTest, PcallCannotSwallowTheCap) {
  ExpectStops(
      "local big = string.rep('n', 1 << 20)\n"
      "local i = 0\n"
      "local t = graph:select{kind = 'kernel'}[1]\n"
      "while true do pcall(function() i = i + 1; t.name = big .. i end) end",
      &g_, Cap(16), "memory limit of 16 MiB exceeded");
}

// C++ work a binding does is charged: a loop of whole-graph passes stops at
// the budget although it runs few VM instructions.
TEST_F(LimitsTest, CppWorkIsChargedToTheBudget) {
  depgraph::Graph big = transforms::testing::MakeLargeGraph(100'000);
  for (const char* code : {"for i = 1, 1e6 do graph:all() end",
                           "for i = 1, 1e6 do graph:select{name = 'gemm'} end",
                           "for i = 1, 1e6 do graph:select{name_regex = '^(a|a)*$'} end",
                           "local s = graph:all() for i = 1, 1e6 do s:union(s) end",
                           "local t = graph:select{kind = 'kernel'}[1]\n"
                           "for i = 1, 1e6 do graph:simulate() end"}) {
    ExpectStops(code, &big, Budget(20'000'000), "instruction budget");
  }
}

// The budget `code` needs on MakeDeepTrainingGraph(layers).
int64_t BudgetToRun(const std::string& code, int layers) {
  depgraph::Graph g = transforms::testing::MakeDeepTrainingGraph(layers, 2);
  const auto r = RunLua(code, &g, {}, Budget(int64_t{1} << 40));
  EXPECT_TRUE(r.status.ok()) << r.status;
  return r.engine != nullptr ? r.engine->instructions_used() : 0;
}

// 4x the kernels must cost under 6x the budget: linear, where a pass over
// the graph (or every op) per kernel costs about 16x.
void ExpectLinearBudget(const std::string& code) {
  const int64_t small = BudgetToRun(code, 500);
  const int64_t large = BudgetToRun(code, 2000);
  EXPECT_LT(large, 6 * small) << small << " then " << large << "\n" << code;
}

// What amp.lua does per kernel: ask its launch call after an edit, insert a
// cast before it with its launch call placed explicitly (cycle-checked) and
// add an edge (cycle-checked). t:launcher() used to charge a pass over the
// graph whenever an edit had left the adjacency to rebuild, and each cycle
// check a pass.
TEST(LimitsCharges, ChecksAndLaunchCallsCostWhatTheyDo) {
  ExpectLinearBudget(
      "graph:remove(graph:select{kind = 'kernel'}:first())\n"
      "local n = 0\n"
      "for k in graph:select{kind = 'kernel'}:tasks() do\n"
      "  if k:launcher() then n = n + 1 end\n"
      "end\n"
      "for k in graph:select{kind = 'kernel'}:tasks() do\n"
      "  local l = k:launcher()\n"
      "  if l then\n"
      "    local cast = graph:insert{kind = 'kernel', name = 'cast', before = k,\n"
      "                              duration_ns = 1000, launch_after = l}\n"
      "    graph:add_edge(l, cast)\n"
      "  end\n"
      "end\n"
      "assert(n > 0)\n");
}

// An op's median cost (with_op without op_ns, graph:op_cost) and an op's
// children are looked up, not found by a pass over every op.
TEST(LimitsCharges, OpLookupsCostWhatTheyRead) {
  ExpectLinearBudget(
      "local ks = graph:select{kind = 'kernel'}:list()\n"
      "local ids = {}\n"
      "for _, k in ipairs(ks) do\n"
      "  local _, call = graph:insert{kind = 'kernel', name = 'a', before = k, duration_ns = 1,\n"
      "                               with_op = 'aten::x', op_ns = 5}\n"
      "  ids[#ids + 1] = call.op_id\n"
      "end\n"
      "for _, k in ipairs(ks) do\n"
      "  graph:insert{kind = 'kernel', name = 'b', before = k, duration_ns = 1,\n"
      "               with_op = 'aten::x'}\n"
      "  assert(graph:op_cost('aten::x') == 5)\n"
      "end\n"
      "for _, id in ipairs(ids) do assert(#graph:op_children(id) == 0) end\n");
}

// A selection refined per group tests its members, not the graph: a
// select per layer used to cost a pass each (16x at 4x the layers).
TEST(LimitsCharges, RefiningSmallSelectionsCostsTheirSize) {
  ExpectLinearBudget(
      "local n = 0\n"
      "for _, group in pairs(graph:all():group_by('layer')) do\n"
      "  n = n + #group:select{kind = 'kernel', name = 'sgemm', layer = '**'}\n"
      "end\n"
      "assert(n > 0)\n");
}

// D3 through a script: a renamed 400,000-character name and a pathological
// regex are matched in linear time, within a small budget.
TEST_F(LimitsTest, NameRegexOnHugeNamesStaysInBudget) {
  const auto r = RunLua(
      "local t = graph:select{kind = 'kernel'}[1]\n"
      "t.name = string.rep('ab', 200000)\n"
      "assert(#graph:select{name_regex = '^(ab|c)*d$'} == 0)\n"
      "assert(graph:select{name_regex = '^(ab|c)*$'}:contains(t))\n"
      "t.name = string.rep('a', 40) .. '!'\n"
      "assert(#graph:select{name_regex = '^(a|a)*$'} == 0)\n"
      "assert(#graph:select{name = '*a*a*a*a*a*a*a*b'} == 0)\n"
      "assert(graph:select{name = '*a*a*a*a*a*a*a*!'}:contains(t))\n",
      &g_, {}, Budget(5'000'000));
  EXPECT_TRUE(r.status.ok()) << r.status;
  const auto bad = RunLua("graph:select{name_regex = string.rep('(', 100)}", &g_);
  EXPECT_THAT(FirstLine(bad.status), HasSubstr("bad name regex"));
  EXPECT_LT(FirstLine(bad.status).size(), 400u);
}

// Any int32 is a valid step to set and to ask for: no table sized by
// the largest (2^31 + 1 overflowed int32 and asked for 256 MB).
TEST_F(LimitsTest, ExtremeStepNumbersAreJustNumbers) {
  const auto r = RunLua(
      "local t = graph:select{kind = 'kernel'}[1]\n"
      "assert(#graph:select{step = 2147483647} == 0)\n"
      "assert(#graph:select{step = {-2147483648, 2147483647}} == 0)\n"
      "assert(not pcall(function() t.step = 2 end))  -- 2 steps: 0 and 1\n"
      "t.step = -1\n"
      "assert(graph:select{step = {-1, 2147483647}}:contains(t))\n",
      &g_, {}, Cap(16));
  EXPECT_TRUE(r.status.ok()) << r.status;
}

// D5: numbering is O(1) per added resource and the same as the one-off
// functions.
TEST_F(LimitsTest, ResourceNumberingMatchesTheOneOffFunctions) {
  depgraph::Graph a = transforms::testing::MakeTrainingGraph(1);
  depgraph::Graph b = a;
  transforms::ResourceNumbering n;
  for (int i = 0; i < 50; ++i) {
    const int32_t dev = i % 3;
    EXPECT_EQ(a.resource(transforms::AddCommChannel(a, "c")).native_id,
              b.resource(n.AddCommChannel(b, "c")).native_id);
    const auto sa = transforms::AddGpuStream(a, dev, "");
    const auto sb = n.AddGpuStream(b, dev, "");
    EXPECT_EQ(a.resource(sa).native_id, b.resource(sb).native_id);
    EXPECT_EQ(a.resource(sa).name, b.resource(sb).name);
    EXPECT_EQ(a.resource(sa).pid, b.resource(sb).pid);
    const auto ta = transforms::AddCpuThread(a, "");
    const auto tb = n.AddCpuThread(b, "");
    EXPECT_EQ(a.resource(ta).pid, b.resource(tb).pid);
    EXPECT_EQ(a.resource(ta).native_id, b.resource(tb).native_id);
  }
  const auto r = RunLua(
      "local last\n"
      "for i = 1, 100000 do last = graph:add_channel('c' .. i) end\n"
      "assert(last.native_id == 99999, last.native_id)\n",
      &g_, {}, Budget(50'000'000));
  EXPECT_TRUE(r.status.ok()) << r.status;
}

// D7: numbers beyond the bounds are refused with a message, never wrapped.
TEST_F(LimitsTest, OutOfRangeNumbersAreRefused) {
  for (const char* code : {
           "graph:select{kind = 'kernel'}:add_duration(math.maxinteger)",
           "graph:select{kind = 'kernel'}:add_duration(9e18):add_duration(9e18)",
           "graph:select{kind = 'kernel'}:set_duration(9.2e18)",
           "graph:select{kind = 'kernel'}:set_gap(1e300)",
           "graph:select{kind = 'kernel'}:set_duration(0/0)",
           "graph:select{kind = 'kernel'}:scale(1e30)",
           "graph:select{kind = 'cpu_api'}:scale_gap(1e30)",
           "graph:select{kind = 'kernel'}:set_priority(1 << 40)",
           "graph:select{kind = 'kernel'}[1].duration_ns = 2^60",
           "graph:select{kind = 'kernel'}[1].step = 1 << 33",
           "graph:select{kind = 'kernel'}[1].step = 5",
           "graph:select{kind = 'kernel'}[1].bytes = -1",
           "graph:add_stream{device = 1 << 40}",
           "graph:insert{name = 'x', after = graph:select{kind = 'cpu_api'}[1], duration_us = 1e300}",
           "local k = graph:select{kind = 'kernel'}\n"
           "k:add_duration(1 << 49) k:add_duration(1 << 49) k:add_duration(1 << 49)",
       }) {
    const auto r = RunLua(code, &g_);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument) << code << "\n" << r.status;
    EXPECT_THAT(FirstLine(r.status), StartsWith("test.lua:")) << code;
  }
  // Refused atomically: the graph is as before.
  const int64_t before = g_.duration_ns(depgraph::TaskId(1));
  EXPECT_FALSE(RunLua("graph:all():scale(2) graph:all():scale(1e30)", &g_).status.ok());
  EXPECT_EQ(g_.duration_ns(depgraph::TaskId(1)), before);
  // --set values: a whole number beyond int64 or not finite is refused.
  const char* params = "reverie.params{n = {default = 1, doc = 'n', integer = true}}";
  EXPECT_THAT(FirstLine(RunLua(params, &g_, {{"n", "1e300"}}).status), HasSubstr("whole number"));
  EXPECT_THAT(FirstLine(RunLua(params, &g_, {{"n", "nan"}}).status), HasSubstr("finite number"));
}

// D14: every message names the script on one first line.
TEST_F(LimitsTest, MessagesNameTheScriptOnOneShortLine) {
  auto r = RunLua("error(nil)", &g_);
  EXPECT_EQ(FirstLine(r.status), "test.lua:1: error raised with a nil value instead of a message");
  r = RunLua("local function f() error({code = 42}) end\nf()", &g_);
  EXPECT_THAT(FirstLine(r.status), StartsWith("test.lua:1: error raised with a table value"));
  r = RunLua("error('no position', 0)", &g_);
  EXPECT_EQ(FirstLine(r.status), "test.lua: no position");
  r = RunLua("error(string.rep('line\\n', 100000))", &g_);
  EXPECT_EQ(FirstLine(r.status), "test.lua:1: line (100000 more lines)");
  EXPECT_LT(r.status.message().size(), 2000u);
  r = RunLua("error(string.rep('x', 1e6))", &g_);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("bytes) ..."));
  EXPECT_LT(FirstLine(r.status).size(), 600u);
  r = RunLua("local function f(n) if n == 0 then error('deep') end f(n - 1) end\nf(5000)", &g_);
  EXPECT_LT(r.status.message().size(), 4000u);
}

TEST_F(LimitsTest, GradientsErrorSaysWhatIsMissingAndHowToRecordIt) {
  // A graph without Parameter records or update kernels.
  depgraph::Graph g = transforms::testing::MakeLargeGraph(100);
  const auto r = RunLua(
      "local G = reverie.include('lib/gradients.lua')\n"
      "G.estimate_total(graph, {gradient_mb = 0}, {})\n",
      &g);
  EXPECT_THAT(FirstLine(r.status), StartsWith("test.lua: "));
  EXPECT_THAT(FirstLine(r.status), HasSubstr("no Parameter records"));
  EXPECT_THAT(FirstLine(r.status), HasSubstr("gradient_mb"));
  EXPECT_THAT(FirstLine(r.status), HasSubstr("reverie_torch"));
}

}  // namespace
}  // namespace reverie::lua
