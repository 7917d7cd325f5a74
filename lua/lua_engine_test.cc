// The engine itself: sandbox, limits, error reporting, parameters.
#include "lua/lua_engine.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lua/lua_test_util.h"
#include "transforms/test_graphs.h"

namespace reverie::lua {
namespace {

using testing::FirstLine;
using ::testing::HasSubstr;
using testing::RunLua;

class EngineTest : public ::testing::Test {
 protected:
  depgraph::Graph g_ = transforms::testing::MakeTrainingGraph(2);
};

TEST_F(EngineTest, SyntaxErrorNamesFileAndLine) {
  const auto r = RunLua("local x = 1\nlocal y = = 2\n", &g_);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(FirstLine(r.status), ::testing::StartsWith("test.lua:2:"));
}

TEST_F(EngineTest, RuntimeErrorNamesFileLineAndHasATraceback) {
  const auto r = RunLua("local function f()\n  error('boom')\nend\nf()\n", &g_);
  EXPECT_EQ(FirstLine(r.status), "test.lua:2: boom");
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("stack traceback:"));
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("test.lua:4"));
}

TEST_F(EngineTest, NonStringErrorsAreDescribed) {
  const auto r = RunLua("error({})", &g_);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("test.lua:1: error raised with a table value"));
}

TEST_F(EngineTest, SandboxRefusesOsIoRequireDebug) {
  for (const char* code : {"os.execute('touch /tmp/x')", "io.open('/etc/passwd')",
                           "require('socket')", "debug.getinfo(1)", "dofile('x.lua')",
                           "package.path = ''", "loadfile('x')"}) {
    const auto r = RunLua(std::string("\n") + code, &g_);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument) << code;
    EXPECT_THAT(FirstLine(r.status), ::testing::StartsWith("test.lua:2: '")) << code;
    EXPECT_THAT(FirstLine(r.status), HasSubstr("sandboxed")) << code;
  }
  EXPECT_TRUE(RunLua("assert(string.dump == nil)", &g_).status.ok());
  EXPECT_TRUE(RunLua("assert(math.floor(2.5) == 2 and table.concat({'a','b'}) == 'ab')"
                     " assert(utf8.len('ab') == 2)", &g_).status.ok());
}

TEST_F(EngineTest, LoadAcceptsTextOnly) {
  EXPECT_TRUE(RunLua("assert(load('return 1 + 1')() == 2)", &g_).status.ok());
  // A binary chunk (starts with ESC) is refused.
  const auto r = RunLua("local f, err = load('\\27Lua') assert(f == nil) error(err)", &g_);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("binary"));
}

TEST_F(EngineTest, UnsandboxedEngineHasTheStandardLibraries) {
  EngineLimits l;
  l.sandbox = false;
  EXPECT_TRUE(RunLua("assert(type(os.time()) == 'number')", &g_, {}, l).status.ok());
}

TEST_F(EngineTest, InstructionBudgetStopsARunawayScript) {
  EngineLimits l;
  l.instruction_budget = 200'000;
  const auto r = RunLua("local i = 0\nwhile true do\n  i = i + 1\nend\n", &g_, {}, l);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(FirstLine(r.status), ::testing::StartsWith("test.lua:"));
  EXPECT_THAT(FirstLine(r.status), HasSubstr("instruction budget"));
}

TEST_F(EngineTest, MemoryCapStopsAHungryScript) {
  EngineLimits l;
  l.memory_limit_bytes = 8 << 20;
  const auto r = RunLua("local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 100) .. i end", &g_,
                        {}, l);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("memory limit of 8 MiB"));
  EXPECT_LE(r.engine->peak_memory_bytes(), size_t{8} << 20);
}

TEST_F(EngineTest, FailedScriptLeavesTheGraphUntouched) {
  const int64_t before = g_.duration_ns(depgraph::TaskId(1));
  const auto r = RunLua("graph:all():scale(10)\nerror('late failure')", &g_);
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(g_.duration_ns(depgraph::TaskId(1)), before);
}

TEST_F(EngineTest, PrintAndLogAreCaptured) {
  const auto r = RunLua("print('a', 1, true) reverie.log('tasks:', graph:task_count())", &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.engine->log(), ::testing::ElementsAre("a\t1\ttrue", "tasks:\t38"));
}

constexpr char kParams[] = R"(
local P = reverie.params{
  workers = {default = 1, doc = "workers", min = 1, integer = true},
  gbps = {default = 25.5, doc = "bandwidth"},
  fused = {default = false, doc = "a switch"},
  mode = {default = "ring", doc = "algorithm"},
}
result = string.format("%s %s %s %s", math.type(P.workers), P.gbps, tostring(P.fused), P.mode)
print(result, P.workers)
)";

TEST_F(EngineTest, ParamsDefaultsAndTypedOverrides) {
  auto r = RunLua(kParams, &g_);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.engine->log()[0], "integer 25.5 false ring\t1");
  r = RunLua(kParams, &g_, {{"workers", "8"}, {"test.gbps", "10"}, {"fused", "yes"}, {"mode", "tree"}});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.engine->log()[0], "integer 10.0 true tree\t8");
  ASSERT_EQ(r.engine->params().size(), 4u);
  EXPECT_EQ(r.engine->params()[0].name, "fused");  // sorted
  EXPECT_TRUE(r.engine->params()[3].overridden);
  EXPECT_EQ(r.engine->params()[3].value_text, "8");
}

TEST_F(EngineTest, ParamErrorsNameTheScript) {
  auto r = RunLua(kParams, &g_, {{"wrokers", "8"}});
  EXPECT_THAT(FirstLine(r.status), HasSubstr("test.lua:2: unknown parameter 'wrokers'"));
  EXPECT_THAT(FirstLine(r.status), HasSubstr("declares: fused, gbps, mode, workers"));
  r = RunLua(kParams, &g_, {{"workers", "eight"}});
  EXPECT_THAT(FirstLine(r.status), HasSubstr("'workers' expects a finite number, got 'eight'"));
  r = RunLua(kParams, &g_, {{"workers", "0"}});
  EXPECT_THAT(FirstLine(r.status), HasSubstr("outside [1, inf]"));
  r = RunLua(kParams, &g_, {{"workers", "2.5"}});
  EXPECT_THAT(FirstLine(r.status), HasSubstr("whole number"));
  r = RunLua(kParams, &g_, {{"fused", "maybe"}});
  EXPECT_THAT(FirstLine(r.status), HasSubstr("expects true or false"));
  r = RunLua("reverie.params{x = {default = 1}}", &g_);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("needs a doc string"));
  r = RunLua("reverie.params{x = {defualt = 1, doc = 'd'}}", &g_);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("unknown field 'defualt'"));
  r = RunLua("print('no params')", &g_, {{"x", "1"}});
  EXPECT_THAT(FirstLine(r.status), HasSubstr("unknown parameter 'x'"));
}

TEST_F(EngineTest, IncludeReadsOnlyFromTheLibrary) {
  auto r = RunLua("reverie.include('../etc/passwd')", &g_);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("relative path inside the script library"));
  r = RunLua("reverie.include('/etc/passwd')", &g_);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("relative path"));
  r = RunLua("reverie.include('lib/nope.lua')", &g_);
  EXPECT_THAT(FirstLine(r.status), HasSubstr("not found"));
}

}  // namespace
}  // namespace reverie::lua
