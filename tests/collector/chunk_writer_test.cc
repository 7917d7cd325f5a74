// ChunkWriter: the file it writes is a valid reverie trace once closed
// (empty, many chunks, header rewritten), salvageable before (truncated by a
// crash), strings resolve across chunks, counters add up, and a second
// writer of the same path never clobbers the first.
#include "collector/chunk_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "collector_test_util.h"
#include "gtest/gtest.h"
#include "proto/trace_io.h"

namespace reverie::collector {
namespace {

using testing::Str;
using testing::TempTracePath;

HeaderInfo TestHeader() {
  HeaderInfo h;
  h.producer = "chunk-writer-test";
  h.metadata = {{"a", "b"}};
  return h;
}

TEST(ChunkWriterTest, EmptyTraceIsReadable) {
  const std::string path = TempTracePath("empty");
  testing::RemoveOnExit cleanup{path};
  ChunkWriter w;
  std::string error;
  ASSERT_TRUE(w.Open(path, TestHeader(), {}, &error)) << error;
  // While open the file has no end marker: refused as truncated, and
  // salvageable (the first chunk is written at Open).
  EXPECT_EQ(ReadTrace(path).status().code(), absl::StatusCode::kDataLoss);
  absl::StatusOr<Trace> open_read = ReadTrace(path, {.salvage = true});
  ASSERT_TRUE(open_read.ok()) << open_read.status();
  EXPECT_EQ(open_read->header().producer(), "chunk-writer-test");
  EXPECT_EQ(open_read->GetCounter(TraceCounter::missing_end_marker), 1);
  w.Close();
  absl::StatusOr<Trace> t = ReadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->string_count(), 1u);
  EXPECT_EQ(t->header().metadata().at("a"), "b");
}

TEST(ChunkWriterTest, ManyChunksStringsAndCountersResolve) {
  const std::string path = TempTracePath("many");
  testing::RemoveOnExit cleanup{path};
  ChunkWriter w;
  std::string error;
  ChunkWriter::Options options;
  options.chunk_bytes = 4096;  // forces dozens of chunks
  ASSERT_TRUE(w.Open(path, TestHeader(), options, &error)) << error;
  for (int i = 0; i < 3000; ++i) {
    ApiCallRecord a;
    a.kind = ApiKind::kRuntime;
    a.name_sid = w.Intern("api_" + std::to_string(i % 50));
    a.correlation_id = static_cast<uint64_t>(i + 1);
    a.start_ns = i;
    w.AddApiCall(a);
    if (i % 100 == 0) w.AddCounter(TraceCounter::cupti_overhead_count, 2);
  }
  EXPECT_EQ(w.Intern("api_7"), w.Intern("api_7"));
  w.Close();
  EXPECT_GT(w.chunks_written(), 5);
  absl::StatusOr<Trace> t = ReadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events().api_calls_size(), 3000);
  for (int i = 0; i < 3000; ++i) {
    const proto::ApiCall& a = t->events().api_calls(i);
    EXPECT_EQ(Str(*t, a.name_sid()), "api_" + std::to_string(i % 50));
    EXPECT_EQ(a.correlation_id(), static_cast<uint64_t>(i + 1));
  }
  EXPECT_EQ(t->GetCounter(TraceCounter::cupti_overhead_count), 60);
  EXPECT_EQ(t->string_count(), 51u);
}

TEST(ChunkWriterTest, RangeIdsAreGlobalIndexesPlusOne) {
  const std::string path = TempTracePath("ranges");
  testing::RemoveOnExit cleanup{path};
  ChunkWriter w;
  std::string error;
  ChunkWriter::Options options;
  options.chunk_bytes = 64;
  ASSERT_TRUE(w.Open(path, TestHeader(), options, &error)) << error;
  uint32_t previous = 0;
  for (int i = 0; i < 20; ++i) {
    RangeRecord r;
    r.kind = RangeKind::kLayer;
    r.name_sid = w.Intern("layer" + std::to_string(i));
    r.parent = previous;
    previous = w.AddRange(r);
    EXPECT_EQ(previous, static_cast<uint32_t>(i + 1));
  }
  w.Close();
  absl::StatusOr<Trace> t = ReadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events().ranges_size(), 20);
  for (int i = 1; i < 20; ++i) {
    const proto::Range& r = t->events().ranges(i);
    ASSERT_EQ(r.parent(), static_cast<uint32_t>(i));
    EXPECT_EQ(Str(*t, t->events().ranges(r.parent() - 1).name_sid()), "layer" + std::to_string(i - 1));
  }
}

