// Issue 29 (hostile input, round 2), the bindings added with the hardware
// model and the trace facts (graph:facts, graph:gpu, graph:cost_model,
// graph:copy_ns, graph:kernel_ns, graph:op_inputs, sel:retime, reverie.gpu,
// reverie.gpus, reverie.match_gpu, reverie.nothing_to_change, reverie.refuse,
// reverie.work_per_step): each holds what lua_hostile_test.cc asks of the
// others. A wrong type, a NaN, a negative or huge number is one error
// naming the call; a long string argument is charged; no call escapes the
// budget or the cap; the handles they hand out keep locked metatables.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lua/lua_engine.h"
#include "lua/lua_test_util.h"
#include "transforms/test_graphs.h"

namespace reverie::lua {
namespace {

using testing::FirstLine;
using testing::Limits;
using testing::RunLua;

class HostileModelTest : public ::testing::Test {
 protected:
  void ExpectError(const std::string& code, const std::string& words) {
    auto r = RunLua(code, &g_);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument) << code << "\n" << r.status;
    EXPECT_THAT(FirstLine(r.status), ::testing::HasSubstr(words)) << code;
    EXPECT_THAT(FirstLine(r.status), ::testing::StartsWith("test.lua")) << code;
  }
  void ExpectStops(const std::string& code, EngineLimits l, const std::string& words) {
    auto r = RunLua(code, &g_, {}, l);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kResourceExhausted) << code << "\n" << r.status;
    EXPECT_THAT(FirstLine(r.status), ::testing::HasSubstr(words)) << code;
  }
  void ExpectOk(const std::string& code) {
    auto r = RunLua(code, &g_);
    EXPECT_TRUE(r.status.ok()) << code << "\n" << r.status;
  }

  depgraph::Graph g_ = transforms::testing::MakeTrainingGraph(2);
};

TEST_F(HostileModelTest, GpuTableCallsCheckTheirArguments) {
  ExpectError("reverie.gpu({})", "string expected, got table");
  ExpectError("reverie.gpu()", "string expected, got no value");
  ExpectError("reverie.match_gpu(print)", "string expected, got function");
  ExpectOk("assert(reverie.gpu('no such gpu') == nil)\n"
           "assert(reverie.gpu(-1) == nil)\n"
           "assert(reverie.match_gpu('') == nil)\n"
           "assert(#reverie.gpus() > 0)\n"
           "assert(reverie.gpu(reverie.gpus()[1]).key == reverie.gpus()[1])");
}

TEST_F(HostileModelTest, CostModelCallsCheckTheirArguments) {
  ExpectError("graph:cost_model(5)", "cost_model: the options must be a table, got number");
  ExpectError("graph:cost_model{gpu = {}}", "cost_model: 'gpu' must be a GPU key (a string), got table");
  ExpectError("graph:gpu{gpu = 'no such gpu'}", "unknown GPU 'no such gpu'");
  ExpectError("graph:set_gpu({})", "string expected, got table");
  ExpectError("graph:set_gpu('no such gpu')", "unknown GPU 'no such gpu'");
  ExpectError("graph:set_batch('2')", "set_batch: the factor must be a number, got string");
  for (const char* f : {"0", "-1", "0/0", "math.huge", "1e-10", "2e9"}) {
    ExpectError(std::string("graph:set_batch(") + f + ")",
                "set_batch: the factor must be in [1e-9, 1e9]");
  }
  ExpectError("graph:copy_ns({}, 1)", "string expected, got table");
  ExpectError("graph:copy_ns('sideways', 1)", "unknown copy kind 'sideways'");
  ExpectError("graph:copy_ns('dtod', '1')", "copy_ns: bytes must be a number, got string");
  ExpectError("graph:copy_ns('dtod', -1)", "bytes must be in [0, 1e18]");
  ExpectError("graph:copy_ns('dtod', 0/0)", "bytes must be in [0, 1e18]");
  ExpectError("graph:copy_ns('dtod', math.huge)", "bytes must be in [0, 1e18]");
  ExpectError("graph:copy_ns('dtod', 1, 'V100-PCIe')", "copy_ns: the options must be a table");
  ExpectError("graph:copy_ns('dtod', 1, {to = 7})", "copy_ns: 'to' must be a GPU key");
  ExpectError("graph:copy_ns('dtod', 1, {to = 'nowhere'})", "unknown GPU 'nowhere'");
  ExpectError("graph:kernel_ns(5)", "table expected, got number");
  ExpectError("graph:kernel_ns{[1] = 2}", "kernel_ns: unknown field '?'");
  ExpectError("graph:kernel_ns{colour = 'red'}", "kernel_ns: unknown field 'colour'");
  ExpectError("graph:kernel_ns{class = 'nope'}", "unknown kernel class 'nope'");
  ExpectError("graph:kernel_ns{flops = -1}", "kernel_ns: 'flops' must be in [0, 1e30]");
  ExpectError("graph:kernel_ns{bytes = 0/0}", "kernel_ns: 'bytes' must be in [0, 1e30]");
  ExpectError("graph:kernel_ns{bytes = 1e300}", "kernel_ns: 'bytes' must be in [0, 1e30]");
  ExpectError("graph:kernel_ns{flops = 'many'}", "kernel_ns: 'flops' must be a number");
  ExpectError("graph:kernel_ns{math = 'fp3'}", "unknown math 'fp3'");
  ExpectError("graph:kernel_ns{gpu = true}", "kernel_ns: 'gpu' must be a GPU key");
}

