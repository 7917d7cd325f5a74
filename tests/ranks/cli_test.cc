// `reverie ranks` end to end on the example pair (examples/ddp_rank{0,1}.json,
// synthetic: rank 1 computes 20% slower and rank 0's all-reduces recorded the
// wait; examples/README.md): the straggler and the wait are found, each rank
// replays as measured, a script is applied to every rank, and bad input is
// one line with exit status 2 that never touches an input.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "base/testing/cli_runner.h"

namespace reverie::testing {
namespace {

using ::testing::HasSubstr;

const std::string kExamples = std::string(REVERIE_SOURCE_DIR) + "/examples/";
const std::string kRank0 = kExamples + "ddp_rank0.json";
const std::string kRank1 = kExamples + "ddp_rank1.json";
const std::string kTiny = kExamples + "tiny_mlp_training.json";

// The first capture of `pattern` in `text` as a number (NaN when absent).
double Capture(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern, std::regex::ECMAScript | std::regex::multiline))) {
    ADD_FAILURE() << "no match for " << pattern << " in\n" << text;
    return std::stod("nan");
  }
  return std::stod(m[1].str());
}

// One number from the text table's row for `rank`: column 1 measured,
// 2 alone, 3 job, 4 the signed error, 5 waited.
double Column(const std::string& out, int rank, int column) {
  std::string pattern = absl::StrCat("^", rank, " ");
  for (int c = 1; c <= 5; ++c) {
    const char* number = c == 4 ? "[-+][0-9.]+%" : "[0-9.]+";
    absl::StrAppend(&pattern, "\\s+", c == column ? "(" : "", number, c == column ? ")" : "");
  }
  return Capture(out, pattern);
}

TEST(RanksCliTest, FindsTheStragglerAndTheWait) {
  const std::string dir = TempDir("ranks_pair");
  const CliResult r = RunCli(kCli, {"ranks", kRank0, kRank1}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("6 collectives matched across them (AllReduce 6); 3 steps"));
  EXPECT_THAT(r.out, HasSubstr("straggler: rank 1, last to arrive at 3 of 6 collectives"));
  EXPECT_THAT(r.out, HasSubstr("ddp_rank1.json (rank 1 of 2)"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("warning")));  // the matching checks out
  for (int rank = 0; rank < 2; ++rank) {
    // Coupled, each rank still takes its measured step (within rounding).
    EXPECT_NEAR(Column(r.out, rank, 3), Column(r.out, rank, 1), 0.5) << rank;
  }
  // The generator built in 105 + 191 + 214 us of waiting at rank 0's first
  // bucket: 170 us per step.
  EXPECT_NEAR(Column(r.out, 0, 5), 170.0, 1.0);
  EXPECT_EQ(Column(r.out, 1, 5), 0.0);
  std::filesystem::remove_all(dir);
}

TEST(RanksCliTest, ScriptsRunOnEveryRankAndTheWaitShrinksWithTheCompute) {
  const std::string dir = TempDir("ranks_amp");
  const CliResult r = RunCli(kCli, {"ranks", kRank0, kRank1, "--script", "amp.lua", "--json"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double base = Capture(r.out, R"("baseline": \{\s*"job_step_us": ([0-9.]+))");
  const double predicted = Capture(r.out, R"("predicted": \{[^}]*"job_step_us": ([0-9.]+))");
  EXPECT_LT(predicted, base);
  // The straggler's 20% lead is 20% of a shorter compute: rank 0 waits less.
  const std::string wait0 =
      R"("rank": 0,\s*"job_us": [0-9.]+,\s*"waited_us_per_step": ([0-9.]+))";
  const double wait_before = Capture(r.out, R"("baseline":[\s\S]*?)" + wait0);
  const double wait_after = Capture(r.out, R"("predicted":[\s\S]*?)" + wait0);
  EXPECT_GT(wait_before, 0);
  EXPECT_LT(wait_after, wait_before);
  std::filesystem::remove_all(dir);
}

TEST(RanksCliTest, TimelineReimports) {
  const std::string dir = TempDir("ranks_timeline");
  const std::string out = dir + "/job.json";
  const CliResult r = RunCli(kCli, {"ranks", kRank0, kRank1, "--timeline", out}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CliResult info = RunCli(kCli, {"info", out}, dir);
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("kernels"));
  // The timeline's job steps are the ones `ranks` prints, the slowest
  // rank's (they were the whole job's span per step: 1961.8 us against
  // 1961.1, and +1.28% in `compare` for a run nothing changed).
  const double job = Column(r.out, 1, 3);
  const CliResult cmp = RunCli(kCli, {"compare", out, kRank1, "--a-pid", "1"}, dir);
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_NEAR(Capture(cmp.out, "step time: A ([0-9.]+) ms") * 1e3, job, 0.5) << cmp.out;
  EXPECT_THAT(cmp.out, HasSubstr("error +0.00%"));
  std::filesystem::remove_all(dir);
}

TEST(RanksCliTest, BadInputIsOneLineAndExitTwo) {
  const std::string dir = TempDir("ranks_bad");
  // Two traces without collectives (a copy: the same file twice is refused
  // first, as the duplicate it is).
  const std::string tiny_copy = dir + "/tiny_copy.json";
  std::filesystem::copy_file(kTiny, tiny_copy);
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"ranks", kRank0}, "at least two ranks"},
      {{"ranks", kTiny, tiny_copy}, "nothing couples the ranks"},
      // Issue 29, D29: one trace per rank.
      {{"ranks", kRank0, kRank1, kRank0}, "given for ranks 0 and 2; a job needs a different trace"},
      {{"ranks", kRank0, kExamples + "./ddp_rank0.json"}, "given for ranks 0 and 1"},
      {{"ranks", kRank0, kTiny}, "do not cover the same steps"},
      {{"ranks", kRank0, dir + "/missing.json"}, "missing.json"},
      {{"ranks", kRank0, kRank1, "--script", dir + "/none.lua"}, "none.lua"},
      {{"ranks", kRank0, kRank1, "--timeline", kRank1}, "would overwrite the input"},
      {{"ranks", kRank0, kRank1, "--frobnicate"}, "ranks: unknown option '--frobnicate'"},
  };
  const std::string before = ReadFile(kRank1);
  for (const Case& c : cases) {
    const CliResult r = RunCli(kCli, c.args, dir);
    EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(ReadFile(kRank1), before);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reverie::testing
