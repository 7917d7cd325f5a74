// Issue 29 (hostile input, round 2): each way a script got through the
// limits, as a script that must now stop within them or get a clear error.
// D20 handles' metatables, D21 negative charges, D23 string work in the VM,
// D24 bindings that hash or compile long strings, D25 graph:remove on a hub,
// D31 control characters, D33 add_edge's on_cycle, and a policy's NaN.
#include <string>

#include "depgraph/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lua/lua_engine.h"
#include "lua/lua_test_util.h"
#include "transforms/test_graphs.h"

namespace reverie::lua {
namespace {

using testing::FirstLine;
using ::testing::HasSubstr;
using testing::Limits;
using testing::RunLua;

class HostileTest : public ::testing::Test {
 protected:
  // Runs `code`, expecting a limit error (kResourceExhausted) whose first
  // line names the script and holds `words`, with the budget not overrun by
  // more than a few hook periods.
  testing::LuaRun ExpectStops(const std::string& code, EngineLimits l, const std::string& words,
                              depgraph::Graph* g = nullptr) {
    auto r = RunLua(code, g != nullptr ? g : &g_, {}, l);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kResourceExhausted) << code << "\n" << r.status;
    EXPECT_THAT(FirstLine(r.status), HasSubstr(words)) << code;
    EXPECT_THAT(FirstLine(r.status), ::testing::StartsWith("test.lua")) << code;
    return r;
  }

  // Runs `code`, expecting an error (kInvalidArgument) holding `words`.
  void ExpectError(const std::string& code, const std::string& words, EngineLimits l = {}) {
    auto r = RunLua(code, &g_, {}, l);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument) << code << "\n" << r.status;
    EXPECT_THAT(FirstLine(r.status), HasSubstr(words)) << code;
  }

  depgraph::Graph g_ = transforms::testing::MakeTrainingGraph(2);
};

// D20: getmetatable(handle) used to return the handles' own metatable: a
// __gc written there made every later handle finalizable (Lua runs
// finalizers with hooks off), and __index / __newindex could be replaced.
TEST_F(HostileTest, HandleMetatablesAreLocked) {
  const char* handles[] = {"graph", "graph:task(1)", "graph:resources()[1]", "graph:all()",
                           "graph:simulate()"};
  for (const char* h : handles) {
    const std::string code = std::string("local h = ") + h + "\n";
    ExpectError(code + "getmetatable(h).__gc = function() while true do end end", "is locked");
    ExpectError(code + "getmetatable(h).__index = function() return 1 end", "is locked");
    // The proxy is not the metatable: writing it raw changes no handle.
    const auto r = RunLua(code +
                              "local p = getmetatable(h)\n"
                              "rawset(p, '__gc', function() while true do end end)\n"
                              "rawset(p, '__index', function() return 'hijacked' end)\n"
                              "for i = 1, 100 do local x = graph:task(1); local y = graph:all() end\n"
                              "collectgarbage()\n"
                              "assert(graph:task(1).id == 1)\n"
                              "assert(getmetatable(p) == 'locked')\n",
                          &g_, {}, Limits(1'000'000));
    EXPECT_TRUE(r.status.ok()) << h << ": " << r.status;
  }
  // From a schedule policy too: the task it gets is a locked handle.
  depgraph::Graph g = transforms::testing::MakeTrainingGraph(2);
  auto r = RunLua(
      "local ch = graph:add_channel('c')\n"
      "for i = 1, 5 do graph:insert{kind = 'comm', name = 'c' .. i, resource = ch, duration_ns = 10} end\n"
      "graph:set_policy(function(task, ready)\n"
      "  getmetatable(task).__gc = function() while true do end end\n"
      "  return ready\n"
      "end)\n",
      &g, {}, Limits(1'000'000));
  ASSERT_TRUE(r.status.ok()) << r.status;
  depgraph::SimOptions o;
  o.policy = r.schedule.policy();
  (void)depgraph::Simulate(g, o);
  EXPECT_THAT(r.engine->policy_status().message(), HasSubstr("is locked"));
}

