// Every command that writes a file refuses to write it over one of its
// inputs (the trace or a script), spelled the same way or another ("./",
// a symlink): one line, exit status 2, the input byte for byte unchanged.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "base/testing/cli_runner.h"

namespace reverie::testing {
namespace {

const std::string kTiny = std::string(REVERIE_SOURCE_DIR) + "/examples/tiny_mlp_training.json";

TEST(NoOverwriteCliTest, OutputsNeverReplaceInputs) {
  const std::string dir = TempDir("no_overwrite");
  const std::string trace = dir + "/t.json";
  const std::string script = dir + "/s.lua";
  std::filesystem::copy_file(kTiny, trace);
  {
    std::ofstream(script) << "graph:select{kind = \"kernel\"}:scale(0.5)\n";
  }
  std::filesystem::create_symlink(trace, dir + "/link.json");
  const std::string original = ReadFile(trace), original_script = ReadFile(script);
  const std::string same = dir + "/./t.json";
  const std::vector<std::vector<std::string>> cases = {
      {"replay", trace, "--timeline", same},
      {"replay", trace, "--timeline", dir + "/link.json"},
      {"predict", trace, "--script", script, "--timeline", trace},
      {"predict", trace, "--script", script, "--timeline", script},
      {"report", trace, "--script", script, "-o", same},
      {"report", trace, "--script", script, "-o", dir + "/out.html", "--timeline", trace},
      {"sweep", trace, "--script", script, "--set", "x=1,2", "--svg", trace},
      {"import", trace, "-o", same},
  };
  for (const std::vector<std::string>& args : cases) {
    const CliResult r = RunCli(kCli, args, dir);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_THAT(r.err, ::testing::HasSubstr("overwrite")) << args[0];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(ReadFile(trace), original) << args[0];
    EXPECT_EQ(ReadFile(script), original_script) << args[0];
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reverie::testing
