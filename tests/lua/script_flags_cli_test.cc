// The shared script flags (cli/script_args.h) on every command that runs
// optimization scripts: --lua-budget, --lua-memory-mb and --no-sandbox must
// reach the Lua engine on predict, export, report and sweep alike, and bad
// values must be one line "reverie: <command>: ..." with exit status 2.
//
// Each limit is shown to be what stops the script: the same script succeeds
// without the flag and fails with it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "base/testing/cli_runner.h"

namespace reverie::testing {
namespace {

// Every script declares `n` so that sweep's --set n=1,2 has a key to vary
// (an unused --set key is an error).
constexpr char kParams[] = "local P = reverie.params{n = {default = 1, doc = 'repeat'}}\n";

// About ten VM instructions a pass: ~1e6 in all, far below the default
// budget (5e9) and far above --lua-budget 20000.
constexpr char kBoundedLoop[] = "local s = 0\nfor i = 1, 100000 * P.n do s = s + i % 7 end\n";
constexpr char kEndlessLoop[] = "local s = 0\nwhile true do s = s + 1 end\n";
// ~16 MiB of array slots: fine under the default 2 GiB, not under 4 MiB.
constexpr char kBigTable[] = "local t = {}\nfor i = 1, 1000000 * P.n do t[i] = i end\n";
// The sandbox has no `os`.
constexpr char kUsesOs[] = "local now = os.time()\nreverie.log('time ' .. tostring(now))\n";

struct Command {
  std::string name;
  // The command's arguments around the script flags, given a scratch dir.
  std::vector<std::string> (*args)(const std::string& dir);
};

// --json: in text mode predict prints Lua's traceback below the one line
// (predict_cli_test covers that).
std::vector<std::string> PredictArgs(const std::string&) {
  return {"predict", kExampleTrace, "--json"};
}
std::vector<std::string> ExportArgs(const std::string& dir) {
  return {"export", kExampleTrace, "--chakra", dir + "/out"};
}
std::vector<std::string> ReportArgs(const std::string& dir) {
  return {"report", kExampleTrace, "-o", dir + "/report.html"};
}
std::vector<std::string> SweepArgs(const std::string&) {
  return {"sweep", kExampleTrace, "--set", "n=1,2"};
}

// gtest prints the parameter's name rather than its bytes.
void PrintTo(const Command& c, std::ostream* os) { *os << c.name; }

bool OneLine(const std::string& s) {
  return !s.empty() && std::count(s.begin(), s.end(), '\n') == 1 && s.back() == '\n';
}

class ScriptFlagsCliTest : public ::testing::TestWithParam<Command> {
 protected:
  void SetUp() override {
    dir_ = TempDir("script_flags_" + GetParam().name + "_" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << kParams << body;
    return path;
  }

  CliResult Run(const std::string& script, const std::vector<std::string>& flags) {
    std::vector<std::string> args = GetParam().args(dir_);
    args.push_back("--script");
    args.push_back(script);
    args.insert(args.end(), flags.begin(), flags.end());
    return RunCli(kCli, args, dir_);
  }

  std::string dir_;
};

TEST_P(ScriptFlagsCliTest, LuaBudgetStopsALoopThatRunsWithoutIt) {
  const std::string bounded = Script("bounded.lua", kBoundedLoop);
  CliResult r = Run(bounded, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run(bounded, {"--lua-budget", "20000"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err.rfind("reverie: bounded.lua:3: instruction budget of 20000 VM instructions "
                        "exceeded", 0),
            0u)
      << r.err;
  EXPECT_TRUE(OneLine(r.err)) << r.err;
}

TEST_P(ScriptFlagsCliTest, LuaBudgetStopsAnEndlessLoop) {
  const CliResult r = Run(Script("endless.lua", kEndlessLoop), {"--lua-budget", "1000000"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err.rfind("reverie: endless.lua:3: instruction budget of 1000000 VM instructions "
                        "exceeded", 0),
            0u)
      << r.err;
  EXPECT_TRUE(OneLine(r.err)) << r.err;
}

TEST_P(ScriptFlagsCliTest, LuaMemoryCapStopsATableThatFitsWithoutIt) {
  const std::string big = Script("big.lua", kBigTable);
  CliResult r = Run(big, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Run(big, {"--lua-memory-mb", "4"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err.rfind("reverie: big.lua: memory limit of 4 MiB exceeded (Lua heap ", 0), 0u)
      << r.err;
  EXPECT_TRUE(OneLine(r.err)) << r.err;
}

TEST_P(ScriptFlagsCliTest, NoSandboxOpensOs) {
  const std::string uses_os = Script("uses_os.lua", kUsesOs);
  CliResult r = Run(uses_os, {});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err.rfind("reverie: uses_os.lua:2: 'os' is not available", 0), 0u) << r.err;
  EXPECT_TRUE(OneLine(r.err)) << r.err;
  r = Run(uses_os, {"--no-sandbox"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_P(ScriptFlagsCliTest, BadLimitValuesAreOneLineExit2) {
  const std::string bounded = Script("bounded.lua", kBoundedLoop);
  const std::string cmd = GetParam().name;
  struct Case {
    std::vector<std::string> flags;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"--lua-budget", "x"}, cmd + ": --lua-budget expects a positive integer, got 'x'"},
      {{"--lua-budget", "0"}, cmd + ": --lua-budget expects a positive integer, got '0'"},
      {{"--lua-memory-mb", "-5"}, cmd + ": --lua-memory-mb expects a positive integer, got '-5'"},
      {{"--lua-memory-mb"}, cmd + ": --lua-memory-mb needs a value"},
      {{"--set", "noequals"}, ""},  // ParseSetting's message, or sweep's own
  };
  for (const Case& c : cases) {
    const CliResult r = Run(bounded, c.flags);
    EXPECT_EQ(r.exit_code, 2) << c.flags[0] << ": " << r.err;
    EXPECT_TRUE(OneLine(r.err)) << r.err;
    EXPECT_EQ(r.err.rfind("reverie: " + cmd + ": ", 0), 0u) << r.err;
    if (!c.err.empty()) {
      EXPECT_EQ(r.err, "reverie: " + c.err + "\n");
    }
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/out.0.et"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/report.html"));
}

INSTANTIATE_TEST_SUITE_P(EveryScriptCommand, ScriptFlagsCliTest,
                         ::testing::Values(Command{"predict", PredictArgs},
                                           Command{"export", ExportArgs},
                                           Command{"report", ReportArgs},
                                           Command{"sweep", SweepArgs}),
                         [](const ::testing::TestParamInfo<Command>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace reverie::testing
