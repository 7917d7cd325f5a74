// The whole collector runtime with a fake CUPTI (fake_cupti.h): CUPTI-like
// threads request, fill and complete buffers with real activity structs
// while the application marks layers and steps; the writer thread
// decodes; Stop flushes. Run under ThreadSanitizer as well.
#include "collector/collector_runtime.h"

#include <cupti_runtime_cbid.h>
#include <fcntl.h>
#include <generated_nvtx_meta.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collector_test_util.h"
#include "fake_cupti.h"
#include "gtest/gtest.h"
#include "proto/trace_io.h"
#include "reverie/collector.h"

namespace reverie::collector {
namespace {

using testing::Str;
using testing::TempTracePath;

template <typename T>
T Zeroed() {
  T r;
  std::memset(&r, 0, sizeof r);
  return r;
}

// Plays CUPTI: one buffer per call, `n` launches + kernels, on this thread.
void ProduceLaunches(uint32_t first_corr, int n, bool hold = false) {
  fake::FakeState* s = fake::State();
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  // The writer recycles buffers asynchronously; like CUPTI under load, wait
  // for one rather than dropping records (the test counts them exactly).
  for (int tries = 0; buffer == nullptr && tries < 100000; ++tries) {
    s->request(&buffer, &size, &max_records);
    if (buffer == nullptr) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ASSERT_NE(buffer, nullptr);
  fake::RecordWriter w(buffer, size);
  for (int i = 0; i < n; ++i) {
    const uint32_t corr = first_corr + static_cast<uint32_t>(i);
    auto api = Zeroed<CUpti_ActivityAPI>();
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = 211;
    api.start = 1000 + corr;
    api.end = 1001 + corr;
    api.processId = static_cast<uint32_t>(::getpid());
    api.threadId = 5;
    api.correlationId = corr;
    ASSERT_TRUE(w.Add(api));
    auto k = Zeroed<CUpti_ActivityKernel10>();
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 5000 + corr;
    k.end = 5002 + corr;
    k.correlationId = corr;
    k.streamId = 7;
    k.name = "fake_kernel";
    ASSERT_TRUE(w.Add(k));
  }
  if (hold) {
    std::lock_guard<std::mutex> lock(s->held_mu);
    s->held.emplace_back(buffer, w.used());
  } else {
    s->complete(nullptr, 0, buffer, size, w.used());
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Captures what the collector writes to fd 2 during `fn`.
template <typename F>
std::string CaptureStderr(F fn) {
  const std::string path = TempTracePath("stderr");
  const int saved = ::dup(2);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 2);
  ::close(fd);
  fn();
  ::dup2(saved, 2);
  ::close(saved);
  std::string text = ReadFile(path);
  ::unlink(path.c_str());
  return text;
}

class CollectorRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = std::make_unique<fake::FakeState>();
    fake::State() = state_.get();
    api_ = fake::MakeFakeApi();
  }
  void TearDown() override {
    fake::State() = nullptr;
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  std::unique_ptr<Collector> MakeCollector(const std::string& name) {
    auto c = std::make_unique<Collector>(&api_);
    path_ = TempTracePath(name);
    EXPECT_EQ(c->Configure("REVERIE_OUTPUT", path_.c_str()), REVERIE_OK);
    EXPECT_EQ(c->Configure("REVERIE_BUFFER_KB", "64"), REVERIE_OK);
    EXPECT_EQ(c->Configure("REVERIE_BUFFER_MB", "1"), REVERIE_OK);
    return c;
  }
  // `partial`: while the collector still writes, the file has no end marker
  // yet; only a salvaging read accepts it.
  Trace Read(bool partial = false) {
    absl::StatusOr<Trace> t = ReadTrace(path_, {.salvage = partial});
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? std::move(*t) : Trace();
  }

  std::unique_ptr<fake::FakeState> state_;
  CuptiApi api_;
  std::string path_;
};

TEST_F(CollectorRuntimeTest, FullSessionFromSeveralCuptiThreads) {
  auto c = MakeCollector("session");
  ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
  EXPECT_TRUE(c->IsCollecting());
  EXPECT_EQ(c->output_path(), path_);
  EXPECT_EQ(state_->subscribes.load(), 1);
  EXPECT_EQ(state_->timestamp_callbacks.load(), 1);
  EXPECT_EQ(state_->enables.load(), 11);
  EXPECT_EQ(state_->nvtx_domain_enabled.load(), 1);
  EXPECT_EQ(c->Configure("REVERIE_WARMUP", "1"), REVERIE_ALREADY_STARTED);

  c->StepBegin();
  c->RangePush("data", REVERIE_PHASE_DATA_LOADING);
  c->LayerPop();
  c->LayerPush("fc1", REVERIE_PHASE_FORWARD);
  std::vector<std::thread> cupti;
  for (int t = 0; t < 3; ++t) {
    cupti.emplace_back([t] {
      for (int b = 0; b < 10; ++b) ProduceLaunches(static_cast<uint32_t>(1 + (t * 10 + b) * 20), 20);
    });
  }
  std::thread app2([&] {
    c->LayerPush("other.thread.layer", REVERIE_PHASE_BACKWARD);
    c->LayerPop();
  });
  for (std::thread& t : cupti) t.join();
  app2.join();
  c->LayerPop();
  state_->dropped_to_report = 5;
  ProduceLaunches(100000, 3, /*hold=*/true);  // delivered by Stop's flush
  c->Parameter("fc1.weight", "fc1", 4096, "Float");
  c->SetMetadata("framework", "test-framework 1.0");
  c->StepEnd();
  ASSERT_EQ(c->Stop(), REVERIE_OK);
  EXPECT_FALSE(c->IsCollecting());
  EXPECT_EQ(c->Stop(), REVERIE_NOT_COLLECTING);
  EXPECT_EQ(state_->forced_flushes.load(), 1);
  EXPECT_EQ(state_->disables.load(), 11);
  EXPECT_EQ(state_->pushes.load(), 3);
  EXPECT_EQ(state_->pops.load(), 3);

  Trace t = Read();
  EXPECT_EQ(t.events().api_calls_size(), 603);
  EXPECT_EQ(t.events().gpu_activities_size(), 603);
  for (const proto::ApiCall& a : t.events().api_calls()) {
    ASSERT_EQ(Str(t, a.name_sid()), "cudaLaunchKernel");
  }
  ASSERT_EQ(t.events().ranges_size(), 3);
  int layers = 0;
  for (const proto::Range& r : t.events().ranges()) {
    if (Str(t, r.name_sid()) == "data") {
      EXPECT_EQ(r.kind(), proto::Range::USER_ANNOTATION);
      EXPECT_EQ(r.phase(), proto::DATA_LOADING);
      EXPECT_EQ(r.module_path_sid(), 0u);
    } else {
      EXPECT_EQ(r.kind(), proto::Range::LAYER);
      EXPECT_EQ(Str(t, r.module_path_sid()), Str(t, r.name_sid()));
      ++layers;
    }
  }
  EXPECT_EQ(layers, 2);
  EXPECT_EQ(t.events().steps_size(), 1);
  EXPECT_EQ(t.events().parameters_size(), 1);
  EXPECT_EQ(t.header().framework(), "test-framework 1.0");
  EXPECT_EQ(t.header().metadata().at("collector.cupti"), "active");
  EXPECT_EQ(t.GetCounter(TraceCounter::cupti_dropped_records), 5);
  EXPECT_EQ(t.GetCounter(TraceCounter::cupti_unavailable), 0);
}

TEST_F(CollectorRuntimeTest, AnotherSubscriberMeansOneWarningAndHostOnly) {
  state_->subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  auto c = MakeCollector("hostonly");
  int result = -1;
  const std::string err = CaptureStderr([&] { result = c->Start(Collector::Mode::kApi); });
  EXPECT_EQ(result, REVERIE_HOST_ONLY);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("MULTIPLE_SUBSCRIBERS"), std::string::npos) << err;
  EXPECT_EQ(state_->enables.load(), 0);
  EXPECT_EQ(state_->timestamp_callbacks.load(), 0);  // the other tool's setup is untouched
  c->StepBegin();
  c->LayerPush("fc1", REVERIE_PHASE_FORWARD);
  c->LayerPop();
  c->StepEnd();
  EXPECT_EQ(state_->pushes.load(), 0);
  EXPECT_EQ(c->Stop(), REVERIE_OK);
  EXPECT_EQ(state_->flushes.load(), 0);
  Trace t = Read();
  EXPECT_EQ(t.events().ranges_size(), 1);
  EXPECT_EQ(t.events().steps_size(), 1);
  EXPECT_EQ(t.GetCounter(TraceCounter::cupti_unavailable), 1);
  EXPECT_EQ(t.header().metadata().at("collector.cupti"), "unavailable");
}

TEST_F(CollectorRuntimeTest, InjectionWithoutCuptiWarnsOnceAndWritesNothing) {
  state_->subscribe_result = CUPTI_ERROR_NOT_INITIALIZED;
  auto c = MakeCollector("injection_fail");
  ::unlink(path_.c_str());
  int result = -1;
  const std::string err = CaptureStderr([&] { result = c->Start(Collector::Mode::kInjection); });
  EXPECT_EQ(result, REVERIE_NOT_COLLECTING);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("not collecting"), std::string::npos) << err;
  EXPECT_FALSE(c->IsCollecting());
  c->LayerPush("x", 1);  // harmless no-ops
  c->LayerPop();
  EXPECT_EQ(c->Start(Collector::Mode::kApi), REVERIE_NOT_COLLECTING);
  struct stat st{};
  EXPECT_NE(::stat(path_.c_str(), &st), 0);
}

TEST_F(CollectorRuntimeTest, ExhaustedPoolHandsCuptiNoBufferAndCountsIt) {
  auto c = MakeCollector("exhausted");
  ASSERT_EQ(c->Configure("REVERIE_BUFFER_KB", "512"), REVERIE_OK);  // 1 MB / 512 KB = 2 buffers
  ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
  std::vector<uint8_t*> taken;
  for (int i = 0; i < 3; ++i) {
    uint8_t* b = nullptr;
    size_t size = 0, max_records = 0;
    state_->request(&b, &size, &max_records);
    taken.push_back(b);
  }
  EXPECT_NE(taken[0], nullptr);
  EXPECT_NE(taken[1], nullptr);
  EXPECT_EQ(taken[2], nullptr);
  state_->complete(nullptr, 0, taken[0], 0, 0);
  state_->complete(nullptr, 0, taken[1], 0, 0);
  ASSERT_EQ(c->Stop(), REVERIE_OK);
  EXPECT_EQ(Read().GetCounter(TraceCounter::cupti_buffer_pool_exhausted), 1);
}

TEST_F(CollectorRuntimeTest, WindowEndStopsCuptiAndMarkers) {
  auto c = MakeCollector("window");
  ASSERT_EQ(c->Configure("REVERIE_WARMUP", "1"), REVERIE_OK);
  ASSERT_EQ(c->Configure("REVERIE_STEPS", "1"), REVERIE_OK);
  ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
  for (int i = 0; i < 3; ++i) {
    c->StepBegin();
    c->LayerPush("layer", REVERIE_PHASE_FORWARD);
    c->LayerPop();
    c->StepEnd();
  }
  // Step 2's begin came after the window: CUPTI was flushed and
  // disabled, and its markers cost nothing.
  EXPECT_EQ(state_->flushes.load(), 1);
  EXPECT_EQ(state_->disables.load(), 11);
  EXPECT_EQ(state_->pushes.load(), 2);
  EXPECT_EQ(state_->pops.load(), 2);
  ASSERT_EQ(c->Stop(), REVERIE_OK);
  EXPECT_EQ(state_->disables.load(), 11);  // not disabled twice
  EXPECT_EQ(state_->forced_flushes.load(), 1);  // but still flushed
  Trace t = Read();
  ASSERT_EQ(t.events().steps_size(), 1);
  EXPECT_EQ(t.events().steps(0).index(), 1);
  EXPECT_EQ(t.events().ranges_size(), 1);
}

// CUDA 13's order inside a thread's buffer: each kernel's record before its
// launch's. The buffer reaches the writer only at Stop, after the window
// closed (what the ResNet-50 and CUDA MLP runs on an H100 did, issue 32):
// the kernels of the window's launches must all be in the trace.
TEST_F(CollectorRuntimeTest, WindowKeepsKernelsWhoseRecordsPrecedeTheirLaunch) {
  auto c = MakeCollector("kernel_first");
  ASSERT_EQ(c->Configure("REVERIE_STEPS", "1"), REVERIE_OK);
  ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
  c->StepBegin();
  const uint64_t t0 = MonotonicNowNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  c->StepEnd();
  const uint64_t t1 = MonotonicNowNs();
  c->StepBegin();  // after the window: CUPTI flushed and disabled
  fake::FakeState* s = state_.get();
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  s->request(&buffer, &size, &max_records);
  ASSERT_NE(buffer, nullptr);
  fake::RecordWriter w(buffer, size);
  for (uint32_t corr = 10; corr < 14; ++corr) {
    const bool inside = corr < 13;  // launch 13 came after the window
    auto k = Zeroed<CUpti_ActivityKernel10>();
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = t1 + 1000 * corr;  // the GPU tail runs after the step
    k.end = k.start + 500;
    k.correlationId = corr;
    k.streamId = 7;
    k.name = "fake_kernel";
    ASSERT_TRUE(w.Add(k));
    auto api = Zeroed<CUpti_ActivityAPI>();
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = 211;
    api.start = inside ? t0 + 100 * corr : t1 + 100 * corr;
    api.end = api.start + 50;
    api.processId = static_cast<uint32_t>(::getpid());
    api.threadId = 5;
    api.correlationId = corr;
    ASSERT_TRUE(w.Add(api));
  }
  {
    std::lock_guard<std::mutex> lock(s->held_mu);
    s->held.emplace_back(buffer, w.used());  // completed by Stop's forced flush
  }
  ASSERT_EQ(c->Stop(), REVERIE_OK);
  Trace t = Read();
  EXPECT_EQ(t.events().api_calls_size(), 3);
  ASSERT_EQ(t.events().gpu_activities_size(), 3);
  for (const proto::GpuActivity& g : t.events().gpu_activities()) EXPECT_LT(g.correlation_id(), 13u);
  EXPECT_EQ(t.GetCounter(TraceCounter::records_outside_window), 2);
  EXPECT_EQ(t.GetCounter(TraceCounter::window_hold_overflow), 0);
}

// A fake CUDA driver: one H100 when initialized.
bool g_driver_initialized = true;
CUresult FakeDeviceGetCount(int* n) {
  if (!g_driver_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult FakeDeviceGet(CUdevice* d, int ordinal) {
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult FakeDeviceGetName(char* name, int len, CUdevice) {
  std::snprintf(name, static_cast<size_t>(len), "%s", "NVIDIA H100 80GB HBM3");
  return CUDA_SUCCESS;
}
CUresult FakeDeviceTotalMem(size_t* bytes, CUdevice) {
  *bytes = size_t{85017493504};
  return CUDA_SUCCESS;
}
CUresult FakeDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
DriverApi FakeDriver() {
  DriverApi d;
  d.DeviceGetCount = &FakeDeviceGetCount;
  d.DeviceGet = &FakeDeviceGet;
  d.DeviceGetName = &FakeDeviceGetName;
  d.DeviceTotalMem = &FakeDeviceTotalMem;
  d.DeviceGetAttribute = &FakeDeviceGetAttribute;
  return d;
}

// reverie_torch starts the collector after PyTorch created its context, so
// CUPTI sends no DEVICE record: the H100 traces of issue 32 said "gpu
// unknown". The driver's properties must be in the header anyway, and a
// DEVICE record that does come later refines them without erasing what it
// lacks (memory clock, bus width).
TEST_F(CollectorRuntimeTest, DevicePropertiesComeFromTheDriverWhenCuptiSendsNone) {
  const DriverApi driver = FakeDriver();
  g_driver_initialized = true;
  auto c = std::make_unique<Collector>(&api_, &driver);
  path_ = TempTracePath("driver_devices");
  ASSERT_EQ(c->Configure("REVERIE_OUTPUT", path_.c_str()), REVERIE_OK);
  ASSERT_EQ(c->Configure("REVERIE_BUFFER_KB", "64"), REVERIE_OK);
  ASSERT_EQ(c->Configure("REVERIE_BUFFER_MB", "1"), REVERIE_OK);
  ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  state_->request(&buffer, &size, &max_records);
  ASSERT_NE(buffer, nullptr);
  fake::RecordWriter w(buffer, size);
  auto d = Zeroed<CUpti_ActivityDevice5>();
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.numMultiprocessors = 132;
  d.globalMemoryBandwidth = 3'352'320'000;  // KB/s
  ASSERT_TRUE(w.Add(d));
  state_->complete(nullptr, 0, buffer, size, w.used());
  ASSERT_EQ(c->Stop(), REVERIE_OK);
  Trace t = Read();
  ASSERT_EQ(t.header().devices_size(), 1);
  const proto::Device& g = t.header().devices(0);
  EXPECT_EQ(g.id(), 0);
  EXPECT_EQ(g.name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.vendor(), "nvidia");
  EXPECT_EQ(g.sm_count(), 132);
  EXPECT_EQ(g.compute_major(), 9);
  EXPECT_EQ(g.compute_minor(), 0);
  EXPECT_EQ(g.total_memory_bytes(), int64_t{85017493504});
  EXPECT_EQ(g.sm_clock_khz(), 1980000);
  EXPECT_EQ(g.memory_clock_khz(), 2619000);
  EXPECT_EQ(g.memory_bus_width_bits(), 5120);
  EXPECT_DOUBLE_EQ(g.memory_bandwidth_gbps(), 3352.32);  // CUPTI's, same as 2 x clock x width
  EXPECT_EQ(g.max_threads_per_sm(), 2048);
  EXPECT_EQ(g.registers_per_sm(), 65536);
  EXPECT_EQ(g.shared_memory_per_sm_bytes(), 233472);
  EXPECT_EQ(g.warp_size(), 32);
  EXPECT_EQ(t.header().metadata().at("collector.device_properties"), "driver");
}

// Before cuInit the queries fail: nothing is recorded (CUPTI's DEVICE
// records come with the context), and injection never queries at all.
TEST_F(CollectorRuntimeTest, UninitializedDriverRecordsNoDevice) {
  const DriverApi driver = FakeDriver();
  g_driver_initialized = false;
  auto c = std::make_unique<Collector>(&api_, &driver);
  path_ = TempTracePath("driver_uninitialized");
  ASSERT_EQ(c->Configure("REVERIE_OUTPUT", path_.c_str()), REVERIE_OK);
  ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
  ASSERT_EQ(c->Stop(), REVERIE_OK);
  g_driver_initialized = true;
  Trace t = Read();
  EXPECT_EQ(t.header().devices_size(), 0);
  EXPECT_FALSE(t.header().metadata().contains("collector.device_properties"));
}

// REVERIE_API_FILTER: by default the queries are dropped when decoded (and
// counted); `cupti` asks CUPTI not to record them at all (no per-call cost,
// no count); `none` keeps everything. The header says which.
TEST_F(CollectorRuntimeTest, ApiFilterModesAreAppliedAndNamedInTheHeader) {
  struct Mode {
    const char* value;
    int runtime_disabled;
    const char* metadata;
  };
  size_t driver_n = 0;
  FilteredApis(kDriverDomain, &driver_n);
  for (const Mode& m : {Mode{nullptr, 0, "queries (dropped when decoded"},
                        Mode{"cupti", 6, "queries (not recorded by CUPTI"},
                        Mode{"none", 0, "none"}}) {
    state_ = std::make_unique<fake::FakeState>();
    fake::State() = state_.get();
    auto c = MakeCollector("api_filter");
    if (m.value != nullptr) {
      ASSERT_EQ(c->Configure("REVERIE_API_FILTER", m.value), REVERIE_OK);
    }
    ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
    EXPECT_EQ(state_->runtime_apis_disabled.load(), m.runtime_disabled);
    EXPECT_EQ(state_->driver_apis_disabled.load(),
              m.runtime_disabled > 0 ? static_cast<int>(driver_n) : 0);
    ASSERT_EQ(c->Stop(), REVERIE_OK);
    const std::string got = Read().header().metadata().at("collector.api_filter");
    EXPECT_EQ(got.rfind(m.metadata, 0), 0u) << got;
  }
}

TEST_F(CollectorRuntimeTest, ProfilerStopCallbackFlushesToDisk) {
  auto c = MakeCollector("profilerstop");
  ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
  ProduceLaunches(1, 4, /*hold=*/true);
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_ENTER;
  state_->callback(state_->userdata, CUPTI_CB_DOMAIN_RUNTIME_API,
                   CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, &data);
  EXPECT_EQ(state_->flushes.load(), 1);
  // The flush returned only after the writer wrote the records: the file on
  // disk (while still collecting) already has them.
  EXPECT_EQ(Read(/*partial=*/true).events().gpu_activities_size(), 4);
  data.callbackSite = CUPTI_API_ENTER;
  state_->callback(state_->userdata, CUPTI_CB_DOMAIN_RUNTIME_API,
                   CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, &data);
  EXPECT_EQ(state_->forced_flushes.load(), 1);
  ASSERT_EQ(c->Stop(), REVERIE_OK);
}

TEST_F(CollectorRuntimeTest, NvtxCallbacksBecomeAnnotationRanges) {
  auto c = MakeCollector("nvtx");
  ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
  nvtxRangePushA_params push{"aten::addmm"};
  CUpti_NvtxData data{"nvtxRangePushA", &push, nullptr};
  state_->callback(state_->userdata, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &data);
  nvtxRangePop_params pop{};
  CUpti_NvtxData pop_data{"nvtxRangePop", &pop, nullptr};
  state_->callback(state_->userdata, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &pop_data);
  nvtxRangeStartA_params start{"epoch"};
  const nvtxRangeId_t id = 42;
  CUpti_NvtxData start_data{"nvtxRangeStartA", &start, &id};
  state_->callback(state_->userdata, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangeStartA,
                   &start_data);
  nvtxRangeEnd_params end{42};
  CUpti_NvtxData end_data{"nvtxRangeEnd", &end, nullptr};
  state_->callback(state_->userdata, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangeEnd, &end_data);
  ASSERT_EQ(c->Stop(), REVERIE_OK);
  Trace t = Read();
  ASSERT_EQ(t.events().ranges_size(), 2);
  EXPECT_EQ(Str(t, t.events().ranges(0).name_sid()), "aten::addmm");
  EXPECT_EQ(t.events().ranges(0).kind(), proto::Range::USER_ANNOTATION);
  EXPECT_NE(t.events().ranges(0).external_id(), 0u);
  EXPECT_EQ(Str(t, t.events().ranges(1).name_sid()), "epoch");
  EXPECT_EQ(state_->pushes.load(), 1);
  EXPECT_EQ(state_->pops.load(), 1);
}

TEST_F(CollectorRuntimeTest, ForkedChildSeesNoSession) {
  auto c = MakeCollector("fork");
  ASSERT_EQ(c->Start(Collector::Mode::kApi), REVERIE_OK);
  const pid_t child = ::fork();
  if (child == 0) {
    // In the child the writer thread does not exist: everything must be a
    // no-op, including Stop (which would otherwise wait for it).
    const bool ok = !c->IsCollecting() && c->Stop() == REVERIE_NOT_COLLECTING &&
                    c->Flush() == REVERIE_NOT_COLLECTING;
    c->LayerPush("child", 1);
    c->LayerPop();
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(c->IsCollecting());
  ASSERT_EQ(c->Stop(), REVERIE_OK);
}

TEST_F(CollectorRuntimeTest, ConfigureRejectsBadValuesAndDisableIsSilent) {
  auto c = MakeCollector("disabled");
  EXPECT_EQ(c->Configure("REVERIE_STEPS", "many"), REVERIE_BAD_ARGUMENT);
  EXPECT_EQ(c->Configure("REVERIE_NOPE", "1"), REVERIE_BAD_ARGUMENT);
  EXPECT_EQ(c->Configure(nullptr, "1"), REVERIE_BAD_ARGUMENT);
  EXPECT_EQ(c->Configure("REVERIE_DISABLE", "1"), REVERIE_OK);
  int result = -1;
  const std::string err = CaptureStderr([&] { result = c->Start(Collector::Mode::kApi); });
  EXPECT_EQ(result, REVERIE_NOT_COLLECTING);
  EXPECT_EQ(err, "");
  EXPECT_EQ(state_->subscribes.load(), 0);
}

}  // namespace
}  // namespace reverie::collector
