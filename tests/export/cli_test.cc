// `reverie export --chakra` on the example trace: the files exist, parse as
// Chakra ET and agree with what the command printed; bad input is one line
// naming the file with exit status 2, and an input is never overwritten.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "export/astra_model.h"
#include "export/chakra.h"
#include "export/chakra_check.h"
#include "gtest/gtest.h"
#include "base/testing/cli_runner.h"

namespace reverie::testing {
namespace {

const std::string kTiny = std::string(REVERIE_SOURCE_DIR) + "/examples/tiny_mlp_training.json";
const std::string kRank0 = std::string(REVERIE_SOURCE_DIR) + "/examples/ddp_rank0.json";
const std::string kRank1 = std::string(REVERIE_SOURCE_DIR) + "/examples/ddp_rank1.json";

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

// The nanoseconds after "compare with " on stdout: reverie's simulated span.
int64_t ReverieNs(const std::string& out) {
  const size_t at = out.find("compare with ");
  return at == std::string::npos ? -1 : std::stoll(out.substr(at + 13));
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
  // stdout: one line per file, with the counts that are in it, then the
  // reverie time ASTRA-sim's finish compares with.
  const std::string wrote =
      absl::StrCat("wrote ", path, ": ", f.nodes.size(), " nodes, ", deps, " dependencies\n");
  EXPECT_EQ(r.out.substr(0, wrote.size()), wrote) << r.out;
  EXPECT_EQ(r.out.substr(wrote.size()).rfind("reverie: ", 0), 0u) << r.out;
  EXPECT_GT(ReverieNs(r.out), 0) << r.out;
  // Two CPU threads and two streams, one compute lane: ASTRA-sim's model
  // finishes when reverie does.
  EXPECT_TRUE(exporter::ValidateChakra(f, /*one_compute_lane=*/true).ok());
  EXPECT_EQ(CountType(f, chakra_et::COMM_COLL_NODE), 0);  // a single-GPU trace
  absl::StatusOr<exporter::AstraModelResult> model = exporter::ReplayLikeAstraSim(f);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_NEAR(model->finish_ns, ReverieNs(r.out), 1'000);
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
      {"export", kTiny, "--chakra", dir + "/x", "--chakra-detail", "tasks"},
      {"export", kTiny, "--chakra", dir + "/x", "--chakra-comm", "fast"},
      {"export", kTiny, "--chakra", dir + "/x", "--chakra-detail", "kernels", "--chakra-comm",
       "replay"},
      {"export", kRank0, kRank1, "--chakra", dir + "/x", "--ranks", "3"},  // 2 traces, 3 ranks
      {"export", kRank0, kRank1, "--chakra", dir + "/x", "--chakra-detail", "kernels"},
      {"export", kRank0, kTiny, "--chakra", dir + "/x"},  // collectives that do not match
  };
  for (const std::vector<std::string>& args : cases) {
    CliResult r = RunCli(kCli, args, dir);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.err.rfind("reverie: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
  CliResult r = RunCli(kCli, {"export", kTiny, "--chakra", dir + "/no_dir/x"}, dir);
  EXPECT_NE(r.err.find(dir + "/no_dir/x.0.et"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.0.et"));
  std::filesystem::remove_all(dir);
}

TEST(ExportCliTest, DdpWhatIfLaneFinishesWithReverieUnderAstraSimsModel) {
  const std::string dir = TempDir("export_ddp_lane");
  CliResult r = RunCli(kCli,
                       {"export", kTiny, "--chakra", dir + "/ddp", "--ranks", "4", "--script",
                        "ddp.lua", "--set", "workers=4", "--set", "bandwidth_gbps=25"},
                       dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const exporter::ChakraFile f = Parse(dir + "/ddp.2.et");
  EXPECT_TRUE(exporter::ValidateChakra(f, true).ok()) << exporter::ValidateChakra(f, true);
  const int comm = CountType(f, chakra_et::COMM_COLL_NODE);
  EXPECT_GT(comm, 0);
  // Every rank the same file, the network taking ddp.lua's times: ASTRA-sim's
  // model of the four ranks ends where reverie's simulation does.
  const std::vector<exporter::ChakraFile> ranks(4, f);
  absl::StatusOr<std::vector<exporter::AstraModelResult>> model = exporter::ReplayLikeAstraSim(ranks);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_NEAR((*model)[3].finish_ns, ReverieNs(r.out), 1'000 * (comm + 1)) << r.out;
  std::filesystem::remove_all(dir);
}

TEST(ExportCliTest, KernelDetailWarnsWhatAstraSimSerialises) {
  const std::string dir = TempDir("export_kernels");
  CliResult r = RunCli(kCli, {"export", kTiny, "--chakra", dir + "/k", "--chakra-detail", "kernels"},
                       dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: 2 CPU threads and 2 GPU streams"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("serialises"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(absl::StrFormat("span of %.1f us", ReverieNs(r.out) / 1e3)),
            std::string::npos) << r.err;
  const exporter::ChakraFile f = Parse(dir + "/k.0.et");
  EXPECT_TRUE(exporter::ValidateChakra(f, false).ok());
  EXPECT_FALSE(exporter::ValidateChakra(f, true).ok());  // many lanes
  // What the warning predicts: the model serialises the threads and streams,
  // so it finishes later than reverie but for the dependency delays the file
  // cannot carry (the note says how much was dropped).
  absl::StatusOr<exporter::AstraModelResult> model = exporter::ReplayLikeAstraSim(f);
  ASSERT_TRUE(model.ok());
  const size_t note = r.err.find(" us in all) have no Chakra field");
  ASSERT_NE(note, std::string::npos) << r.err;
  const size_t from = r.err.rfind("; ", note);
  ASSERT_NE(from, std::string::npos);
  const double dropped_us = std::stod(r.err.substr(from + 2, note - from - 2));
  EXPECT_GT(static_cast<double>(model->finish_ns) + dropped_us * 1e3, static_cast<double>(ReverieNs(r.out)));
  std::filesystem::remove_all(dir);
}

TEST(ExportCliTest, RankTracesGiveOneFilePerRankAndKeepTheStraggler) {
  const std::string dir = TempDir("export_job");
  CliResult r = RunCli(kCli, {"export", kRank0, kRank1, "--chakra", dir + "/job"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/job.2.et"));
  std::vector<exporter::ChakraFile> files = {Parse(dir + "/job.0.et"), Parse(dir + "/job.1.et")};
  EXPECT_NE(ReadFile(dir + "/job.0.et"), ReadFile(dir + "/job.1.et"));  // rank 1 is slower
  for (const exporter::ChakraFile& f : files) {
    EXPECT_TRUE(exporter::ValidateChakra(f, true).ok()) << exporter::ValidateChakra(f, true);
    EXPECT_EQ(CountType(f, chakra_et::COMM_COLL_NODE), 6);
  }
  absl::StatusOr<std::vector<exporter::AstraModelResult>> model = exporter::ReplayLikeAstraSim(files);
  ASSERT_TRUE(model.ok()) << model.status();
  // The job ends with its straggler, rank 1, as in `reverie ranks`.
  EXPECT_NEAR((*model)[1].finish_ns, ReverieNs(r.out), 7'000) << r.out;
  EXPECT_LT((*model)[0].finish_ns, (*model)[1].finish_ns);
  EXPECT_NE(r.err.find("6 matched collectives to the network"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reverie::testing
