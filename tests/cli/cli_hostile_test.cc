// Issue 29 (hostile input, round 2) through the command line, on inputs the
// tests make themselves (the shared reproductions are run by
// tests/reliability/run_reproductions_round2.sh):
// - D27: a step of 0 us (a trace's, or after a script) is one line and exit
//   2, never "speedup 0.000x";
// - D30: two outputs naming one file are refused before anything is written;
// - D31: a script's escape sequences never reach the terminal;
// - D33: amp.lua on a trace whose kernels' correlation ids are shuffled (the
//   builder accepts it) skips and logs the sync it cannot order;
// - left from round 1: import's failed write exits 2; export --chakra DIR/
//   is refused instead of writing DIR/.0.et.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "base/testing/cli_runner.h"

namespace reverie::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

bool OneLine(const std::string& s) {
  return !s.empty() && std::count(s.begin(), s.end(), '\n') == 1 && s.back() == '\n';
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

class CliHostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir(std::string("cli_hostile_") +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  CliResult Run(const std::vector<std::string>& args) { return RunCli(kCli, args, dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    WriteAll(path, text);
    return path;
  }
  void ExpectRefused(const CliResult& r, const std::string& words) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(OneLine(r.err)) << r.err;
    EXPECT_THAT(r.err, HasSubstr(words));
    EXPECT_THAT(r.out, Not(HasSubstr("0.000x")));
  }
  std::string dir_;
};

TEST_F(CliHostileTest, StepsOfZeroMicrosecondsAreRefused) {
  const std::string zero = Write(
      "zero.json",
      R"({"traceEvents":[
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":0,"args":{"correlation":1}},
 {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":0,"args":{"correlation":1,"stream":7,"device":0}}]})");
  ExpectRefused(Run({"predict", zero, "--script", "amp"}), "every step of the baseline takes 0 us");
  const std::string all = Write("all.lua", "graph:remove(graph:all())\n");
  ExpectRefused(Run({"predict", kExampleTrace, "--script", all}),
                "after the scripts every step takes 0 us");
  const std::string out_of_steps = Write(
      "out.lua",
      "for t in graph:all():tasks() do pcall(function() t.step = -1 end) end\n");
  ExpectRefused(Run({"predict", kExampleTrace, "--script", out_of_steps, "--json"}), "takes 0 us");
}

TEST_F(CliHostileTest, TwoOutputsToOneFileAreRefused) {
  const std::string same = dir_ + "/same.html";
  ExpectRefused(Run({"report", kExampleTrace, "-o", same, "--timeline", same}), "two outputs");
  EXPECT_FALSE(std::filesystem::exists(same));
  ExpectRefused(Run({"report", kExampleTrace, "-o", same, "--timeline", dir_ + "/./same.html"}),
                "two outputs");
  // A device takes both.
  EXPECT_EQ(Run({"report", kExampleTrace, "-o", "/dev/null", "--timeline", "/dev/null"}).exit_code,
            0);
  // An existing file under another name: a symbolic link, a hard link.
  const std::string old_file = Write("old.html", "keep");
  std::filesystem::create_symlink(old_file, dir_ + "/link.html");
  ExpectRefused(Run({"report", kExampleTrace, "-o", old_file, "--timeline", dir_ + "/link.html"}),
                "two outputs");
  const std::string trace = Write("trace.json", ReadAll(kExampleTrace));
  std::filesystem::create_hard_link(trace, dir_ + "/hard.json");
  ExpectRefused(Run({"predict", trace, "--script", "identity", "--timeline", dir_ + "/hard.json"}),
                "would overwrite the input");
  EXPECT_EQ(ReadAll(old_file), "keep");
  EXPECT_EQ(ReadAll(trace), ReadAll(kExampleTrace));
}

TEST_F(CliHostileTest, ScriptTextReachesTheTerminalWithoutControlCharacters) {
  const std::string bad = Write("ansi.lua", "print('\\27[2Jcleared\\7') error('\\27[31mred\\27[0m')\n");
  const CliResult r = Run({"predict", kExampleTrace, "--script", bad});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const std::string* s : {&r.out, &r.err}) {
    EXPECT_EQ(s->find('\x1b'), std::string::npos) << *s;
    EXPECT_EQ(s->find('\x07'), std::string::npos) << *s;
  }
  EXPECT_THAT(r.err, HasSubstr("ansi.lua:1: \\x1b[31mred\\x1b[0m"));
  // A path with an escape sequence in it, in a refusal.
  const CliResult missing = Run({"info", dir_ + "/\x1b[2Jgone.json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err.find('\x1b'), std::string::npos) << missing.err;
}

// The example with its GPU activities' correlation ids shuffled (a fixed
// Fisher-Yates): the builder accepts it; amp.lua's found_inf sync then
// closes a cycle in some steps, which it skips and logs.
TEST_F(CliHostileTest, AmpSkipsASyncItCannotOrder) {
  std::istringstream in(ReadAll(kExampleTrace));
  std::vector<std::string> lines;
  std::vector<size_t> gpu;  // lines of GPU activities with a correlation id
  for (std::string line; std::getline(in, line);) {
    const bool is_gpu = line.find("\"cat\":\"kernel\"") != std::string::npos ||
                        line.find("\"cat\":\"gpu_memcpy\"") != std::string::npos;
    if (is_gpu && line.find("\"correlation\":") != std::string::npos) gpu.push_back(lines.size());
    lines.push_back(line);
  }
  ASSERT_GT(gpu.size(), 100u);
  auto id_at = [&lines](size_t l) {
    const size_t at = lines[l].find("\"correlation\":") + 14;
    return std::make_pair(at, lines[l].find_first_not_of("0123456789", at));
  };
  std::vector<std::string> ids;
  for (size_t l : gpu) {
    const auto [b, e] = id_at(l);
    ids.push_back(lines[l].substr(b, e - b));
  }
  std::mt19937 rng(0);
  for (size_t i = ids.size() - 1; i > 0; --i) std::swap(ids[i], ids[rng() % (i + 1)]);
  for (size_t k = 0; k < gpu.size(); ++k) {
    const auto [b, e] = id_at(gpu[k]);
    lines[gpu[k]].replace(b, e - b, ids[k]);
  }
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  const std::string shuffled = Write("shuffled.json", text);
  EXPECT_EQ(Run({"info", shuffled}).exit_code, 0);
  const CliResult r = Run({"predict", shuffled, "--script", "amp"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("amp.lua:"));
  EXPECT_THAT(r.out, HasSubstr(": add_edge: skipped sync dependency"));
}

TEST_F(CliHostileTest, OutputsThatCannotBeWrittenExitTwo) {
  if (std::ofstream("/dev/full").good()) {
    const CliResult r = Run({"import", kExampleTrace, "-o", "/dev/full"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("/dev/full: write failed"));
  }
  std::filesystem::create_directory(dir_ + "/chakra");
  const CliResult r = Run({"export", kExampleTrace, "--chakra", dir_ + "/chakra/"});
  ExpectRefused(r, "is a folder; give a file prefix");
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/chakra"));
  ExpectRefused(Run({"export", kExampleTrace, "--chakra", dir_ + "/chakra"}), "is a folder");
}

}  // namespace
}  // namespace reverie::testing