// D21: a charge computed as j - i + 1 wrapped to about -2^63 and refunded
// the budget; a __len of math.mininteger did the same through select.
TEST_F(HostileTest, NoChargeRefundsTheBudget) {
  for (const char* first : {
           "pcall(table.move, {}, -2, math.maxinteger, 1)",
           "pcall(table.unpack, {}, -2, math.maxinteger)",
           "pcall(string.byte, 'abc', -2, math.maxinteger)",
           "pcall(utf8.codepoint, 'abc', math.mininteger, math.maxinteger)",
           "pcall(string.sub, 'abc', math.mininteger, math.maxinteger)",
           "pcall(table.concat, {}, '', math.mininteger, math.maxinteger)",
           "local bad = setmetatable({}, {__len = function() return math.mininteger end})\n"
           "pcall(graph.select, graph, {name = bad})\n"
           "pcall(graph.from_tasks, graph, bad)\n"
           "pcall(graph.add_edges, graph, bad)",
       }) {
    ExpectStops(std::string(first) + "\nwhile true do end", Limits(1'000'000),
                "instruction budget of 1000000");
  }
}

// Lengths Lua would read through __len are read once and charged: a table
// claiming a billion elements cannot make table.insert shift them for free.
TEST_F(HostileTest, TableFunctionsChargeTheLengthTheyUse) {
  const std::string huge = "local t = setmetatable({}, {__len = function() return 1e9 end})\n";
  ExpectStops(huge + "table.insert(t, 1, 'x')", Limits(1'000'000), "instruction budget");
  ExpectStops(huge + "table.remove(t, 1)", Limits(1'000'000), "instruction budget");
  ExpectStops(huge + "pcall(table.unpack, t) while true do end", Limits(1'000'000),
              "instruction budget");
  ExpectStops(
      "local t = setmetatable({}, {__len = function() return 1e9 end,\n"
      "                            __index = function() return 'x' end})\n"
      "table.concat(t)",
      Limits(1'000'000), "instruction budget");
  // A __len that answers differently the second time cannot give the
  // function another length than the one charged.
  const auto r = RunLua(
      "local n = 0\n"
      "local t = setmetatable({1, 2, 3}, {__len = function() n = n + 1; return n == 1 and 3 or 1e9 end})\n"
      "assert(select('#', table.unpack(t)) == 3)\n",
      &g_, {}, Limits(10'000'000));
  EXPECT_TRUE(r.status.ok()) << r.status;
  ExpectError("table.sort(setmetatable({3, 1}, {__index = {}}))", "table.sort: reverie sorts tables");
}

// table.insert and table.remove are reverie's own: Lua 5.4's results and
// messages.
TEST_F(HostileTest, TableInsertAndRemoveKeepLuaSemantics) {
  const auto r = RunLua(
      "local t = {1, 2, 3}\n"
      "table.insert(t, 4) table.insert(t, 1, 0) table.insert(t, 6, 5)\n"
      "assert(table.concat(t, ',') == '0,1,2,3,4,5')\n"
      "assert(table.remove(t) == 5 and table.remove(t, 1) == 0 and table.remove(t, 2) == 2)\n"
      "assert(table.concat(t, ',') == '1,3,4')\n"
      "assert(table.remove({}) == nil and table.remove({}, 0) == nil)\n"
      "local e = select(2, pcall(table.insert, t, 9, 1))\n"
      "assert(e:find('position out of bounds'), e)\n"
      "e = select(2, pcall(table.insert, t, 1, 2, 3))\n"
      "assert(e:find(\"wrong number of arguments to 'insert'\"), e)\n"
      "e = select(2, pcall(table.remove, t, 7))\n"
      "assert(e:find('position out of bounds'), e)\n"
      "e = select(2, pcall(table.insert, 5, 1))\n"
      "assert(e:find('table expected'), e)\n"
      "local log = {}\n"
      "local p = setmetatable({}, {__index = function(_, k) return k * 10 end,\n"
      "  __newindex = function(_, k, v) log[#log + 1] = k .. '=' .. tostring(v) end,\n"
      "  __len = function() return 2 end})\n"
      "table.insert(p, 1, 'a')\n"
      "assert(table.concat(log, ' ') == '3=20 2=10 1=a', table.concat(log, ' '))\n",
      &g_, {}, Limits(10'000'000));
  EXPECT_TRUE(r.status.ok()) << r.status;
}

