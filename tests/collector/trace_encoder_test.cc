// The hand-written wire encoder against the protobuf-generated parser of
// proto/trace.proto: every field of every message the collector writes,
// including negative and 64-bit values, must parse back unchanged.
#include "collector/trace_encoder.h"

#include <string>

#include "gtest/gtest.h"
#include "proto/trace.pb.h"

namespace reverie::collector {
namespace {

template <typename Proto>
Proto Parse(const WireBuffer& w) {
  Proto p;
  EXPECT_TRUE(p.ParseFromString(w.str()));
  return p;
}

TEST(WireTest, VarintSizesAndEncodings) {
  EXPECT_EQ(VarintSize(0), 1u);
  EXPECT_EQ(VarintSize(127), 1u);
  EXPECT_EQ(VarintSize(128), 2u);
  EXPECT_EQ(VarintSize(16383), 2u);
  EXPECT_EQ(VarintSize(16384), 3u);
  EXPECT_EQ(VarintSize(~uint64_t{0}), 10u);
  WireBuffer w;
  w.Varint(300);
  EXPECT_EQ(w.str(), std::string("\xac\x02", 2));
}

// Nested messages are written in place; bodies of 128 bytes and more need a
// longer length varint, which moves the body.
TEST(WireTest, NestedMessagesOfEverySize) {
  WireBuffer w;
  for (size_t len : {0u, 1u, 120u, 125u, 126u, 127u, 128u, 200u, 16383u, 16384u, 70000u}) {
    const size_t at = w.BeginMessage(kChunkThreads);
    EncodeThread(ThreadRecord{1, static_cast<int64_t>(len), std::string(len, 'n')}, &w);
    w.EndMessage(at);
  }
  proto::TraceChunk chunk;
  ASSERT_TRUE(chunk.ParseFromString(w.str()));
  ASSERT_EQ(chunk.threads_size(), 11);
  for (const proto::Thread& t : chunk.threads()) {
    EXPECT_EQ(t.pid(), 1);
    EXPECT_EQ(t.name().size(), static_cast<size_t>(t.tid()));
  }
}

TEST(TraceEncoderTest, ApiCallEveryField) {
  ApiCallRecord r{ApiKind::kDriver, 7, 4242, 4343, -5, 1'700'000'000'000'000'000, 0xFFFFFFFFFull + 3,
                  (1ull << 63) + 9, 211};
  WireBuffer w;
  EncodeApiCall(r, &w);
  const auto p = Parse<proto::ApiCall>(w);
  EXPECT_EQ(p.kind(), proto::ApiCall::DRIVER);
  EXPECT_EQ(p.name_sid(), 7u);
  EXPECT_EQ(p.pid(), 4242);
  EXPECT_EQ(p.tid(), 4343);
  EXPECT_EQ(p.start_ns(), -5);
  EXPECT_EQ(p.end_ns(), 1'700'000'000'000'000'000);
  EXPECT_EQ(p.correlation_id(), 0xFFFFFFFFFull + 3);
  EXPECT_EQ(p.external_id(), (1ull << 63) + 9);
  EXPECT_EQ(p.cbid(), 211u);
}

TEST(TraceEncoderTest, GpuActivityEveryField) {
  GpuActivityRecord r;
  r.kind = GpuKind::kMemcpy;
  r.name_sid = 3;
  r.device = -1;
  r.stream = 7;
  r.start_ns = 100;
  r.end_ns = 250;
  r.correlation_id = 99;
  r.external_id = 12;
  r.context = 1;
  r.grid_x = 1;
  r.grid_y = 2;
  r.grid_z = 3;
  r.block_x = 128;
  r.block_y = 4;
  r.block_z = 2;
  r.registers_per_thread = 64;
  r.shared_memory_bytes = 49152;
  r.copy_kind = CopyKind::kPtoP;
  r.bytes = int64_t{1} << 40;
  r.graph_id = 17;
  WireBuffer w;
  EncodeGpuActivity(r, &w);
  const auto p = Parse<proto::GpuActivity>(w);
  EXPECT_EQ(p.kind(), proto::GpuActivity::MEMCPY);
  EXPECT_EQ(p.name_sid(), 3u);
  EXPECT_EQ(p.device(), -1);
  EXPECT_EQ(p.stream(), 7);
  EXPECT_EQ(p.start_ns(), 100);
  EXPECT_EQ(p.end_ns(), 250);
  EXPECT_EQ(p.correlation_id(), 99u);
  EXPECT_EQ(p.external_id(), 12u);
  EXPECT_EQ(p.context(), 1);
  EXPECT_EQ(p.grid_x(), 1);
  EXPECT_EQ(p.grid_y(), 2);
  EXPECT_EQ(p.grid_z(), 3);
  EXPECT_EQ(p.block_x(), 128);
  EXPECT_EQ(p.block_y(), 4);
  EXPECT_EQ(p.block_z(), 2);
  EXPECT_EQ(p.registers_per_thread(), 64);
  EXPECT_EQ(p.shared_memory_bytes(), 49152);
  EXPECT_EQ(p.copy_kind(), proto::GpuActivity::PTOP);
  EXPECT_EQ(p.bytes(), int64_t{1} << 40);
  EXPECT_EQ(p.graph_id(), 17);
}

TEST(TraceEncoderTest, SyncEventRecordRangeStep) {
  SyncRecord s{SyncKind::kStreamWaitEvent, 10, 11, 12, 13, 14, 2, 15, 16, 17, 18};
  WireBuffer w;
  EncodeSync(s, &w);
  const auto ps = Parse<proto::Sync>(w);
  EXPECT_EQ(ps.kind(), proto::Sync::STREAM_WAIT_EVENT);
  EXPECT_EQ(ps.pid(), 10);
  EXPECT_EQ(ps.tid(), 11);
  EXPECT_EQ(ps.start_ns(), 12);
  EXPECT_EQ(ps.end_ns(), 13);
  EXPECT_EQ(ps.correlation_id(), 14u);
  EXPECT_EQ(ps.device(), 2);
  EXPECT_EQ(ps.stream(), 15);
  EXPECT_EQ(ps.event_id(), 16);
  EXPECT_EQ(ps.wait_on_stream(), 17);
  EXPECT_EQ(ps.event_record_correlation_id(), 18u);

  EventRecordRecord e{21, 22, 3, 24, 25};
  w.clear();
  EncodeEventRecord(e, &w);
  const auto pe = Parse<proto::EventRecord>(w);
  EXPECT_EQ(pe.correlation_id(), 21u);
  EXPECT_EQ(pe.event_id(), 22);
  EXPECT_EQ(pe.device(), 3);
  EXPECT_EQ(pe.stream(), 24);
  EXPECT_EQ(pe.context(), 25);

  RangeRecord r{RangeKind::kLayer, 5, 6, PhaseValue::kBackward, 31, 32, 33, 34, 35, 36, 37};
  w.clear();
  EncodeRange(r, &w);
  const auto pr = Parse<proto::Range>(w);
  EXPECT_EQ(pr.kind(), proto::Range::LAYER);
  EXPECT_EQ(pr.name_sid(), 5u);
  EXPECT_EQ(pr.module_path_sid(), 6u);
  EXPECT_EQ(pr.phase(), proto::BACKWARD);
  EXPECT_EQ(pr.pid(), 31);
  EXPECT_EQ(pr.tid(), 32);
  EXPECT_EQ(pr.start_ns(), 33);
  EXPECT_EQ(pr.end_ns(), 34);
  EXPECT_EQ(pr.parent(), 35u);
  EXPECT_EQ(pr.depth(), 36u);
  EXPECT_EQ(pr.external_id(), 37u);

  StepRecord it{41, 42, 43, 44, 45, 46};
  w.clear();
  EncodeStep(it, &w);
  const auto pi = Parse<proto::Step>(w);
  EXPECT_EQ(pi.index(), 41);
  EXPECT_EQ(pi.name_sid(), 42u);
  EXPECT_EQ(pi.pid(), 43);
  EXPECT_EQ(pi.tid(), 44);
  EXPECT_EQ(pi.start_ns(), 45);
  EXPECT_EQ(pi.end_ns(), 46);
}

TEST(TraceEncoderTest, BucketParameterThreadProcessCounter) {
  GradientBucketRecord b{3, 1 << 20, {1, 200, 70000}, {4, 5}};
  WireBuffer w;
  EncodeGradientBucket(b, &w);
  const auto pb = Parse<proto::GradientBucket>(w);
  EXPECT_EQ(pb.index(), 3);
  EXPECT_EQ(pb.bytes(), 1 << 20);
  ASSERT_EQ(pb.parameter_sids_size(), 3);
  EXPECT_EQ(pb.parameter_sids(2), 70000u);
  ASSERT_EQ(pb.layer_sids_size(), 2);
  EXPECT_EQ(pb.layer_sids(1), 5u);

  ParameterRecord p{8, 9, 4096, 10};
  w.clear();
  EncodeParameter(p, &w);
  const auto pp = Parse<proto::Parameter>(w);
  EXPECT_EQ(pp.name_sid(), 8u);
  EXPECT_EQ(pp.layer_sid(), 9u);
  EXPECT_EQ(pp.bytes(), 4096);
  EXPECT_EQ(pp.dtype_sid(), 10u);

  w.clear();
  EncodeThread(ThreadRecord{12, 13, "pt_autograd_0"}, &w);
  const auto pt = Parse<proto::Thread>(w);
  EXPECT_EQ(pt.pid(), 12);
  EXPECT_EQ(pt.tid(), 13);
  EXPECT_EQ(pt.name(), "pt_autograd_0");

  w.clear();
  EncodeProcess(ProcessRecord{12, "python3", "rank 0"}, &w);
  const auto pr = Parse<proto::Process>(w);
  EXPECT_EQ(pr.pid(), 12);
  EXPECT_EQ(pr.name(), "python3");
  EXPECT_EQ(pr.label(), "rank 0");

  w.clear();
  EncodeCounter("cupti_dropped_records", -3, &w);
  const auto pc = Parse<proto::Counter>(w);
  EXPECT_EQ(pc.name(), "cupti_dropped_records");
  EXPECT_EQ(pc.value(), -3);
}

DeviceRecord FullDevice(int32_t id) {
  DeviceRecord d;
  d.id = id;
  d.name = "NVIDIA H200";
  d.vendor = "nvidia";
  d.sm_count = 132;
  d.compute_major = 9;
  d.compute_minor = 0;
  d.total_memory_bytes = int64_t{141} << 30;
  d.sm_clock_khz = 1980000;
  d.memory_clock_khz = 2619000;
  d.memory_bus_width_bits = 6144;
  d.memory_bandwidth_gbps = 4800.5;
  d.max_threads_per_sm = 2048;
  d.registers_per_sm = 65536;
  d.shared_memory_per_sm_bytes = 233472;
  d.warp_size = 32;
  return d;
}

TEST(TraceEncoderTest, HeaderEveryField) {
  HeaderInfo h;
  h.producer = "reverie-collector 0.1";
  h.framework = "pytorch 2.4.0";
  h.base_time_ns = 1'700'000'000'123'456'789;
  h.devices = {FullDevice(0), FullDevice(1)};
  h.metadata = {{"collector.pid", "77"}, {"k", ""}};
  WireBuffer w;
  EncodeHeader(h, &w);
  const auto p = Parse<proto::TraceHeader>(w);
  EXPECT_EQ(p.magic(), "reverie.trace");
  EXPECT_EQ(p.schema_version(), 2u);  // files end with an end marker
  EXPECT_EQ(p.producer(), "reverie-collector 0.1");
  EXPECT_EQ(p.framework(), "pytorch 2.4.0");
  EXPECT_EQ(p.base_time_ns(), 1'700'000'000'123'456'789);
  ASSERT_EQ(p.devices_size(), 2);
  const proto::Device& d = p.devices(1);
  EXPECT_EQ(d.id(), 1);
  EXPECT_EQ(d.name(), "NVIDIA H200");
  EXPECT_EQ(d.vendor(), "nvidia");
  EXPECT_EQ(d.sm_count(), 132);
  EXPECT_EQ(d.compute_major(), 9);
  EXPECT_EQ(d.compute_minor(), 0);
  EXPECT_EQ(d.total_memory_bytes(), int64_t{141} << 30);
  EXPECT_EQ(d.sm_clock_khz(), 1980000);
  EXPECT_EQ(d.memory_clock_khz(), 2619000);
  EXPECT_EQ(d.memory_bus_width_bits(), 6144);
  EXPECT_DOUBLE_EQ(d.memory_bandwidth_gbps(), 4800.5);
  EXPECT_EQ(d.max_threads_per_sm(), 2048);
  EXPECT_EQ(d.registers_per_sm(), 65536);
  EXPECT_EQ(d.shared_memory_per_sm_bytes(), 233472);
  EXPECT_EQ(d.warp_size(), 32);
  ASSERT_EQ(p.metadata_size(), 2);
  EXPECT_EQ(p.metadata().at("collector.pid"), "77");
  EXPECT_EQ(p.metadata().at("k"), "");
}

// The padded header region must have exactly the requested size and parse
// for every header length, including the lengths where one padding field
// cannot fill the gap exactly.
TEST(TraceEncoderTest, HeaderRegionAlwaysExactAndParseable) {
  for (size_t region : {64u, 200u, 8192u}) {
    for (size_t extra = 0; extra < region; ++extra) {
      HeaderInfo h;
      h.producer = "p";
      h.metadata = {{"pad", std::string(extra, 'x')}};
      std::string out;
      WireBuffer plain;
      EncodeHeader(h, &plain);
      const bool ok = EncodeHeaderRegion(h, region, &out);
      if (!ok) {
        // Only headers (nearly) as large as the region may be refused.
        EXPECT_GT(plain.size() + 12, region - 2) << "region " << region << " extra " << extra;
        EXPECT_TRUE(out.empty());
        continue;
      }
      ASSERT_EQ(out.size(), region) << "extra " << extra;
      // varint length, then the message.
      uint64_t len = 0;
      size_t i = 0;
      for (int shift = 0; i < out.size(); ++i, shift += 7) {
        len |= static_cast<uint64_t>(static_cast<uint8_t>(out[i]) & 0x7f) << shift;
        if ((static_cast<uint8_t>(out[i]) & 0x80) == 0) break;
      }
      ++i;
      ASSERT_EQ(i + len, region);
      proto::TraceHeader p;
      ASSERT_TRUE(p.ParseFromString(out.substr(i))) << "extra " << extra;
      EXPECT_EQ(p.magic(), "reverie.trace");
      EXPECT_EQ(p.metadata().at("pad").size(), extra);
    }
  }
}

}  // namespace
}  // namespace reverie::collector
