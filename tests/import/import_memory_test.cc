// The importer's [memory] events (profile_memory=True): both schemas, the op
// that encloses each, frees matched to their allocations by address, and the
// counters for what cannot be matched.
#include <string>

#include "gtest/gtest.h"
#include "proto/trace_io.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

using testing::ImportEvents;
using testing::Str;

// A current-schema [memory] event.
std::string Mem(int ts, int tid, long long addr, long long bytes, long long total, int type = 1) {
  return "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,"
         "\"tid\":" + std::to_string(tid) + ",\"ts\":" + std::to_string(ts) +
         ",\"args\":{\"Total Reserved\":4194304,\"Total Allocated\":" + std::to_string(total) +
         ",\"Bytes\":" + std::to_string(bytes) + ",\"Device Id\":0,\"Device Type\":" +
         std::to_string(type) + ",\"Addr\":" + std::to_string(addr) + "}}";
}

constexpr char kOps[] =
    R"J({"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":10,"dur":20},)J"
    R"J({"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":12,"dur":2},)J";

TEST(ImportMemory, TiesEventsToOpsAndFreesToAllocations) {
  Trace t = ImportEvents(std::string(kOps) +
                         Mem(13, 1, 4096, 512, 1536) + "," +  // inside aten::empty
                         Mem(20, 1, 8192, 256, 1792) + "," +  // inside aten::linear, never freed
                         Mem(25, 1, 4096, -512, 1280) + "," +  // frees the first
                         Mem(40, 1, 65536, -1024, 256) + "," +  // allocated before the trace
                         Mem(41, 2, 1, 8, 8, /*type=*/0) + "," +  // host, no enclosing op
                         Mem(42, 1, 77, 8, 8, /*type=*/9));      // XLA: dropped
  const auto& mem = t.events().memory_events();
  ASSERT_EQ(mem.size(), 5);
  auto op = [&](int i) {
    return mem[i].range() == 0 ? std::string()
                               : testing::Str(t, t.events().ranges(mem[i].range() - 1).name_sid());
  };
  EXPECT_EQ(op(0), "aten::empty");
  EXPECT_EQ(op(1), "aten::linear");
  EXPECT_EQ(op(2), "aten::linear");
  EXPECT_EQ(op(3), "");
  EXPECT_EQ(op(4), "") << "another thread's op does not enclose it";
  EXPECT_EQ(mem[0].bytes(), 512);
  EXPECT_EQ(mem[0].total_allocated(), 1536);
  EXPECT_EQ(mem[0].total_reserved(), 4194304);
  EXPECT_EQ(mem[0].device(), 0);
  EXPECT_EQ(mem[4].device(), -1) << "the host";
  EXPECT_EQ(mem[2].alloc(), 1u) << "the free at 4096 frees the first allocation";
  EXPECT_EQ(mem[3].alloc(), 0u);
  EXPECT_EQ(t.GetCounter(TraceCounter::memory_free_without_allocation), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::memory_never_freed), 2) << "8192 and the host's";
  EXPECT_EQ(t.GetCounter(TraceCounter::memory_unknown_device), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::memory_free_size_mismatch), 0);
  EXPECT_EQ(t.GetCounter(TraceCounter::skipped_cpu_instant_event), 0);
}

TEST(ImportMemory, SortsByTimeAndCountsMismatchesAndDoubles) {
  Trace t = ImportEvents(Mem(30, 1, 4096, -256, 0) + "," +  // listed first, happens last
                         Mem(10, 1, 4096, 512, 512) + "," +
                         Mem(20, 1, 4096, 512, 1024));  // again, while live
  const auto& mem = t.events().memory_events();
  ASSERT_EQ(mem.size(), 3);
  EXPECT_EQ(mem[0].time_ns(), 10000);
  EXPECT_EQ(mem[2].time_ns(), 30000);
  EXPECT_EQ(mem[2].alloc(), 2u) << "the latest allocation at that address";
  EXPECT_EQ(t.GetCounter(TraceCounter::memory_double_allocation), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::memory_free_size_mismatch), 1);
}

TEST(ImportMemory, ReadsThe2021Schema) {
  // No cat, no address, no totals (pytorch/kineto's 2021 samples).
  Trace t = ImportEvents(
      R"J({"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":5,"args":{"Device Type":1,"Device Id":0,"Bytes":1024}},)J"
      R"J({"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":6,"args":{"Device Type":1,"Device Id":0,"Bytes":-1024}})J");
  const auto& mem = t.events().memory_events();
  ASSERT_EQ(mem.size(), 2);
  EXPECT_FALSE(mem[0].has_total_allocated());
  EXPECT_EQ(mem[0].addr(), 0u);
  EXPECT_EQ(mem[1].alloc(), 0u) << "nothing to match by";
  EXPECT_EQ(t.GetCounter(TraceCounter::memory_without_address), 2);
  EXPECT_EQ(t.GetCounter(TraceCounter::memory_free_without_allocation), 0);
}

TEST(ImportMemory, MissingFieldsAndWildNumbersAreBounded) {
  Trace t = ImportEvents(
      R"J({"ph":"i","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":1,"s":"t"},)J"
      R"J({"ph":"i","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":2,"args":{"Device Type":1,"Device Id":99999999999,"Bytes":-900000000000000000,"Total Allocated":-5,"Addr":-3}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::missing_field), 1);
  const auto& mem = t.events().memory_events();
  ASSERT_EQ(mem.size(), 1);
  EXPECT_GE(mem[0].bytes(), -(int64_t{1} << 50));
  EXPECT_GE(mem[0].total_allocated(), 0);
  EXPECT_LE(mem[0].device(), 1 << 20);
  EXPECT_GE(t.GetCounter(TraceCounter::json_number_out_of_range), 1);
}

TEST(ImportMemory, SurvivesTheTraceFileInSmallChunks) {
  Trace t = ImportEvents(std::string(kOps) + Mem(13, 1, 4096, 512, 1536) + "," +
                         Mem(25, 1, 4096, -512, 1024));
  const std::string path = testing::WriteTempFile("", ".pb");
  WriteOptions o;
  o.events_per_chunk = 1;  // the links are global indexes across chunks
  ASSERT_TRUE(WriteTrace(t, path, o).ok());
  absl::StatusOr<Trace> back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status();
  const auto& mem = back->events().memory_events();
  ASSERT_EQ(mem.size(), 2);
  EXPECT_EQ(mem[1].alloc(), 1u);
  EXPECT_EQ(Str(*back, back->events().ranges(mem[0].range() - 1).name_sid()), "aten::empty");
  EXPECT_EQ(back->GetCounter(TraceCounter::memory_index_out_of_range), 0);
}

TEST(ImportMemory, ValidationDropsLinksThatPointNowhere) {
  Trace t = ImportEvents(Mem(13, 1, 4096, 512, 512) + "," + Mem(25, 1, 4096, -512, 0));
  auto& mem = *t.events().mutable_memory_events();
  mem[0].set_range(1000);  // no such range
  mem[0].set_alloc(2);     // not earlier
  mem[1].set_alloc(2);     // itself, a free
  const std::string path = testing::WriteTempFile("", ".pb");
  ASSERT_TRUE(WriteTrace(t, path).ok());
  absl::StatusOr<Trace> back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->events().memory_events(0).range(), 0u);
  EXPECT_EQ(back->events().memory_events(0).alloc(), 0u);
  EXPECT_EQ(back->events().memory_events(1).alloc(), 0u);
  EXPECT_EQ(back->GetCounter(TraceCounter::memory_index_out_of_range), 3);
}

}  // namespace
}  // namespace reverie
