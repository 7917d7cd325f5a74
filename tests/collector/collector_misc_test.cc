// Smaller collector pieces: settings, CUDA detection for LD_PRELOAD, NVTX
// callback decoding, the step window.
#include <generated_nvtx_meta.h>
#include <unistd.h>

#include <string>

#include "collector/config.h"
#include "collector/cuda_detect.h"
#include "collector/step_window.h"
#include "collector/api_filter.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include "collector/nvtx_decode.h"
#include "gtest/gtest.h"

namespace reverie::collector {
namespace {

TEST(ConfigTest, KeysValuesAndErrors) {
  Config c;
  std::string error;
  EXPECT_TRUE(c.Set("REVERIE_STEPS", "3", &error));
  EXPECT_EQ(c.steps, 3);
  EXPECT_TRUE(c.Set("REVERIE_WARMUP", "2", &error));
  EXPECT_TRUE(c.Set("REVERIE_FSYNC", "yes", &error));
  EXPECT_TRUE(c.fsync_each_chunk);
  EXPECT_TRUE(c.Set("REVERIE_DRIVER_API", "0", &error));
  EXPECT_FALSE(c.driver_api);
  EXPECT_FALSE(c.Set("REVERIE_STEPS", "-1", &error));
  EXPECT_NE(error.find("REVERIE_STEPS=-1"), std::string::npos);
  EXPECT_EQ(c.steps, 3);  // unchanged on error
  EXPECT_FALSE(c.Set("REVERIE_BUFFER_MB", "12abc", &error));
  EXPECT_FALSE(c.Set("REVERIE_NVTX", "maybe", &error));
  EXPECT_FALSE(c.Set("REVERIE_OUTPUT", "", &error));
  EXPECT_FALSE(c.Set("REVERIE_UNKNOWN", "1", &error));
  EXPECT_NE(error.find("unknown"), std::string::npos);
  EXPECT_TRUE(c.Set("REVERIE_OUTPUT", "/tmp/t.%p.pb", &error));
  EXPECT_EQ(c.OutputPath(123), "/tmp/t.123.pb");
  EXPECT_EQ(c.api_filter, ApiFilter::kQueries);  // the default
  EXPECT_TRUE(c.Set("REVERIE_API_FILTER", "cupti", &error));
  EXPECT_EQ(c.api_filter, ApiFilter::kCupti);
  EXPECT_TRUE(c.Set("REVERIE_API_FILTER", "none", &error));
  EXPECT_EQ(c.api_filter, ApiFilter::kNone);
  EXPECT_FALSE(c.Set("REVERIE_API_FILTER", "all", &error));
  EXPECT_NE(error.find("none, queries or cupti"), std::string::npos);
}

TEST(ApiFilterTest, KinetosRuntimeListAndDriverQueriesOnly) {
  // Kineto's blocklist, so runtime calls per step match a torch.profiler trace.
  for (uint32_t cbid : {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020}) {
    EXPECT_TRUE(IsFilteredApi(kRuntimeDomain, cbid)) << cbid;
  }
  size_t n = 0;
  FilteredApis(kRuntimeDomain, &n);
  EXPECT_EQ(n, 6u);
  // Kept: what Kineto keeps (error strings, peeks, attribute queries), and
  // everything that launches, copies, waits or orders.
  for (uint32_t cbid : {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                        CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
                        CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020}) {
    EXPECT_FALSE(IsFilteredApi(kRuntimeDomain, cbid)) << cbid;
  }
  for (uint32_t cbid : {CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
                        CUPTI_DRIVER_TRACE_CBID_cuKernelGetName, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
                        CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute}) {
    EXPECT_TRUE(IsFilteredApi(kDriverDomain, cbid)) << cbid;
  }
  for (uint32_t cbid : {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                        CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
                        CUPTI_DRIVER_TRACE_CBID_cuEventRecord, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2}) {
    EXPECT_FALSE(IsFilteredApi(kDriverDomain, cbid)) << cbid;
  }
  EXPECT_FALSE(IsFilteredApi(3, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
}

TEST(ConfigTest, EnvironmentIsRead) {
  ::setenv("REVERIE_WARMUP", "7", 1);
  ::setenv("REVERIE_CHUNK_KB", "not-a-number", 1);
  Config c;
  const std::vector<std::string> errors = c.LoadFromEnvironment();
  ::unsetenv("REVERIE_WARMUP");
  ::unsetenv("REVERIE_CHUNK_KB");
  EXPECT_EQ(c.warmup, 7);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("REVERIE_CHUNK_KB"), std::string::npos);
}

TEST(ConfigTest, DeprecatedIterationsNameSetsStepsAndLoses) {
  ::setenv("REVERIE_ITERATIONS", "4", 1);
  Config old_name;
  EXPECT_TRUE(old_name.LoadFromEnvironment().empty());
  EXPECT_EQ(old_name.steps, 4);
  ::setenv("REVERIE_STEPS", "6", 1);
  Config both;
  EXPECT_TRUE(both.LoadFromEnvironment().empty());
  ::unsetenv("REVERIE_ITERATIONS");
  ::unsetenv("REVERIE_STEPS");
  EXPECT_EQ(both.steps, 6);
}

TEST(CudaDetectTest, LibraryNamesAndPreloadList) {
  EXPECT_TRUE(IsCudaLibraryName("/usr/local/cuda/lib64/libcudart.so.13"));
  EXPECT_TRUE(IsCudaLibraryName("libcuda.so.1"));
  EXPECT_TRUE(IsCudaLibraryName("/site-packages/torch/lib/libtorch_cuda.so"));
  EXPECT_FALSE(IsCudaLibraryName("/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_FALSE(IsCudaLibraryName("libcudaxyz.so"));
  EXPECT_TRUE(PreloadNames("/a/b/libreverie_collector.so", "libreverie_collector.so"));
  EXPECT_TRUE(PreloadNames("libfoo.so:/x/libreverie_collector.so libbar.so", "libreverie_collector.so"));
  EXPECT_FALSE(PreloadNames("/x/libreverie_collector.so.bak", "libreverie_collector.so"));
  EXPECT_FALSE(PreloadNames("", "libreverie_collector.so"));
}

TEST(CudaDetectTest, ThisTestBinaryIsNotACudaProgram) {
  EXPECT_FALSE(ElfHasDeviceCode("/proc/self/exe"));
  EXPECT_FALSE(ElfHasDeviceCode("/nonexistent"));
  EXPECT_FALSE(ProcessUsesCuda());
}

TEST(NvtxDecodeTest, PushPopStartEndAndRegisteredStrings) {
  NvtxStrings strings;
  nvtxRangePushA_params push{"forward"};
  CUpti_NvtxData d{"nvtxRangePushA", &push, nullptr};
  NvtxAction a = DecodeNvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushA, &d, &strings);
  EXPECT_EQ(a.type, NvtxAction::kPush);
  EXPECT_EQ(a.name, "forward");

  nvtxStringHandle_t handle = reinterpret_cast<nvtxStringHandle_t>(0x1234);
  nvtxDomainRegisterStringA_params reg{nullptr, "registered-name"};
  CUpti_NvtxData rd{"nvtxDomainRegisterStringA", &reg, &handle};
  EXPECT_EQ(DecodeNvtxCallback(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, &rd, &strings).type,
            NvtxAction::kNone);
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = handle;
  nvtxDomainRangePushEx_params dpush{nullptr, {&attr}};
  CUpti_NvtxData dd{"nvtxDomainRangePushEx", &dpush, nullptr};
  a = DecodeNvtxCallback(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &dd, &strings);
  EXPECT_EQ(a.type, NvtxAction::kPush);
  EXPECT_EQ(a.name, "registered-name");

  attr.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  attr.message.unicode = L"wide";
  nvtxRangePushEx_params wpush{&attr};
  CUpti_NvtxData wd{"nvtxRangePushEx", &wpush, nullptr};
  EXPECT_EQ(DecodeNvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushEx, &wd, &strings).name, "wide");

  CUpti_NvtxData pop{"nvtxRangePop", nullptr, nullptr};
  EXPECT_EQ(DecodeNvtxCallback(CUPTI_CBID_NVTX_nvtxRangePop, &pop, &strings).type, NvtxAction::kPop);

  const nvtxRangeId_t id = 99;
  nvtxRangeStartA_params start{"epoch"};
  CUpti_NvtxData sd{"nvtxRangeStartA", &start, &id};
  a = DecodeNvtxCallback(CUPTI_CBID_NVTX_nvtxRangeStartA, &sd, &strings);
  EXPECT_EQ(a.type, NvtxAction::kStart);
  EXPECT_EQ(a.id, 99u);
  nvtxRangeEnd_params end{99};
  CUpti_NvtxData ed{"nvtxRangeEnd", &end, nullptr};
  a = DecodeNvtxCallback(CUPTI_CBID_NVTX_nvtxRangeEnd, &ed, &strings);
  EXPECT_EQ(a.type, NvtxAction::kEnd);
  EXPECT_EQ(a.id, 99u);

  nvtxMarkA_params mark{"mark"};
  CUpti_NvtxData md{"nvtxMarkA", &mark, nullptr};
  EXPECT_EQ(DecodeNvtxCallback(CUPTI_CBID_NVTX_nvtxMarkA, &md, &strings).type, NvtxAction::kNone);
  EXPECT_EQ(DecodeNvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushA, nullptr, &strings).type,
            NvtxAction::kNone);
}

TEST(StepWindowTest, InactiveKeepsEverything) {
  StepWindow w(0, 0);
  EXPECT_FALSE(w.active());
  EXPECT_TRUE(w.KeepTime(5));
  EXPECT_EQ(w.Judge(1, 0), StepWindow::Decision::kKeep);
  EXPECT_TRUE(w.WantStep(100));
}

TEST(StepWindowTest, WarmupOnlyIsOpenEnded) {
  StepWindow w(2, 0);
  EXPECT_FALSE(w.KeepTime(5));
  w.OnStepBegin(1, 10);
  EXPECT_FALSE(w.KeepTime(15));
  w.OnStepBegin(2, 20);
  EXPECT_TRUE(w.KeepTime(25));
  w.OnStepEnd(2, 30);
  EXPECT_FALSE(w.closed());
  EXPECT_TRUE(w.KeepTime(1000));
  EXPECT_FALSE(w.WantStep(1));
  EXPECT_TRUE(w.WantStep(5));
}

TEST(StepWindowTest, SpansOverlappingTheWindowAreKept) {
  StepWindow w(0, 1);
  w.OnStepBegin(0, 100);
  w.OnStepEnd(0, 200);
  EXPECT_TRUE(w.closed());
  EXPECT_TRUE(w.KeepSpan(50, 150));    // starts before
  EXPECT_TRUE(w.KeepSpan(50, 250));    // encloses
  EXPECT_FALSE(w.KeepSpan(10, 90));
  EXPECT_FALSE(w.KeepSpan(201, 300));
  EXPECT_TRUE(w.KeepApiCall(10, 120, 130));
  EXPECT_EQ(w.Judge(10, 999), StepWindow::Decision::kKeep);  // GPU tail of a kept call
  // 9 and 11 may belong to calls not decoded yet (another thread's buffer).
  EXPECT_EQ(w.Judge(11, 150), StepWindow::Decision::kUndecided);
  EXPECT_EQ(w.Judge(9, 150), StepWindow::Decision::kUndecided);
  EXPECT_FALSE(w.KeepAtEnd(11, 150));
  EXPECT_FALSE(w.KeepAtEnd(9, 150));
}

TEST(StepWindowTest, DroppedCallsBoundWhatCanStillBeKept) {
  StepWindow w(1, 1);
  EXPECT_FALSE(w.KeepApiCall(3, 10, 20));  // before the window began
  w.OnStepBegin(0, 0);
  w.OnStepBegin(1, 100);
  EXPECT_FALSE(w.KeepApiCall(5, 60, 70));  // warmup step
  EXPECT_TRUE(w.KeepApiCall(8, 110, 120));
  // Open window: later ids were launched inside it.
  EXPECT_EQ(w.Judge(9, 0), StepWindow::Decision::kKeep);
  EXPECT_EQ(w.Judge(6, 0), StepWindow::Decision::kUndecided);
  EXPECT_EQ(w.Judge(5, 0), StepWindow::Decision::kDrop);
  w.OnStepEnd(1, 200);
  EXPECT_EQ(w.Judge(9, 0), StepWindow::Decision::kUndecided);
  EXPECT_TRUE(w.KeepApiCall(9, 190, 210));  // straddles the end: kept
  EXPECT_FALSE(w.KeepApiCall(12, 220, 230));
  EXPECT_EQ(w.Judge(9, 0), StepWindow::Decision::kKeep);
  EXPECT_EQ(w.Judge(11, 0), StepWindow::Decision::kUndecided);
  EXPECT_EQ(w.Judge(12, 0), StepWindow::Decision::kDrop);
  EXPECT_EQ(w.Judge(0, 150), StepWindow::Decision::kKeep);  // no id: by time
  EXPECT_EQ(w.Judge(0, 250), StepWindow::Decision::kDrop);
  EXPECT_FALSE(w.KeepAtEnd(11, 0));
  EXPECT_TRUE(w.KeepAtEnd(8, 0));
}

}  // namespace
}  // namespace reverie::collector