// D23: building a string copies it; the allocator charges the bytes.
TEST_F(HostileTest, StringBuildingIsChargedByTheByte) {
  ExpectStops("local s = '' for i = 1, 400000 do s = s .. 'x' end", Limits(2'000'000),
              "instruction budget of 2000000");
  ExpectStops("local s = '' while true do s = s .. 'x' end", Limits(100'000'000),
              "instruction budget of 100000000");
  // Inside a coroutine too (the hook fires at its next instruction).
  EngineLimits open = Limits(2'000'000);
  open.sandbox = false;
  ExpectStops(
      "local co = coroutine.wrap(function() local s = '' while true do s = s .. 'x' end end)\n"
      "pcall(co) while true do end",
      open, "instruction budget");
  // Honest string building stays cheap.
  const auto r = RunLua(
      "local parts = {}\n"
      "for t in graph:all():tasks() do parts[#parts + 1] = t.name end\n"
      "local s = table.concat(parts, ',')\n"
      "for i = 1, 100 do s = s .. i end\n",
      &g_, {}, Limits(2'000'000));
  EXPECT_TRUE(r.status.ok()) << r.status;
}

// A string is at most 16 MiB: one VM instruction compares two strings with
// no hook, so this bounds what one instruction does.
TEST_F(HostileTest, StringsAreBounded) {
  ExpectError("local s = string.rep('x', 64 << 20)", "longer than the 16 MiB");
  const auto r = RunLua("local s = string.rep('x', 12 << 20) s = s .. s", &g_);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kResourceExhausted) << r.status;
  EXPECT_THAT(FirstLine(r.status), HasSubstr("MiB a script's string may hold"));
  EXPECT_TRUE(RunLua("local s = string.rep('x', 15 << 20) assert(#(s .. 'y') == (15 << 20) + 1)", &g_)
                  .status.ok());
}

// ...and comparisons the VM does without a hook are bounded by the CPU time
// the budget allows (a backstop: 250 ns per unit here, 0.75 s; 10x that
// in sanitized builds), long before the count of 3e6 would stop them.
TEST_F(HostileTest, HookFreeComparisonsStopAtTheCpuCeiling) {
  ExpectStops(
      "local a = string.rep('c', 4 << 20)\n"
      "local b = a:sub(1, -2) .. 'd'\n"
      "local n = 0\n"
      "while true do if a < b then n = n + 1 end end",
      Limits(3'000'000), "s of CPU");
}

// D24: the bytes of a binding's string arguments are charged (hashing a
// name, converting a number), layer paths are bounded like module paths,
// and the patterns of one query are bounded and charged.
TEST_F(HostileTest, BindingsChargeTheStringsTheyRead) {
  ExpectStops(
      "local t = graph:select{kind = 'kernel'}:first()\n"
      "local s = string.rep('n', 8 << 20)\n"
      "for i = 1, 1000 do t.name = s end",
      Limits(10'000'000), "instruction budget");
  ExpectStops(
      "local n = string.rep('0', 8 << 20) .. '1'\n"
      "for i = 1, 1000 do graph:task(n) end",
      Limits(10'000'000), "instruction budget");
  ExpectError("graph:select{kind = 'kernel'}:first().layer = string.rep('a.', 40) .. 'b'",
              "a layer path of 81 bytes is beyond");
  ExpectError("graph:select{kind = 'kernel'}:first().layer = string.rep('a', 2000)", "is beyond");
  ExpectError(
      "graph:insert{name = 'x', after = graph:select{kind = 'cpu_api'}[1],\n"
      "             layer = string.rep('a.', 100) .. 'b'}",
      "is beyond");
  EXPECT_TRUE(RunLua("graph:select{kind = 'kernel'}:first().layer = string.rep('a.', 31) .. 'b'", &g_)
                  .status.ok());
  ExpectError(
      "local t = {} for i = 1, 1000 do t[i] = string.rep('a', 65536) end\n"
      "graph:select{name = t}",
      "patterns of one query hold more than the 262144 bytes");
  // A query of 200 KiB of patterns pays for compiling them.
  const auto r = RunLua("graph:select{name = string.rep('a', 50000), layer = string.rep('b', 50000)}",
                        &g_, {}, Limits(100'000'000));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_GT(r.engine->instructions_used(), 6'000'000);
}