TEST_F(HostileModelTest, AllocateChecksItsBatchFlagAndDevice) {
  const std::string first = "local k = graph:select{kind = 'kernel'}:tasks()()\n";
  ExpectError(first + "graph:allocate{bytes = 512, at = k, batch = 'yes'}",
              "allocate: batch must be a boolean, got string");
  ExpectError(first + "graph:allocate{bytes = 512, at = k, batch = 1}",
              "allocate: batch must be a boolean, got number");
  ExpectOk(first + "assert(graph:allocate{bytes = 512, at = k, free_at = k, batch = true} >= 0)");
  // On a CPU task the GPU must be named: a default there counted in no peak.
  ExpectError(
      "local c = graph:select{kind = 'cpu_api'}[1]\n"
      "graph:allocate{bytes = 512, at = c}",
      "is not on a GPU stream: give device");
  ExpectOk(
      "local c = graph:select{kind = 'cpu_api'}[1]\n"
      "assert(graph:allocate{bytes = 512, at = c, device = -1} >= 0)");
}

// The table form of resize_allocation checks every entry before it changes
// anything.
TEST_F(HostileModelTest, ResizeAllocationsCheckEveryEntry) {
  const std::string made =
      "local k = graph:select{kind = 'kernel'}:tasks()()\n"
      "local a = graph:allocate{bytes = 512, at = k, free_at = k}\n"
      "local b = graph:allocate{bytes = 1024, at = k, free_at = k}\n";
  ExpectOk(made + "graph:resize_allocation{[a] = 2048, [b] = 4096}");
  ExpectOk(made + "graph:resize_allocation{}");
  ExpectError(made + "graph:resize_allocation({[a] = 2048}, 7)",
              "resize_allocation: a table of sizes takes no second argument");
  ExpectError(made + "graph:resize_allocation{x = 2048}",
              "resize_allocation: id: integer expected, got string");
  ExpectError(made + "graph:resize_allocation{[a] = 'big'}", "resize_allocation: bytes");
  ExpectError(made + "graph:resize_allocation{[a] = 2048, [b] = 0}",
              "resize_allocation: bytes must be > 0");
  ExpectError(made + "graph:resize_allocation{[a] = 2048, [a + 1] = 64}",
              "is not a live allocation");
}

TEST_F(HostileModelTest, MemoryEstimateNotesCheckTheirText) {
  ExpectError("graph:note_memory_estimate({})", "string expected, got table");
  ExpectError("graph:note_memory_estimate('')", "give one line of 1 to 400 characters");
  ExpectError("graph:note_memory_estimate(string.rep('x', 401))",
              "give one line of 1 to 400 characters");
  ExpectError("graph:note_memory_estimate('two\\nlines')", "give one line of text");
  ExpectOk(
      "graph:note_memory_estimate('not modelled: a pool')\n"
      "graph:note_memory_estimate('not modelled: a pool')");
  // Distinct notes are bounded (each is checked against the earlier ones).
  ExpectError("for i = 1, 1e6 do graph:note_memory_estimate(string.rep('y', 380) .. i) end",
              "the notes would pass 4096 characters");
}

TEST_F(HostileModelTest, RetimeChecksItsArguments) {
  const std::string sel = "local s = graph:select{kind = 'kernel'}\n";
  ExpectError(sel + "s:retime(5)", "table expected, got number");
  ExpectError(sel + "s:retime{speed = 2}", "retime: unknown field 'speed'");
  ExpectError(sel + "s:retime{work = 'x'}", "retime: 'work' must be a number");
  ExpectError(sel + "s:retime{dtype = 'fp7'}", "retime: unknown dtype 'fp7'");
  ExpectError(sel + "s:retime{to = {}}", "retime: 'to' must be a GPU key");
  ExpectError(sel + "s:retime{gpu = 1.5}", "retime: 'gpu' must be a GPU key");
  ExpectError(sel + "s:retime{to = 'elsewhere'}", "unknown GPU 'elsewhere'");
  for (const char* work : {"-1", "0", "0/0", "math.huge", "1e300", "-math.huge"}) {
    ExpectError(sel + "s:retime{gpu = 'V100-PCIe', work = " + work + "}",
                "retime: the work factor must be in (0, 1e9]");
  }
  ExpectError("graph.select(graph, {kind = 'kernel'}).retime({}, {})", "Selection expected, got table");
}

