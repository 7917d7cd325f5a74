// `reverie export --chakra` on the example trace: the files exist, parse as
// Chakra ET and agree with what the command printed; bad input is one line
// naming the file with exit status 2, and an input is never overwritten.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "export/chakra.h"
#include "gtest/gtest.h"
#include "tests/report/cli_runner.h"

namespace reverie::testing {
namespace {

const std::string kCli = REVERIE_CLI;
const std::string kTiny = std::string(REVERIE_SOURCE_DIR) + "/examples/tiny_mlp_training.json";

exporter::ChakraFile Parse(const std::string& path) {
  const std::string bytes = ReadFile(path);
  absl::StatusOr<exporter::ChakraFile> f = exporter::ReadChakra(bytes);
  EXPECT_TRUE(f.ok()) << path << ": " << f.status();
  return f.ok() ? *f : exporter::ChakraFile{};
}

int CountType(const exporter::ChakraFile& f, chakra_et::NodeType type) {
  int n = 0;
  for (const chakra_et::Node& node : f.nodes) n += node.type() == type;
  return n;
}

TEST(ExportCliTest, BaselineWritesOneParsableFile) {
  const std::string dir = TempDir("export_baseline");
  const std::string prefix = dir + "/tiny";
  CliResult r = RunCli(kCli, {"export", kTiny, "--chakra", prefix}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string path = prefix + ".0.et";
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(prefix + ".1.et"));
  exporter::ChakraFile f = Parse(path);
  ASSERT_FALSE(f.nodes.empty());
  EXPECT_EQ(f.metadata.version(), exporter::kChakraSchemaVersion);
  size_t deps = 0;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    EXPECT_EQ(f.nodes[i].id(), i);
    for (uint64_t p : f.nodes[i].data_deps()) EXPECT_LT(p, i);
    deps += f.nodes[i].data_deps_size();
  }
  // stdout: exactly the one line per file, with the counts that are in it.
  EXPECT_EQ(r.out, absl::StrCat("wrote ", path, ": ", f.nodes.size(), " nodes, ", deps,
                                " dependencies\n"));
  EXPECT_GT(CountType(f, chakra_et::COMP_NODE), 0);
  EXPECT_EQ(CountType(f, chakra_et::COMM_COLL_NODE), 0);  // a single-GPU trace
  std::filesystem::remove_all(dir);
}

TEST(ExportCliTest, DdpScriptGivesSizedCollectivesOnEveryRank) {
  const std::string dir = TempDir("export_ddp");
  const std::string prefix = dir + "/ddp";
  CliResult r = RunCli(kCli,
                       {"export", kTiny, "--chakra", prefix, "--ranks", "8", "--script", "ddp.lua",
                        "--set", "workers=8"},
                       dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string rank0 = ReadFile(prefix + ".0.et");
  for (int rank = 1; rank < 8; ++rank) {
    EXPECT_EQ(ReadFile(absl::StrCat(prefix, ".", rank, ".et")), rank0) << "rank " << rank;
  }
  EXPECT_FALSE(std::filesystem::exists(prefix + ".8.et"));
  exporter::ChakraFile f = Parse(prefix + ".3.et");
  // ddp.lua inserts one all-reduce per gradient bucket and step on a
  // single-GPU trace; each carries the bucket's bytes.
  int collectives = 0;
  for (const chakra_et::Node& n : f.nodes) {
    if (n.type() != chakra_et::COMM_COLL_NODE) continue;
    ++collectives;
    int64_t type = -1, size = -1;
    for (const chakra_et::AttributeProto& a : n.attr()) {
      if (a.name() == "comm_type") type = a.int64_val();
      if (a.name() == "comm_size") size = a.int64_val();
      if (a.name() == "is_cpu_op") {
        EXPECT_FALSE(a.bool_val());
      }
    }
    EXPECT_EQ(type, chakra_et::ALL_REDUCE) << n.name();
    EXPECT_GT(size, 0) << n.name();
    EXPECT_GT(n.data_deps_size(), 0) << n.name();
  }
  EXPECT_GT(collectives, 0);
  // Without the script the same trace has none: the collectives are the what-if's.
  CliResult base = RunCli(kCli, {"export", kTiny, "--chakra", dir + "/base"}, dir);
  ASSERT_EQ(base.exit_code, 0) << base.err;
  EXPECT_EQ(CountType(Parse(dir + "/base.0.et"), chakra_et::COMM_COLL_NODE), 0);
  std::filesystem::remove_all(dir);
}

TEST(ExportCliTest, MissingTraceIsExit2NamingTheFile) {
  const std::string dir = TempDir("export_missing");
  const std::string missing = dir + "/no_such_trace.json";
  CliResult r = RunCli(kCli, {"export", missing, "--chakra", dir + "/out"}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.0.et"));
  std::filesystem::remove_all(dir);
}

TEST(ExportCliTest, RefusesToOverwriteTheInput) {
  const std::string dir = TempDir("export_overwrite");
  const std::string input = dir + "/run.0.et";
  std::filesystem::copy_file(kTiny, input);
  const std::string before = ReadFile(input);
  CliResult r = RunCli(kCli, {"export", input, "--chakra", dir + "/run"}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(input), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(input), before);
  std::filesystem::remove_all(dir);
}

TEST(ExportCliTest, BadArgumentsAreExit2) {
  const std::string dir = TempDir("export_args");
  const std::vector<std::vector<std::string>> cases = {
      {"export", kTiny},                                               // no --chakra
      {"export", "--chakra", dir + "/x"},                              // no TRACE
      {"export", kTiny, "--chakra", dir + "/x", "--ranks", "0"},       // bad ranks
      {"export", kTiny, "--chakra", dir + "/x", "--ranks", "two"},     // bad ranks
      {"export", kTiny, "--chakra", dir + "/x", "--set", "workers=8"}, // --set, no script
      {"export", kTiny, "--chakra", dir + "/x", "--bogus"},            // unknown option
      {"export", kTiny, "--chakra", dir + "/x", "--script", dir + "/none.lua"},
      {"export", kTiny, "--chakra", dir + "/no_dir/x"},                // unwritable output
  };
  for (const std::vector<std::string>& args : cases) {
    CliResult r = RunCli(kCli, args, dir);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_NE(r.err.find("reverie: "), std::string::npos) << r.err;
  }
  CliResult r = RunCli(kCli, {"export", kTiny, "--chakra", dir + "/no_dir/x"}, dir);
  EXPECT_NE(r.err.find(dir + "/no_dir/x.0.et"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.0.et"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reverie::testing