// D25: removing a hub between N producers and N consumers adds N * N edges;
// they are capped by the memory cap and charged to the budget, and the
// graph is unchanged by a refusal.
TEST_F(HostileTest, RemoveIsCappedAndCharged) {
  const std::string hub =
      "local N = 2000\n"
      "local c1, c2, c3 = graph:add_channel('p'), graph:add_channel('h'), graph:add_channel('c')\n"
      "local hub = graph:insert{kind = 'comm', name = 'hub', resource = c2, duration_ns = 1}\n"
      "local e = {}\n"
      "for i = 1, N do\n"
      "  local a = graph:insert{kind = 'comm', name = 'a', resource = c1, duration_ns = 1}\n"
      "  local b = graph:insert{kind = 'comm', name = 'b', resource = c3, duration_ns = 1}\n"
      "  e[#e + 1] = {a, hub}\n"
      "  e[#e + 1] = {hub, b}\n"
      "end\n"
      "graph:add_edges(e)\n";
  ExpectStops(hub + "graph:remove(hub)", Limits(1'000'000'000, 64), "memory limit of 64 MiB exceeded");
  ExpectStops(hub + "graph:remove(hub)", Limits(5'000'000, 2048), "instruction budget");
  // Within both, the edges are made and their memory counted.
  const auto r = RunLua(hub + "local removed, added = graph:remove(hub)\n"
                              "assert(removed == 1 and added == N * N, added)\n",
                        &g_, {}, Limits(1'000'000'000, 2048));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_GT(r.engine->peak_memory_bytes(), size_t{2000} * 2000 * 48);
}

// D33: add_edge{on_cycle = 'skip'} skips and logs an edge that would close
// a cycle, as the builder skips a sync it cannot order.
TEST_F(HostileTest, AddEdgeCanSkipAnEdgeThatWouldCloseACycle) {
  const std::string pair =
      "local k = graph:select{kind = 'kernel'}\n"
      "local a, b = k[1], k[2]\n"
      "graph:add_edge(a, b)\n";
  const auto r = RunLua(pair +
                            "assert(graph:add_edge(b, a, {kind = 'sync', on_cycle = 'skip'}) == false)\n"
                            "assert(graph:add_edge(a, b, {on_cycle = 'skip'}) == true)\n",
                        &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.engine->log().size(), 1u);
  EXPECT_THAT(r.engine->log()[0], HasSubstr("test.lua:4: add_edge: skipped sync dependency"));
  EXPECT_THAT(r.engine->log()[0], HasSubstr("would create a cycle"));
  ExpectError(pair + "graph:add_edge(b, a)", "would create a cycle");
  ExpectError(pair + "graph:add_edge(b, a, {on_cycle = 'ignore'})", "on_cycle must be 'error' or 'skip', got 'ignore'");
}

// A schedule key returning NaN says so (it said "got number").
TEST_F(HostileTest, NotFiniteScheduleKeysAreNamed) {
  depgraph::Graph g = transforms::testing::MakeTrainingGraph(2);
  auto r = RunLua(
      "local ch = graph:add_channel('c')\n"
      "for i = 1, 3 do graph:insert{kind = 'comm', name = 'c' .. i, resource = ch, duration_ns = 10} end\n"
      "graph:set_policy(function(task, ready) return 0 / 0 end)\n",
      &g);
  ASSERT_TRUE(r.status.ok()) << r.status;
  depgraph::SimOptions o;
  o.policy = r.schedule.policy();
  (void)depgraph::Simulate(g, o);
  EXPECT_THAT(r.engine->policy_status().message(), HasSubstr("must return a finite number, got NaN"));
}

// D31: a script's messages and printed lines reach the terminal without
// their control characters.
TEST_F(HostileTest, ControlCharactersAreEscaped) {
  auto r = RunLua("error('\\27[2J\\27[31mred\\27[0m\\a\\b', 0)", &g_);
  EXPECT_EQ(FirstLine(r.status), "test.lua: \\x1b[2J\\x1b[31mred\\x1b[0m\\x07\\x08");
  r = RunLua("print('a\\27]0;title\\7b\\r\\nc')", &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.engine->log().size(), 1u);
  EXPECT_EQ(r.engine->log()[0], "a\\x1b]0;title\\x07b\\x0d\nc");
  EXPECT_THAT(r.engine->log()[0], ::testing::Not(HasSubstr("\x1b")));
}

}  // namespace
}  // namespace reverie::lua