TEST(ChunkWriterTest, HeaderRewrittenInPlace) {
  const std::string path = TempTracePath("header");
  testing::RemoveOnExit cleanup{path};
  ChunkWriter w;
  std::string error;
  ASSERT_TRUE(w.Open(path, TestHeader(), {}, &error)) << error;
  ApiCallRecord a;
  a.correlation_id = 5;
  w.AddApiCall(a);
  w.FlushChunk(false);
  HeaderInfo h = TestHeader();
  h.framework = "pytorch 2.4.0";
  DeviceRecord d;
  d.id = 0;
  d.name = "NVIDIA H200";
  h.devices.push_back(d);
  ASSERT_TRUE(w.UpdateHeader(h));
  w.Close();
  absl::StatusOr<Trace> t = ReadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header().framework(), "pytorch 2.4.0");
  ASSERT_EQ(t->header().devices_size(), 1);
  EXPECT_EQ(t->header().devices(0).name(), "NVIDIA H200");
  EXPECT_EQ(t->events().api_calls_size(), 1);

  HeaderInfo huge = TestHeader();
  huge.metadata.emplace_back("big", std::string(100000, 'x'));
  ChunkWriter w2;
  testing::RemoveOnExit cleanup2{TempTracePath("header2")};
  ASSERT_TRUE(w2.Open(cleanup2.path, TestHeader(), {}, &error)) << error;
  EXPECT_FALSE(w2.UpdateHeader(huge));
}

// A host that crashes mid-write leaves a partial last chunk and no end
// marker: refused in one line (issue 17, D9: it used to read as a valid,
// shorter trace), and everything before it can be salvaged.
TEST(ChunkWriterTest, TruncatedFileKeepsEarlierChunks) {
  const std::string path = TempTracePath("crash");
  testing::RemoveOnExit cleanup{path};
  ChunkWriter w;
  std::string error;
  ChunkWriter::Options options;
  options.chunk_bytes = 1024;
  ASSERT_TRUE(w.Open(path, TestHeader(), options, &error)) << error;
  for (int i = 0; i < 500; ++i) {
    GpuActivityRecord g;
    g.kind = GpuKind::kKernel;
    g.name_sid = w.Intern("k");
    g.correlation_id = static_cast<uint64_t>(i + 1);
    w.AddGpuActivity(g);
  }
  w.Close();
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  ASSERT_EQ(::truncate(path.c_str(), st.st_size - 100), 0);
  const absl::Status refused = ReadTrace(path).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(std::string(refused.message()).rfind(path + ": ", 0), 0u) << refused;
  EXPECT_EQ(std::string(refused.message()).find('\n'), std::string::npos);
  absl::StatusOr<Trace> t = ReadTrace(path, {.salvage = true});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->GetCounter(TraceCounter::truncated_chunk), 1);
  EXPECT_GT(t->events().gpu_activities_size(), 300);
  EXPECT_LT(t->events().gpu_activities_size(), 500);
}

TEST(ChunkWriterTest, SecondWriterOfSamePathGetsPerProcessName) {
  const std::string path = ::testing::TempDir() + "/shared_name.pb";
  testing::RemoveOnExit cleanup{path};
  ChunkWriter first, second;
  std::string error;
  ASSERT_TRUE(first.Open(path, TestHeader(), {}, &error)) << error;
  ASSERT_TRUE(second.Open(path, TestHeader(), {}, &error)) << error;
  EXPECT_EQ(first.path(), path);
  EXPECT_EQ(second.path(),
            ::testing::TempDir() + "/shared_name." + std::to_string(::getpid()) + ".pb");
  first.Close();
  second.Close();
  testing::RemoveOnExit cleanup_second{second.path()};
  EXPECT_TRUE(ReadTrace(path).ok());
  EXPECT_TRUE(ReadTrace(second.path()).ok());
}

TEST(ChunkWriterTest, UnwritablePathIsOneLineError) {
  ChunkWriter w;
  std::string error;
  EXPECT_FALSE(w.Open("/nonexistent-dir/x.pb", TestHeader(), {}, &error));
  EXPECT_NE(error.find("/nonexistent-dir/x.pb"), std::string::npos);
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace reverie::collector
