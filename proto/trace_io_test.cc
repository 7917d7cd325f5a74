#include "proto/trace_io.h"

#include <cstdio>
#include <fstream>
#include <string>

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
  t.AddCounter("kernel_without_launch", 2);
  t.AddCounter("kernel_without_launch", 1);
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
  EXPECT_EQ(back->GetCounter("kernel_without_launch"), 3);
  EXPECT_EQ(back->GetCounter("truncated_chunk"), 0);
}

TEST(TraceIoTest, TruncatedFileKeepsEarlierChunks) {
  Trace t = MakeTrace(500);
  const std::string path = TempPath("truncated.pb");
  ASSERT_TRUE(WriteTrace(t, path, {.events_per_chunk = 100}).ok());
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  bytes.resize(bytes.size() - 50);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  absl::StatusOr<Trace> back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->GetCounter("truncated_chunk"), 1);
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
