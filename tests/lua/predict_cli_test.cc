// `reverie predict` end to end on a tiny hand-written Kineto trace: output
// shape, JSON fields and the error paths scripts can hit (syntax error,
// runtime error, sandbox, unknown parameter, missing script).
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct CliRun {
  int rc = -1;
  std::string out, err;
};

class PredictCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = reverie::testing::TempDirForTest("predict_cli");
    // One launch + GEMM, one launch + element-wise kernel, then a sync, on
    // a V100 (the hardware model needs the trace's GPU).
    Write("tiny.json", R"({"deviceProperties":[{"id":0,"name":"Tesla V100-SXM2-32GB","totalGlobalMem":34089730048,"computeMajor":7,"computeMinor":0,"numSms":80}],
"traceEvents":[
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"volta_sgemm_128x64_nn","pid":0,"tid":7,"ts":3,"dur":100,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"elementwise_kernel","pid":0,"tid":7,"ts":104,"dur":40,"args":{"correlation":2,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":20,"dur":130,"args":{"correlation":3}}
]})");
    Write("syntax.lua", "local a = 1\nlocal b = = 2\n");
    Write("runtime.lua", "local t = graph:select{kind = 'kernel'}\nlocal x = nil\nreturn x.field\n");
    Write("evil.lua", "print('about to escape')\nos.execute('touch " + (dir_ / "pwned").string() + "')\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }

  CliRun Predict(const std::string& args) {
    const std::string err = Path("stderr.txt");
    const std::string cmd = std::string(REVERIE_BINARY_DIR "/cli/reverie predict ") + args +
                            " 2>" + err;
    CliRun r;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(err);
    r.err.assign(std::istreambuf_iterator<char>(in), {});
    return r;
  }

  fs::path dir_;
};

TEST_F(PredictCliTest, PrintsBaselinePredictionAndChanges) {
  const CliRun r = Predict(Path("tiny.json") + " --script amp.lua");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("script: amp.lua (cast_kernels=auto, compute_speedup=0"));
  EXPECT_THAT(r.out, HasSubstr("fp16 on V100-SXM2"));
  EXPECT_THAT(r.out, HasSubstr("baseline (simulated)"));
  EXPECT_THAT(r.out, HasSubstr("speedup"));
  EXPECT_THAT(r.out, HasSubstr("modified task"));
  EXPECT_EQ(r.err, "");
}

TEST_F(PredictCliTest, JsonHasTheDocumentedFields) {
  const CliRun r = Predict(Path("tiny.json") +
                           " --script amp.lua --set compute_speedup=2 --set memory_speedup=2 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* key : {"\"baseline_us\"", "\"predicted_us\"", "\"speedup\"", "\"changes\"",
                          "\"added\"", "\"removed\"", "\"modified\"", "\"steps\"",
                          "\"phases\"", "\"layers\"", "\"scripts\"", "\"compute_speedup\": 2"}) {
    EXPECT_THAT(r.out, HasSubstr(key));
  }
  // GEMM 100us / 2 + element-wise 40us / 2 = 70us instead of 140us: the GPU
  // bounds this trace, the sync waits for it.
  EXPECT_THAT(r.out, HasSubstr("\"modified\": 2"));
}

TEST_F(PredictCliTest, SyntaxErrorNamesFileAndLineInOneLine) {
  const CliRun r = Predict(Path("tiny.json") + " --script " + Path("syntax.lua") + " --json");
  EXPECT_EQ(r.rc, 2);
  // Long paths are shown by file name (Lua would cut them from the left).
  EXPECT_THAT(r.err, StartsWith("reverie: syntax.lua:2: unexpected symbol"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(PredictCliTest, RuntimeErrorHasATracebackOnlyInTextMode) {
  CliRun r = Predict(Path("tiny.json") + " --script " + Path("runtime.lua"));
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, StartsWith("reverie: runtime.lua:3: attempt to index"));
  EXPECT_THAT(r.err, HasSubstr("stack traceback"));
  r = Predict(Path("tiny.json") + " --script " + Path("runtime.lua") + " --json");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, Not(HasSubstr("traceback")));
}

TEST_F(PredictCliTest, SandboxRefusesOsExecute) {
  const CliRun r = Predict(Path("tiny.json") + " --script " + Path("evil.lua") + " --json");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("evil.lua:2: 'os' is not available"));
  EXPECT_FALSE(fs::exists(dir_ / "pwned"));
}

TEST_F(PredictCliTest, BadArgumentsAndParameters) {
  CliRun r = Predict(Path("tiny.json") + " --script amp.lua --set wrokers=8");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown parameter 'wrokers' (amp.lua declares:"));
  r = Predict(Path("tiny.json") + " --script nosuch.lua");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("script 'nosuch.lua' not found"));
  r = Predict(Path("tiny.json"));
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--script"));
  r = Predict(Path("missing.json") + " --script amp.lua");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.json"));
  r = Predict(Path("tiny.json") + " --script amp.lua --set noequals");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("key=value"));
}

}  // namespace