TEST_F(HostileModelTest, OpInputsAndFactsCheckTheirArguments) {
  ExpectError("graph:op_inputs(1.5)", "op_inputs: id: integer expected, got 1.5");
  ExpectError("graph:op_inputs('x')", "op_inputs: id: integer expected, got string");
  ExpectError("graph:op_inputs()", "op_inputs: id: integer expected, got no value");
  ExpectOk("assert(graph:op_inputs(-1) == nil)\n"
           "assert(graph:op_inputs(math.mininteger) == nil)\n"
           "assert(graph:op_inputs(math.maxinteger) == nil)\n"
           "local f = graph:facts('ignored', 1)\n"
           "assert(type(f.precision.compute) == 'string')");
}

TEST_F(HostileModelTest, ScriptOutcomesCheckTheirArguments) {
  ExpectError("reverie.work_per_step(2)", "table expected, got number");
  for (const char* factor : {"-1", "0", "0/0", "math.huge", "1e10"}) {
    ExpectError(std::string("reverie.work_per_step{factor = ") + factor + "}",
                "must be in (0, 1e9]");
  }
  ExpectError("reverie.work_per_step{factor = 2, samples = -1}", "samples = -1 is out of range");
  ExpectError("reverie.work_per_step{factor = 2, samples = math.maxinteger}", "is out of range");
  ExpectError("reverie.work_per_step{factor = 2, samples = 1.5}", "integer expected, got 1.5");
  ExpectError("reverie.nothing_to_change({})", "string expected, got table");
  ExpectError("reverie.refuse()", "string expected, got no value");
  // A refusal a script catches is still a refusal: its edits are no
  // prediction.
  auto r = RunLua("pcall(reverie.refuse, 'not this trace')\n"
                  "graph:select{kind = 'kernel'}:scale(0.5)",
                  &g_);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition) << r.status;
  EXPECT_THAT(FirstLine(r.status), ::testing::HasSubstr("refused: not this trace"));
  // Its reason reaches the log escaped, as any line.
  r = RunLua("reverie.nothing_to_change('done\\27[2J')", &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.engine->log().size(), 1u);
  EXPECT_EQ(r.engine->log()[0], "nothing to change: done\\x1b[2J");
}

// Long string arguments are charged by the byte (converting "000...1" to an
// integer, matching a device name), and a caught error's long message or a
// repeated reason is charged to the budget or the cap.
TEST_F(HostileModelTest, LongStringsAreCharged) {
  ExpectStops("local n = string.rep('0', 8 << 20) .. '1'\n"
              "for i = 1, 1000 do graph:op_inputs(n) end",
              Limits(10'000'000), "instruction budget");
  ExpectStops("local s = string.rep('tesla v100 ', 500000)\n"
              "for i = 1, 1000 do reverie.match_gpu(s) end",
              Limits(10'000'000), "instruction budget");
  ExpectStops("local s = string.rep('x', 8 << 20)\n"
              "for i = 1, 1000 do pcall(graph.copy_ns, graph, s, 1) end",
              Limits(10'000'000), "instruction budget");
  ExpectStops("local s = string.rep('x', 8 << 20)\n"
              "for i = 1, 1000 do pcall(graph.kernel_ns, graph, {class = s}) end",
              Limits(10'000'000), "instruction budget");
  ExpectStops("local s = string.rep('x', 8 << 20)\n"
              "for i = 1, 1000 do reverie.gpu(s) end",
              Limits(10'000'000), "instruction budget");
  ExpectStops("local s = string.rep('x', 8 << 20)\n"
              "for i = 1, 1000 do pcall(graph.cost_model, graph, {gpu = s}) end",
              Limits(10'000'000), "instruction budget");
  ExpectStops("local s = string.rep('x', 8 << 20)\n"
              "for i = 1, 1000 do pcall(graph.select(graph, {}).retime, graph:all(), {dtype = s}) end",
              Limits(10'000'000), "instruction budget");
  ExpectStops("local s = string.rep('x', 1 << 20)\n"
              "for i = 1, 1000 do pcall(reverie.nothing_to_change, s) end",
              Limits(1'000'000'000, 64), "memory limit of 64 MiB");
}

// The method tables gained the new bindings; the metatables stay locked.
TEST_F(HostileModelTest, MetatablesStayLocked) {
  for (const char* h : {"graph", "graph:all()", "graph:task(1)"}) {
    ExpectError(std::string("local h = ") + h + "\ngetmetatable(h).__index = nil", "is locked");
  }
  ExpectOk("assert(getmetatable(graph) ~= nil and getmetatable(graph).retime == nil)\n"
           "assert(type(graph.cost_model) == 'function' and type(graph:all().retime) == 'function')\n"
           "local ok = pcall(function() graph.facts = 1 end)\n"
           "assert(not ok)");
}

}  // namespace
}  // namespace reverie::lua
