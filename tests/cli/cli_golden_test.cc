// What each command prints for the example trace, byte for byte against
// goldens (tests/cli/golden/): a refactor that changes an output changes a
// golden, which a reviewer sees. Regenerate with REVERIE_UPDATE_GOLDENS=1
// and review the diff. Run from the source tree with relative paths, so the
// outputs name the same files wherever the checkout lives (a resolved
// script's absolute path is written as <source>).
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/printable.h"
#include "base/testing/cli_runner.h"
#include "gtest/gtest.h"

namespace reverie {
namespace {

using testing::ReadFile;
using testing::TempDir;

struct Golden {
  const char* name;
  std::vector<std::string> args;
};

const std::vector<Golden>& Goldens() {
  static const std::vector<Golden> k = {
      {"info", {"info", "examples/tiny_mlp_training.json"}},
      {"info_json", {"info", "examples/tiny_mlp_training.json", "--json"}},
      {"replay", {"replay", "examples/tiny_mlp_training.json"}},
      {"replay_json", {"replay", "examples/tiny_mlp_training.json", "--json", "--critical-path"}},
      {"replay_critical", {"replay", "examples/tiny_mlp_training.json", "--critical-path"}},
      {"predict_amp", {"predict", "examples/tiny_mlp_training.json", "--script", "amp.lua"}},
      {"predict_amp_json",
       {"predict", "examples/tiny_mlp_training.json", "--script", "amp.lua", "--json"}},
      // The worker count is printed: fixed, so the golden holds on any machine.
      {"advise", {"advise", "examples/tiny_mlp_training.json", "--threads", "2"}},
      {"advise_json", {"advise", "examples/tiny_mlp_training.json", "--json", "--threads", "2"}},
      // One step: no band (min-max) to print beside a step time.
      {"advise_one_step", {"advise", "tests/import/data/mini_training.json", "--threads", "2"}},
      {"compare",
       {"compare", "examples/tiny_mlp_training.json", "tests/import/data/mini_training.json"}},
      {"compare_json",
       {"compare", "examples/tiny_mlp_training.json", "tests/import/data/mini_training.json",
        "--json"}},
      {"sweep",
       {"sweep", "examples/tiny_mlp_training.json", "--script", "batch_size.lua", "--set",
        "factor=1,2"}},
      {"sweep_json",
       {"sweep", "examples/tiny_mlp_training.json", "--script", "batch_size.lua", "--set",
        "factor=1,2", "--json"}},
      {"scripts", {"scripts"}},
  };
  return k;
}

TEST(CliGoldenTest, EveryCommandPrintsWhatItPrintedBefore) {
  const bool update = std::getenv("REVERIE_UPDATE_GOLDENS") != nullptr;
  const std::string scratch = TempDir("cli_golden");
  for (const Golden& g : Goldens()) {
    SCOPED_TRACE(g.name);
    std::string cmd = "cd " + ShellQuote(REVERIE_SOURCE_DIR) + " && " + ShellQuote(REVERIE_CLI);
    for (const std::string& a : g.args) cmd += " " + ShellQuote(a);
    const std::string out = scratch + "/out";
    cmd += " >" + ShellQuote(out) + " 2>/dev/null </dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    // A resolved script's path names the checkout: written as <source>.
    std::string got = ReadFile(out);
    for (size_t at; (at = got.find(REVERIE_SOURCE_DIR)) != std::string::npos;) {
      got.replace(at, std::string_view(REVERIE_SOURCE_DIR).size(), "<source>");
    }
    const std::string golden = std::string(REVERIE_SOURCE_DIR) + "/tests/cli/golden/" + g.name + ".txt";
    if (update) std::ofstream(golden, std::ios::binary) << got;
    EXPECT_FALSE(got.empty());
    EXPECT_EQ(got, ReadFile(golden)) << "regenerate with REVERIE_UPDATE_GOLDENS=1 and review the diff";
  }
}

}  // namespace
}  // namespace reverie
