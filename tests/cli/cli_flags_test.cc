// The command line of every `reverie` command (cli/main.cc, CLI11):
// - `reverie CMD --help` / `-h` print the command's usage and summary on
//   stdout and exit 0; `reverie --help` lists every command;
// - a usage error, CLI11's own included (unknown option, missing value, bad
//   number, extra argument), is one line "reverie: CMD: ..." and exit 2;
// - `--flag=value` and `--flag value` give the same answer, and repeatable
//   options stay repeatable;
// - collect hands the program after its options (and "--") to exec.
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "base/testing/cli_runner.h"

namespace reverie::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every command the executable registers (cli/cmd_*.cc); the listing of
// `reverie --help` must name exactly these.
const std::vector<std::string> kCommands = {"advise", "collect", "compare", "export",
                                            "import", "info",    "predict", "ranks",
                                            "replay", "report",  "scripts", "sweep",
                                            "validate"};

bool OneLine(const std::string& s) {
  return !s.empty() && std::count(s.begin(), s.end(), '\n') == 1 && s.back() == '\n';
}

class CliFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir(std::string("cli_flags_") +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  CliResult Run(const std::vector<std::string>& args) { return RunCli(kCli, args, dir_); }

  // The command names under "commands:" in `reverie --help`.
  std::vector<std::string> Listed() {
    const CliResult r = Run({"--help"});
    std::vector<std::string> names;
    std::istringstream in(r.out);
    std::string line;
    bool in_list = false;
    while (std::getline(in, line)) {
      if (line == "commands:") {
        in_list = true;
      } else if (in_list && line.rfind("  ", 0) == 0) {
        names.push_back(line.substr(2, line.find(' ', 2) - 2));
      } else if (in_list) {
        break;
      }
    }
    return names;
  }

  std::string dir_;
};

