// The `reverie` binary on imports: `info --json` goldens on hand-written
// traces, `import` round trips, and every bad input refused with exit status
// 2 and one line naming the file.
#include <sys/wait.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "frameworks/trace_loader.h"
#include "gtest/gtest.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

const std::string kSourceDir = std::string(REVERIE_SOURCE_DIR) + "/tests/import";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct RunResult {
  int status = -1;
  std::string out, err;
};

// Runs `reverie ARGS`, capturing stdout and stderr.
RunResult Reverie(const std::string& args) {
  const std::string base = ::testing::TempDir() + "/reverie_cli_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string cmd = std::string("'") + REVERIE_CLI_BINARY + "' " + args + " > '" + base +
                          ".out' 2> '" + base + ".err'";
  const int rc = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = ReadFile(base + ".out");
  r.err = ReadFile(base + ".err");
  return r;
}

// The trace is refused: exit 2, nothing on stdout, one stderr line
// "reverie: <path>: ..." that contains `what`.
void ExpectRefused(const std::string& path, const std::string& what) {
  const RunResult r = Reverie("info '" + path + "' --json");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_EQ(r.err.rfind("reverie: " + path + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
}

TEST(ImportCli, InfoJsonGoldens) {
  const bool update = std::getenv("REVERIE_UPDATE_GOLDENS") != nullptr;
  for (const std::string name : {"mini_training", "cpu_only", "anomalies", "schema2021"}) {
    SCOPED_TRACE(name);
    const RunResult r = Reverie("info '" + kSourceDir + "/data/" + name + ".json' --json");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const std::string golden = kSourceDir + "/golden/" + name + ".info.json";
    if (update) std::ofstream(golden, std::ios::binary) << r.out;
    EXPECT_EQ(r.out, ReadFile(golden)) << "regenerate with REVERIE_UPDATE_GOLDENS=1 and review";
  }
}

TEST(ImportCli, ImportRoundTripGivesTheSameInfo) {
  const std::string in = kSourceDir + "/data/mini_training.json";
  const std::string before = ReadFile(in);
  const std::string pb = ::testing::TempDir() + "/reverie_cli_mini.pb";
  const RunResult imported = Reverie("import '" + in + "' -o '" + pb + "'");
  ASSERT_EQ(imported.status, 0) << imported.err;
  EXPECT_EQ(ReadFile(in), before) << "the input is never modified";
  const RunResult from_json = Reverie("info '" + in + "' --json");
  const RunResult from_pb = Reverie("info '" + pb + "' --json");
  ASSERT_EQ(from_pb.status, 0) << from_pb.err;
  EXPECT_EQ(from_pb.out, from_json.out);
  const RunResult text = Reverie("info '" + pb + "'");
  EXPECT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("ProfilerStep#7"), std::string::npos) << text.out;
}

TEST(ImportCli, ImportRefusesToOverwriteItsInput) {
  const std::string in = testing::WriteTempFile(ReadFile(kSourceDir + "/data/cpu_only.json"));
  const std::string before = ReadFile(in);
  const RunResult r = Reverie("import '" + in + "' -o '" + in + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("refusing to overwrite"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(in), before);
  const RunResult no_out = Reverie("import '" + in + "'");
  EXPECT_EQ(no_out.status, 2);
}

TEST(ImportCli, ExampleTraceImportsCleanly) {
  // examples/tiny_mlp_training.json is the README's input: it must import
  // without a single anomaly or skipped event.
  const RunResult r = Reverie("info '" + std::string(REVERIE_SOURCE_DIR) +
                              "/examples/tiny_mlp_training.json' --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"anomalies\": {},"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"skipped\": {}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"name\": \"ProfilerStep#12\""), std::string::npos);
  EXPECT_NE(r.out.find("\"layers\": 7,"), std::string::npos);
  EXPECT_NE(r.out.find("\"sync\": 6,"), std::string::npos) << "3 x (stream wait event + stream sync)";
}

TEST(ImportCli, CpuOnlyTraceSaysNoGpuEvents) {
  const RunResult r = Reverie("info '" + kSourceDir + "/data/cpu_only.json'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("no GPU events"), std::string::npos) << r.out;
}

TEST(ImportCli, BadInputs) {
  const std::string dir = ::testing::TempDir();
  ExpectRefused(dir + "/reverie_no_such_trace.json", "no such file");
  ExpectRefused(testing::WriteTempFile("", ".empty.json"), "empty file");
  ExpectRefused(testing::WriteTempFile(R"J({"traceEvents": [{"ph": "X", "ts": 1,)J", ".cut.json"),
                "invalid JSON");
  ExpectRefused(testing::WriteTempFile(R"J({"traceEvents": [}]})J", ".bad.json"), "at byte");
  ExpectRefused(testing::WriteTempFile(R"J({"schema": "1.0.1", "pid": 7, "nodes": []})J", ".et.json"),
                "is a PyTorch execution trace, not a profiler trace");
  ExpectRefused(testing::WriteTempFile(R"J([{"ph": "X", "name": "a", "ts": 1, "dur": 1}])J", ".list.json"),
                "bare JSON array");
  ExpectRefused(testing::WriteTempFile(R"J({"displayTimeUnit": "ms"})J", ".noevents.json"),
                "without \"traceEvents\"");
  ExpectRefused(testing::WriteTempFile("\x01\x02 binary junk", ".junk"), "unrecognised content");
  ExpectRefused(dir, "is a directory");
}

TEST(ImportCli, TruncatedGzip) {
  // A gzip file cut in the middle.
  const std::string json = ReadFile(kSourceDir + "/data/mini_training.json");
  const std::string full = testing::WriteTempFile("", ".json.gz");
  gzFile f = gzopen(full.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, json.data(), static_cast<unsigned>(json.size())), static_cast<int>(json.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
  const std::string gz = ReadFile(full);
  ASSERT_GT(gz.size(), 100u);
  const std::string cut = testing::WriteTempFile(gz.substr(0, gz.size() / 2), ".cut.json.gz");
  ExpectRefused(cut, "truncated gzip");
  absl::StatusOr<Trace> t = LoadTraceFile(cut);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss);
}

TEST(ImportCli, StatusCodes) {
  EXPECT_EQ(LoadTraceFile(::testing::TempDir() + "/reverie_missing.json").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(LoadTraceFile(testing::WriteTempFile("")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadTraceFile(testing::WriteTempFile("{\"nodes\": [], \"schema\": \"x\"}")).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Trace> ok = LoadTraceFile(kSourceDir + "/data/cpu_only.json");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->events().iterations_size(), 2);
}

}  // namespace
}  // namespace reverie
