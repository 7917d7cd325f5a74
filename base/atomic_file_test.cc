#include "base/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/testing/temp_dir.h"
#include "gtest/gtest.h"

namespace reverie {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::TempDirForTest("atomic"); }
  void TearDown() override { fs::remove_all(dir_); }
  // Files in the folder other than `keep` (temporaries left behind).
  int Others(const std::string& keep) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) n += e.path().filename() != keep;
    return n;
  }
  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesAndReplaces) {
  const std::string p = (dir_ / "out.txt").string();
  ASSERT_TRUE(WriteFileAtomically(p, "first").ok());
  EXPECT_EQ(Read(p), "first");
  ASSERT_TRUE(WriteFileAtomically(p, "second, longer").ok());
  EXPECT_EQ(Read(p), "second, longer");
  EXPECT_EQ(Others("out.txt"), 0);
}

TEST_F(AtomicFileTest, AnAbandonedWriteLeavesTheOldFileAndNoTemporary) {
  const std::string p = (dir_ / "out.txt").string();
  ASSERT_TRUE(WriteFileAtomically(p, "old").ok());
  {
    auto f = AtomicFile::Open(p);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Write("half of the new").ok());
    // destroyed without Commit: a crash or an error on the way
  }
  EXPECT_EQ(Read(p), "old");
  EXPECT_EQ(Others("out.txt"), 0);
}

// D10: a write that fails (here a file-size limit, as on a full disk) leaves
// neither a truncated destination nor a temporary.
TEST_F(AtomicFileTest, AFailedWriteLeavesNothingBehind) {
  const std::string p = (dir_ / "new.pb").string();
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  auto saved = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status s = WriteFileAtomically(p, std::string(100000, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, saved);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find(p), std::string::npos) << s;
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(Others("new.pb"), 0);
}

TEST_F(AtomicFileTest, SpecialFilesAreWrittenInPlace) {
  EXPECT_TRUE(WriteFileAtomically("/dev/null", "discarded").ok());
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(AtomicFileTest, ErrorsNameThePath) {
  const std::string p = (dir_ / "missing" / "out.txt").string();
  const absl::Status s = WriteFileAtomically(p, "x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()).rfind(p, 0), 0u) << s;
  EXPECT_EQ(WriteFileAtomically(dir_.string(), "x").code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace reverie
