// RunWithHugePages re-executes the test binary itself: the test body runs
// in the first process up to the call, then again from the start in the
// re-executed one, where the call returns. /proc/self/environ holds the
// environment a process was started with (setenv does not change it), so
// it shows what glibc read.
#include "cli/huge_pages.h"

#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace reverie::cli {
namespace {

std::string ReadProc(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A file of `bytes` (sparse: only its size matters) in the test's folder.
std::string FileOfSize(const std::string& name, off_t bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path).close();
  EXPECT_EQ(truncate(path.c_str(), bytes), 0) << path;
  return path;
}

// This process's argv, so that the re-executed binary runs the same test,
// and `extra` (a trace the command would read) after it.
void RunWithHugePagesAsStarted(const std::string& extra = "") {
  static std::string cmdline = ReadProc("/proc/self/cmdline");
  std::vector<char*> argv;
  for (size_t at = 0; at < cmdline.size(); at = cmdline.find('\0', at) + 1) {
    argv.push_back(cmdline.data() + at);
  }
  std::string arg = extra;
  if (!extra.empty() && cmdline.find(extra) == std::string::npos) argv.push_back(arg.data());
  argv.push_back(nullptr);
  RunWithHugePages(argv.data());
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "(unset)" : v;
}

TEST(HugePagesTest, StartsAgainWithTheTunableAndGivesBackTheEnvironment) {
  if (std::getenv("REVERIE_HUGE_PAGES_SET") == nullptr) {
    unsetenv("REVERIE_HUGE_PAGES");
    setenv("GLIBC_TUNABLES", "glibc.malloc.perturb=0", 1);
  }
  // A 1 MiB gzipped trace: about 10 MiB of JSON, worth it.
  RunWithHugePagesAsStarted(FileOfSize("huge_pages_trace.json.gz", 1 << 20));
  // This process was started again, by RunWithHugePages (its marker is in
  // the environment the process began with; glibc rewrites GLIBC_TUNABLES
  // there as it reads it, so that one is not looked for).
  EXPECT_NE(ReadProc("/proc/self/environ").find("REVERIE_HUGE_PAGES_SET="), std::string::npos);
  // What this process (and anything it starts) sees is what the user gave.
  EXPECT_EQ(Env("GLIBC_TUNABLES"), "glibc.malloc.perturb=0");
  EXPECT_EQ(Env("REVERIE_HUGE_PAGES_SET"), "(unset)");
  // And malloc now backs a large block with huge pages, where the kernel
  // gives them to processes that ask ("madvise" or "always").
  const std::string thp = ReadProc("/sys/kernel/mm/transparent_hugepage/enabled");
  if (thp.find("[never]") != std::string::npos || thp.empty()) {
    GTEST_SKIP() << "transparent huge pages are off on this machine";
  }
  constexpr size_t kBytes = size_t{64} << 20;
  char* block = static_cast<char*>(std::malloc(kBytes));
  ASSERT_NE(block, nullptr);
  for (size_t i = 0; i < kBytes; i += 4096) block[i] = 1;
  const std::string rollup = ReadProc("/proc/self/smaps_rollup");
  std::free(block);
  const size_t at = rollup.find("AnonHugePages:");
  ASSERT_NE(at, std::string::npos) << rollup;
  EXPECT_GT(std::atol(rollup.c_str() + at + 14), 0) << rollup;
}

TEST(HugePagesTest, LeavesAlonePagesTurnedOffOrTunablesTheUserSet) {
  // A process keeps its pid across exec: a file named by it says whether
  // this body already ran in this process before (it must not have).
  const std::string ran = ::testing::TempDir() + "huge_pages_ran." + std::to_string(getpid());
  if (std::ifstream(ran).good()) {
    std::remove(ran.c_str());
    FAIL() << "started again although huge pages were off or set by the user";
  }
  std::ofstream(ran) << "1";
  setenv("REVERIE_HUGE_PAGES", "0", 1);
  setenv("GLIBC_TUNABLES", "glibc.malloc.perturb=1", 1);
  RunWithHugePagesAsStarted();  // returns here: it did not start again
  EXPECT_EQ(Env("GLIBC_TUNABLES"), "glibc.malloc.perturb=1");
  unsetenv("REVERIE_HUGE_PAGES");
  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0", 1);
  RunWithHugePagesAsStarted();
  EXPECT_EQ(Env("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=0");
  std::remove(ran.c_str());
}

// Only a command given a large trace starts again: what its files hold is
// estimated from their sizes and names.
TEST(HugePagesTest, WorthItOnlyForTracesOfSeveralMegabytesOfJson) {
  const std::string small = FileOfSize("small.json", 100 << 10);
  const std::string raw = FileOfSize("raw.json", 7 << 20);
  const std::string gz = FileOfSize("trace.json.gz", 1 << 20);
  const std::string pb = FileOfSize("trace.pb", 1 << 20);
  const std::string binary = FileOfSize("program", 64 << 20);  // not a trace
  auto worth = [](std::vector<std::string> args) {
    args.insert(args.begin(), "reverie");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    return WorthHugePages(argv.data());
  };
  EXPECT_FALSE(worth({"--help"}));
  EXPECT_FALSE(worth({"info", small}));
  EXPECT_FALSE(worth({"collect", "--", binary}));
  EXPECT_FALSE(worth({"info", ::testing::TempDir() + "missing.json.gz"}));
  EXPECT_TRUE(worth({"info", raw}));
  EXPECT_TRUE(worth({"predict", gz, "--script", "amp.lua"}));
  EXPECT_TRUE(worth({"compare", "--timeline=" + raw}));
  EXPECT_TRUE(worth({"replay", pb}));
}

}  // namespace
}  // namespace reverie::cli
