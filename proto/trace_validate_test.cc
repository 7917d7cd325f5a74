// ValidateTrace: .pb events held to the JSON importer's rules (issue 17,
// D12) and numbers bounded before any arithmetic (D7).
#include "proto/trace_validate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "base/checked_math.h"
#include "gtest/gtest.h"

namespace reverie {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kEpoch = 1'700'000'000'000'000'000;  // ns since 1970, in 2023

proto::GpuActivity* Kernel(Trace* t, int64_t start, int64_t end) {
  proto::GpuActivity* k = t->events().add_gpu_activities();
  k->set_kind(proto::GpuActivity::KERNEL);
  k->set_start_ns(start);
  k->set_end_ns(end);
  k->set_grid_x(80);
  k->set_block_x(256);
  return k;
}

TEST(TraceValidateTest, NegativeDurationsAreCountedAndZeroed) {
  Trace t;
  Kernel(&t, kEpoch + 100, kEpoch + 50);
  proto::ApiCall* a = t.events().add_api_calls();
  a->set_start_ns(kEpoch + 10);
  a->set_end_ns(kEpoch);
  ValidateTrace(&t);
  EXPECT_EQ(t.GetCounter(TraceCounter::negative_duration), 2);
  EXPECT_EQ(t.events().gpu_activities(0).end_ns(), kEpoch + 100);
  EXPECT_EQ(t.events().api_calls(0).end_ns(), kEpoch + 10);
}

TEST(TraceValidateTest, WildTimesAreClampedIntoOneWindow) {
  Trace t;
  for (int i = 0; i < 10; ++i) Kernel(&t, kEpoch + i * 1000, kEpoch + i * 1000 + 500);
  Kernel(&t, kMin, kMax);
  Kernel(&t, -9'223'372'036'854'775, 9'223'372'036'854'775);
  proto::Flow* f = t.events().add_flows();
  f->set_from_ns(kMax);
  f->set_to_ns(kEpoch);
  ValidateTrace(&t);
  EXPECT_EQ(t.GetCounter(TraceCounter::time_out_of_range), 3);
  int64_t lo = kMax, hi = kMin;
  for (const proto::GpuActivity& k : t.events().gpu_activities()) {
    lo = std::min(lo, k.start_ns());
    hi = std::max(hi, k.end_ns());
    EXPECT_LE(k.start_ns(), k.end_ns());
  }
  EXPECT_LE(hi - lo, kMaxDurationNs);
  EXPECT_EQ(t.events().gpu_activities(3).start_ns(), kEpoch + 3000);  // untouched
}

TEST(TraceValidateTest, AbsurdGeometryBecomesUnknown) {
  Trace t;
  proto::GpuActivity* big = Kernel(&t, 0, 10);
  big->set_grid_x(2147483647);
  big->set_grid_y(2147483647);
  big->set_grid_z(2147483647);
  big->set_block_x(65536);
  big->set_block_y(65536);
  proto::GpuActivity* neg = Kernel(&t, 0, 10);
  neg->set_block_x(-1);
  proto::GpuActivity* regs = Kernel(&t, 0, 10);
  regs->set_registers_per_thread(1 << 30);
  proto::GpuActivity* fine = Kernel(&t, 0, 10);
  fine->set_grid_y(2);
  ValidateTrace(&t);
  EXPECT_EQ(t.GetCounter(TraceCounter::kernel_geometry_out_of_range), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t.events().gpu_activities(i).grid_x(), 0);
    EXPECT_EQ(t.events().gpu_activities(i).block_x(), 0);
  }
  EXPECT_EQ(t.events().gpu_activities(3).grid_x(), 80);
}

