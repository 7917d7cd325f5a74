// Each anomaly the importer counts, provoked by a minimal document. Anomalies
// never fail the import.
#include <string>

#include "gtest/gtest.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

using testing::ImportEvents;

constexpr char kRuntime[] = R"J({"ph":"X","cat":"cuda_runtime","pid":1,"tid":1,"dur":1,)J";

TEST(ImportAnomalies, UnmatchedCorrelation) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":1,"args":{"device":0,"stream":7,"correlation":99}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::unmatched_correlation), 1);
  EXPECT_EQ(t.events().gpu_activities_size(), 1) << "the kernel is kept";
}

TEST(ImportAnomalies, GpuActivityWithoutCorrelation) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":1,"args":{"device":0,"stream":7}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::gpu_activity_without_correlation), 1);
}

TEST(ImportAnomalies, LaunchWithoutKernel) {
  Trace t = ImportEvents(std::string(kRuntime) +
                         R"J("name":"cudaLaunchKernel","ts":1,"args":{"correlation":5}},)J" +
                         kRuntime + R"J("name":"cudaGetDevice","ts":3,"args":{"correlation":6}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::launch_without_kernel), 1) << "cudaGetDevice launches nothing";
}

TEST(ImportAnomalies, MemoryCallWithoutGpuActivity) {
  Trace t = ImportEvents(std::string(kRuntime) +
                         R"J("name":"cudaMemsetAsync","ts":1,"args":{"correlation":5}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::memory_call_without_gpu_activity), 1);
}

TEST(ImportAnomalies, DuplicateCorrelation) {
  Trace t = ImportEvents(std::string(kRuntime) +
                         R"J("name":"cudaEventQuery","ts":1,"args":{"correlation":5}},)J" + kRuntime +
                         R"J("name":"cudaEventQuery","ts":3,"args":{"correlation":5}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::duplicate_correlation), 1);
}

TEST(ImportAnomalies, GpuStartsBeforeLaunch) {
  Trace t = ImportEvents(
      std::string(kRuntime) + R"J("name":"cudaLaunchKernel","ts":10,"args":{"correlation":5}},)J" +
      R"J({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":8,"dur":1,"args":{"device":0,"stream":7,"correlation":5}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::gpu_starts_before_launch), 1);
}

TEST(ImportAnomalies, RangeOverlap) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":0,"dur":10},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":5,"dur":10})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::range_overlap), 1);
  ASSERT_EQ(t.events().ranges_size(), 2);
  EXPECT_EQ(t.events().ranges(1).parent(), 1u) << "kept inside the range it starts in";
}

TEST(ImportAnomalies, UnbalancedAnnotation) {
  Trace t = ImportEvents(
      R"J({"ph":"E","pid":1,"tid":1,"ts":15},)J"
      R"J({"ph":"B","cat":"user_annotation","name":"never_ends","pid":1,"tid":1,"ts":20})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::unbalanced_annotation), 2);
}

TEST(ImportAnomalies, NegativeDuration) {
  Trace t = ImportEvents(R"J({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":10,"dur":-3})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::negative_duration), 1);
  ASSERT_EQ(t.events().ranges_size(), 1);
  EXPECT_EQ(t.events().ranges(0).end_ns(), t.events().ranges(0).start_ns());
}

TEST(ImportAnomalies, MissingField) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cpu_op","name":"no_ts","pid":1,"tid":1,"dur":3},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"no_dur","pid":1,"tid":1,"ts":3},)J"
      R"J({"cat":"cpu_op","name":"no_ph","pid":1,"tid":1,"ts":3,"dur":1},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"bad_ts","pid":1,"tid":1,"ts":"soon","dur":1})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::missing_field), 4);
  EXPECT_EQ(t.events().ranges_size(), 1) << "only the event without dur is kept (as 0 long)";
}

TEST(ImportAnomalies, UnknownCategoryAndSkippedEvents) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"my_custom_cat","name":"x","pid":1,"tid":1,"ts":1,"dur":1},)J"
      R"J({"ph":"X","cat":"python_function","name":"train.py(10): step","pid":1,"tid":1,"ts":1,"dur":1},)J"
      R"J({"ph":"i","cat":"cpu_instant_event","name":"[note]","pid":1,"tid":1,"ts":1,"s":"t"},)J"
      R"J({"ph":"X","cat":"overhead","name":"Instrumentation","pid":0,"tid":0,"ts":1,"dur":1},)J"
      R"J({"ph":"C","name":"counter","pid":1,"ts":1,"args":{"v":1}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::unknown_category), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::skipped_python_function), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::skipped_cpu_instant_event), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::skipped_overhead), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::unsupported_event_phase), 1);
}

TEST(ImportAnomalies, UnknownSyncKindAndSyncWithoutApiCall) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cuda_sync","name":"Mystery Sync","pid":0,"tid":7,"ts":1,"dur":1,)J"
      R"J("args":{"cuda_sync_kind":"Mystery Sync","correlation":3,"device":0,"stream":7}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::unknown_sync_kind), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::sync_without_api_call), 1);
  EXPECT_EQ(t.events().syncs_size(), 1);
}

TEST(ImportAnomalies, UnmatchedFlow) {
  Trace t = ImportEvents(R"J({"ph":"s","id":4,"pid":1,"tid":1,"ts":5,"cat":"fwdbwd","name":"fwdbwd"})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::unmatched_flow), 1);
  EXPECT_EQ(t.events().flows_size(), 0);
}

TEST(ImportAnomalies, DuplicateProfilerStep) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":0,"dur":10},)J"
      R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":20,"dur":10})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::duplicate_profiler_step), 1);
  EXPECT_EQ(t.events().steps_size(), 1);
}

TEST(ImportAnomalies, BackwardOpWithoutForwardLayer) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"python_function","name":"nn.Module: Net_0","pid":1,"tid":1,"ts":0,"dur":10},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: MseLossBackward0","pid":1,"tid":2,"ts":20,"dur":5,"args":{"Sequence number":50}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::backward_op_without_forward_layer), 1);
}

TEST(ImportAnomalies, MalformedEventAndTextThreadId) {
  Trace t = ImportEvents(
      R"J(42, {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":"main thread","ts":1,"dur":1})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::malformed_event), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::non_numeric_thread_id), 1);
}

}  // namespace
}  // namespace reverie
