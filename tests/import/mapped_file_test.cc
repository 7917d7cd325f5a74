// A trace file mapped instead of read (frameworks/kineto/mapped_file.h): the
// same text and the same Trace as read(), and a file truncated or written
// while mapped is reported, never a crash.
#include "frameworks/kineto/mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "frameworks/kineto/json_input.h"
#include "gtest/gtest.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

using kineto::JsonInput;
using kineto::MappedFile;
using kineto::ReadJsonInput;
using kineto::ReadMethod;

// A trace of `n` events, long enough to span several pages and chunks.
std::string ManyEvents(int n) {
  std::string events;
  for (int i = 0; i < n; ++i) {
    if (i > 0) events += ",";
    events += R"({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":)" +
              std::to_string(10 * i) + R"(,"dur":2})";
  }
  return testing::KinetoDoc(events);
}

std::optional<MappedFile> MapPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  std::optional<MappedFile> m = MappedFile::Map(fd);
  if (!m) ::close(fd);
  return m;
}

TEST(MappedFile, MappedAndReadGiveTheSameTextAndTrace) {
  const std::string doc = ManyEvents(3000);
  const std::string path = testing::WriteTempFile(doc);
  absl::StatusOr<JsonInput> mapped = ReadJsonInput(path);
  absl::StatusOr<JsonInput> read = ReadJsonInput(path, ReadMethod::kRead);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(mapped->padded());
  EXPECT_TRUE(read->padded());
  EXPECT_EQ(mapped->text(), doc);
  EXPECT_EQ(read->text(), doc);
  for (int threads : {1, 3}) {
    const std::string from_map =
        testing::ParsedContent(ReadJsonInput(path), size_t{4} << 10, threads);
    EXPECT_EQ(from_map, testing::ParsedContent(ReadJsonInput(path, ReadMethod::kRead),
                                               size_t{4} << 10, threads));
    EXPECT_EQ(from_map.rfind("error", 0), std::string::npos) << from_map;
  }
  EXPECT_TRUE(mapped->Check(path).ok());
  // Parsing never writes the text (nothing the user gave is modified).
  EXPECT_EQ(mapped->text(), doc);
}

TEST(MappedFile, AnEmptyFileIsNotMapped) {
  const std::string path = testing::WriteTempFile("");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(MappedFile::Map(fd).has_value());
  ::close(fd);
  absl::StatusOr<JsonInput> in = ReadJsonInput(path);
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find("empty file"), std::string::npos) << in.status();
}

TEST(MappedFile, ATruncationWhileMappedReadsZeroesAndIsReported) {
  const std::string path = testing::WriteTempFile(std::string(5 * 4096, 'x'));
  std::optional<MappedFile> m = MapPath(path);
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(m->Check(path).ok());
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  // Past the new end: SIGBUS without the handler.
  const volatile char* bytes = m->bytes().data();
  EXPECT_EQ(bytes[3 * 4096 + 7], '\0');
  EXPECT_EQ(bytes[4 * 4096], '\0');
  EXPECT_EQ(bytes[10], 'x');  // before it: the file
  const absl::Status s = m->Check(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
  EXPECT_NE(s.message().find("truncated while it was read"), std::string::npos) << s;
}

TEST(MappedFile, AWriteWhileMappedIsReported) {
  const std::string path = testing::WriteTempFile(std::string(8192, ' ') + "{}");
  std::optional<MappedFile> m = MapPath(path);
  ASSERT_TRUE(m.has_value());
  // Same size, new modification time: the bytes read may be the old or the new.
  const timespec later[2] = {{0, UTIME_OMIT}, {1, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), later, 0), 0);
  const absl::Status s = m->Check(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("changed while it was read"), std::string::npos) << s;
}

TEST(MappedFile, AnImportOfAFileTruncatedMidwaySaysSoAndDoesNotCrash) {
  const std::string doc = ManyEvents(4000);
  const std::string path = testing::WriteTempFile(doc);
  absl::StatusOr<JsonInput> in = ReadJsonInput(path);
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(doc.size() / 3)), 0);
  kineto::KinetoTraceBuilder builder(path);
  // Whatever the parse of zeroes says, the check says what happened.
  (void)kineto::ParseKinetoJson(*in, path, &builder, size_t{4} << 10, 2);
  const absl::Status s = in->Check(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
}

TEST(MappedFile, ASigbusThatIsNotAMappingsIsNotSwallowed) {
  const std::string path = testing::WriteTempFile("{}");
  EXPECT_DEATH(
      {
        std::optional<MappedFile> m = MapPath(path);
        if (m) ::raise(SIGBUS);
      },
      "");
}

}  // namespace
}  // namespace reverie