TEST(TraceValidateTest, BytesAndDevicePropertiesAreBounded) {
  Trace t;
  Kernel(&t, 0, 1)->set_bytes(-5);
  proto::Collective* c = t.events().add_collectives();
  c->set_in_nelems(kMax);
  c->set_element_bytes(1 << 20);
  c->set_group_size(-3);
  proto::Device* d = t.header().add_devices();
  d->set_sm_count(-1);
  d->set_memory_bandwidth_gbps(std::nan(""));
  d->set_max_threads_per_sm(2048);
  t.header().mutable_distributed()->set_world_size(1 << 30);
  ValidateTrace(&t);
  EXPECT_EQ(t.events().gpu_activities(0).bytes(), 0);
  EXPECT_EQ(t.events().collectives(0).in_nelems(), kMaxBytes);
  EXPECT_EQ(t.events().collectives(0).element_bytes(), 64);
  EXPECT_EQ(t.GetCounter(TraceCounter::bytes_out_of_range), 3);
  EXPECT_EQ(t.header().devices(0).sm_count(), 0);
  EXPECT_EQ(t.header().devices(0).memory_bandwidth_gbps(), 0);
  EXPECT_EQ(t.header().devices(0).max_threads_per_sm(), 2048);
  EXPECT_EQ(t.header().distributed().world_size(), 0);
  EXPECT_EQ(t.GetCounter(TraceCounter::device_property_out_of_range), 4);
}

TEST(TraceValidateTest, IdempotentAndSilentOnAGoodTrace) {
  Trace t;
  for (int i = 0; i < 5; ++i) Kernel(&t, kEpoch + i, kEpoch + i + 1);
  ValidateTrace(&t);
  EXPECT_EQ(t.events().counters_size(), 0);
  Trace u;
  Kernel(&u, 0, -5);
  ValidateTrace(&u);
  ValidateTrace(&u);
  EXPECT_EQ(u.GetCounter(TraceCounter::negative_duration), 1);
}

TEST(TraceValidateTest, CountersFromAFileSaturate) {
  Trace t;
  t.AddCounter(TraceCounter::negative_duration, kMax);
  t.AddCounter(TraceCounter::negative_duration, kMax);
  EXPECT_EQ(t.GetCounter(TraceCounter::negative_duration), kMax);
}

// Issue 29, D22: module paths within kMaxModulePathDepth levels and
// kMaxModulePathBytes, cut between two levels.
TEST(TraceValidateTest, CapModulePathKeepsTheOuterLevels) {
  EXPECT_EQ(CapModulePath("encoder.layers.11.attention"), "encoder.layers.11.attention");
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += (i ? ".m" : "m") + std::to_string(i);
  const std::string_view cut = CapModulePath(deep);
  EXPECT_EQ(std::count(cut.begin(), cut.end(), '.'), kMaxModulePathDepth - 1);
  EXPECT_EQ(deep.compare(0, cut.size(), cut), 0);
  EXPECT_EQ(deep[cut.size()], '.');
  // Too long in bytes: cut before the level that crosses the bound.
  const std::string wide = "a." + std::string(600, 'b') + "." + std::string(600, 'c');
  EXPECT_EQ(CapModulePath(wide), "a." + std::string(600, 'b'));
  // One level too long by itself: cut between UTF-8 characters.
  std::string euros;
  for (int i = 0; i < 400; ++i) euros += "\xe2\x82\xac";  // U+20AC, 3 bytes
  const std::string_view e = CapModulePath(euros);
  EXPECT_LE(e.size(), kMaxModulePathBytes);
  EXPECT_EQ(e.size() % 3, 0u);
  EXPECT_EQ(CapModulePath(CapModulePath(deep)), CapModulePath(deep));
}

TEST(TraceValidateTest, DeepModulePathsFromAFileAreCut) {
  Trace t;
  std::string deep = "a";
  for (int i = 0; i < 100000; ++i) deep += ".a";
  const uint32_t sid = t.Intern(deep);
  for (int i = 0; i < 3; ++i) {
    proto::Range* r = t.events().add_ranges();
    r->set_kind(proto::Range::LAYER);
    r->set_module_path_sid(sid);
    r->set_start_ns(kEpoch);
    r->set_end_ns(kEpoch + 10);
  }
  ValidateTrace(&t);
  EXPECT_EQ(t.GetCounter(TraceCounter::module_path_out_of_range), 3);
  const std::string_view path = t.String(t.events().ranges(0).module_path_sid());
  EXPECT_EQ(std::count(path.begin(), path.end(), '.'), kMaxModulePathDepth - 1);
  EXPECT_EQ(t.events().ranges(2).module_path_sid(), t.events().ranges(0).module_path_sid());
  // Idempotent.
  ValidateTrace(&t);
  EXPECT_EQ(t.GetCounter(TraceCounter::module_path_out_of_range), 3);
}

}  // namespace
}  // namespace reverie