TEST_F(CliFlagsTest, TopLevelHelpListsEveryCommand) {
  const CliResult r = Run({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(Listed(), kCommands) << r.out;
  EXPECT_EQ(Run({"-h"}).out, r.out);
  EXPECT_EQ(Run({"help"}).out, r.out);
  const CliResult v = Run({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_THAT(v.out, StartsWith("reverie "));
}

TEST_F(CliFlagsTest, EveryCommandAnswersHelp) {
  for (const std::string& cmd : kCommands) {
    const CliResult r = Run({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_EQ(r.err, "") << cmd;
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("Usage: reverie ", cmd, " "))) << r.out;
    EXPECT_THAT(r.out, HasSubstr("-h,--help")) << r.out;
    // Its one-line summary, as the top-level listing shows it.
    const CliResult top = Run({"--help"});
    const size_t at = top.out.find(absl::StrCat("\n  ", cmd, " "));
    ASSERT_NE(at, std::string::npos) << cmd;
    std::string summary = top.out.substr(at + 3 + cmd.size());
    summary = summary.substr(summary.find_first_not_of(' '));
    summary = summary.substr(0, summary.find('\n'));
    EXPECT_THAT(r.out, HasSubstr(summary)) << cmd;
    EXPECT_EQ(Run({cmd, "-h"}).out, r.out) << cmd;
    EXPECT_EQ(Run({"help", cmd}).out, r.out) << cmd;
    // --help wins over a bad value beside it.
    EXPECT_EQ(Run({cmd, "--no-such-flag", "--help"}).exit_code, 0) << cmd;
  }
}

TEST_F(CliFlagsTest, EveryCommandRefusesAnUnknownOptionInOneLine) {
  for (const std::string& cmd : kCommands) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{cmd, "--no-such-flag"},
          std::vector<std::string>{cmd, kExampleTrace, "--no-such-flag=3"}}) {
      const CliResult r = Run(args);
      EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.err;
      EXPECT_TRUE(OneLine(r.err)) << r.err;
      EXPECT_THAT(r.err, StartsWith(absl::StrCat("reverie: ", cmd, ": unknown option '--no-such-flag"))) << r.err;
      EXPECT_EQ(r.out, "") << cmd;
    }
  }
}

TEST_F(CliFlagsTest, ParseErrorsAreOneLineExitTwo) {
  struct Case {
    std::vector<std::string> args;
    std::string err;  // the whole of stderr
  };
  const std::vector<Case> cases = {
      {{"info"}, "reverie: info: TRACE is required; see 'reverie info --help'\n"},
      {{"info", kExampleTrace, "extra"},
       "reverie: info: unexpected argument 'extra'; see 'reverie info --help'\n"},
      {{"predict", kExampleTrace, "--script", "amp.lua", "--top"},
       "reverie: predict: --top needs a value\n"},
      {{"predict", kExampleTrace, "--script", "amp.lua", "--top=x"},
       "reverie: predict: --top expects a positive integer, got 'x'\n"},
      {{"predict", kExampleTrace, "--script", "amp.lua", "--top=1.5e0"},
       "reverie: predict: --top expects a positive integer, got '1.5e0'\n"},
      {{"predict", kExampleTrace, "--script", "amp.lua", "--lua-budget=1e30"},
       "reverie: predict: --lua-budget expects a positive integer, got '1e30'\n"},
      {{"predict", kExampleTrace, "--script", "amp.lua", "--cpu-model=both"},
       "reverie: predict: --cpu-model expects ops (op and framework time apart) or gaps, got "
       "'both'\n"},
      {{"predict", kExampleTrace},
       "reverie: predict: give at least one --script (e.g. --script amp.lua)\n"},
      {{"replay", kExampleTrace, "--timeline="}, "reverie: replay: --timeline needs a value\n"},
      {{"replay", kExampleTrace, "--timeline", ""},
       "reverie: replay: --timeline needs an output path\n"},
      {{"export", kExampleTrace, "--chakra", dir_ + "/x", "--ranks=0"},
       "reverie: export: --ranks expects an integer in 1..65536, got '0'\n"},
      {{"compare", kExampleTrace},
       "reverie: compare: B is required; see 'reverie compare --help'\n"},
      {{"no-such-command"}, "reverie: unknown command 'no-such-command'; see 'reverie --help'\n"},
      {{}, "reverie: no command given; see 'reverie --help'\n"},
  };
  for (const Case& c : cases) {
    const CliResult r = Run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.err;
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(CliFlagsTest, EqualsFormIsTheSpaceForm) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> pairs = {
      {{"predict", kExampleTrace, "--script", "amp.lua", "--json"},
       {"predict", kExampleTrace, "--script=amp.lua", "--json"}},
      {{"predict", kExampleTrace, "--script", "amp.lua", "--top", "2", "--cpu-model", "gaps"},
       {"predict", kExampleTrace, "--script=amp.lua", "--top=2", "--cpu-model=gaps"}},
      // A whole number in exponent form, as the docs write budgets.
      {{"predict", kExampleTrace, "--script", "amp.lua", "--lua-budget", "5000000000"},
       {"predict", kExampleTrace, "--script=amp.lua", "--lua-budget=5e9"}},
      {{"compare", kExampleTrace, kExampleTrace, "--top", "3"},
       {"compare", kExampleTrace, kExampleTrace, "--top=3"}},
      {{"sweep", kExampleTrace, "--script", "retarget_gpu", "--set", "to=T4,H100-SXM", "--json"},
       {"sweep", kExampleTrace, "--script=retarget_gpu", "--set=to=T4,H100-SXM", "--json"}},
      {{"validate", kExampleTrace, kExampleTrace, "--script", "identity.lua", "--top", "2"},
       {"validate", kExampleTrace, kExampleTrace, "--script=identity.lua", "--top=2"}},
  };
  for (const auto& [spaced, equals] : pairs) {
    const CliResult a = Run(spaced);
    const CliResult b = Run(equals);
    ASSERT_EQ(a.exit_code, 0) << spaced[0] << ": " << a.err;
    EXPECT_EQ(b.exit_code, 0) << spaced[0] << ": " << b.err;
    EXPECT_EQ(a.out, b.out) << spaced[0];
    EXPECT_FALSE(a.out.empty());
  }
  // An output path given either way is the same file.
  ASSERT_EQ(Run({"replay", kExampleTrace, "--timeline", dir_ + "/a.json"}).exit_code, 0);
  ASSERT_EQ(Run({"replay", kExampleTrace, absl::StrCat("--timeline=", dir_, "/b.json")}).exit_code,
            0);
  EXPECT_EQ(ReadFile(dir_ + "/a.json"), ReadFile(dir_ + "/b.json"));
  EXPECT_FALSE(ReadFile(dir_ + "/a.json").empty());
}

TEST_F(CliFlagsTest, RepeatableOptionsRepeat) {
  const CliResult spaced = Run(
      {"predict", kExampleTrace, "--script", "amp.lua", "--script", "fused_adam.lua", "--json"});
  const CliResult equals =
      Run({"predict", kExampleTrace, "--script=amp.lua", "--script=fused_adam.lua", "--json"});
  ASSERT_EQ(spaced.exit_code, 0) << spaced.err;
  EXPECT_EQ(spaced.out, equals.out);
  EXPECT_THAT(spaced.out, HasSubstr("amp.lua"));
  EXPECT_THAT(spaced.out, HasSubstr("fused_adam.lua"));
  // A value after --script is one script: the next word is the trace.
  const CliResult before = Run({"predict", "--script", "amp.lua", kExampleTrace, "--json"});
  EXPECT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(before.out, Run({"predict", kExampleTrace, "--script", "amp.lua", "--json"}).out);
  // sweep's --set is one grid axis per occurrence; a key twice is refused.
  const CliResult twice =
      Run({"sweep", kExampleTrace, "--script", "retarget_gpu", "--set", "to=T4", "--set", "to=T4"});
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_EQ(twice.err, "reverie: sweep: --set to given twice\n");
}

TEST_F(CliFlagsTest, CollectPassesTheProgramThrough) {
  // Any regular file passes for the collector: the programs here never load
  // CUDA, so the injected library is never opened.
  const std::string env = absl::StrCat("REVERIE_COLLECTOR_LIB=", kExampleTrace);
  const std::string out = dir_ + "/t.pb";
  struct Case {
    std::vector<std::string> args;
    std::string out;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {{"-o", out, "--steps=4", "--", "sh", "-c", "echo $REVERIE_STEPS; exit 3"}, "4\n", 3},
      // These exit 0 without CUDA: nothing was collected, so collect fails.
      {{absl::StrCat("--output=", out), "--warmup", "2", "sh", "-c", "echo $REVERIE_WARMUP --help"},
       "2 --help\n",
       1},
      {{"-o", out, "--", "sh", "-c", "echo \"$0\"", "--no-such-flag"}, "--no-such-flag\n", 1},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"-c", absl::StrCat("export ", env, "; exec \"$0\" collect \"$@\""), kCli};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CliResult r = RunCli("/bin/sh", args, dir_);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
    EXPECT_EQ(r.out, c.out) << r.err;
  }
  const CliResult none = Run({"collect", "-o", out, "--"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "reverie: collect: no command to run; give it after --\n");
}

}  // namespace
}  // namespace reverie::testing
