// The collector's output from a real GPU (tests/data/gpu/README.md): two
// traces the collector wrote on an H100 in issue 32, before the fixes of
// the `collector` branch. Each test reads its file with reverie's .pb reader
// and checks what a collector trace must hold (steps, API calls with
// names and correlation ids, kernels with names and launch geometry, layers
// with their phases, parameters, the device, no data-loss counter), and
// states exactly what these two files lack because of the defects found on
// that run, so that a re-recorded file (the fixes, on the next GPU draw)
// must update these numbers on purpose. Runs without a GPU or CUDA.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "proto/trace.h"
#include "proto/trace_counters.h"
#include "proto/trace_io.h"

namespace reverie {
namespace {

std::string DataPath(const char* name) {
  return std::string(REVERIE_SOURCE_DIR) + "/tests/data/gpu/" + name;
}

Trace Load(const char* name) {
  absl::StatusOr<Trace> t = ReadTrace(DataPath(name));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? std::move(*t) : Trace();
}

bool IsLaunch(std::string_view name) {
  return name == "cudaLaunchKernel" || name == "cudaLaunchKernelExC" || name == "cuLaunchKernel" ||
         name == "cuLaunchKernelEx";
}

// What every collector trace holds, whatever its content.
void ExpectWellFormed(const Trace& t) {
  const proto::TraceChunk& ev = t.events();
  EXPECT_EQ(t.header().producer(), "reverie-collector 0.1");
  EXPECT_EQ(t.header().metadata().at("collector.cupti"), "active");
  std::set<int64_t> threads;
  for (const proto::Thread& th : ev.threads()) {
    threads.insert(th.tid());
    EXPECT_FALSE(th.name().empty());
  }
  std::set<uint64_t> correlation_ids;
  for (const proto::ApiCall& a : ev.api_calls()) {
    EXPECT_FALSE(t.String(a.name_sid()).empty());
    EXPECT_NE(a.correlation_id(), 0u);
    EXPECT_LE(a.start_ns(), a.end_ns());
    EXPECT_TRUE(threads.count(a.tid())) << "thread " << a.tid() << " has no Thread message";
    EXPECT_TRUE(correlation_ids.insert(a.correlation_id()).second) << "duplicate correlation id";
  }
  for (const proto::GpuActivity& g : ev.gpu_activities()) {
    EXPECT_FALSE(t.String(g.name_sid()).empty());
    EXPECT_NE(g.correlation_id(), 0u);
    EXPECT_LT(g.start_ns(), g.end_ns());
    if (g.kind() == proto::GpuActivity::KERNEL) {
      EXPECT_GT(g.grid_x(), 0);
      EXPECT_GT(g.block_x(), 0);
      EXPECT_GT(g.registers_per_thread(), 0);
    } else {
      EXPECT_GT(g.bytes(), 0);
    }
  }
  for (const proto::Sync& s : ev.syncs()) EXPECT_TRUE(threads.count(s.tid())) << "sync without thread";
  for (const proto::Counter& c : ev.counters()) {
    const CounterSpec* spec = FindTraceCounter(c.name());
    ASSERT_NE(spec, nullptr) << c.name();
    EXPECT_NE(spec->severity, CounterSeverity::kDataLoss) << c.name() << " = " << c.value();
  }
  for (int i = 0; i < ev.steps_size(); ++i) {
    const proto::Step& it = ev.steps(i);
    // The GPU data was recorded before the collector named steps "Step#N".
    const std::string name(t.String(it.name_sid()));
    const std::string index = std::to_string(it.index());
    EXPECT_TRUE(name == "Step#" + index || name == "Iteration#" + index) << name;
    if (i > 0) {
      EXPECT_EQ(it.index(), ev.steps(i - 1).index() + 1);
    }
  }
}

// The collector's step count; GPU data recorded before the rename says
// "collector.iterations".
std::string StepsMetadata(const Trace& t) {
  const auto& m = t.header().metadata();
  if (m.count("collector.steps") != 0) return m.at("collector.steps");
  return m.count("collector.iterations") != 0 ? m.at("collector.iterations") : "";
}

// Launch calls, and how many of them have their kernel in the trace.
struct Launches {
  int calls = 0;
  int with_kernel = 0;
  std::map<int64_t, int> calls_by_thread, with_kernel_by_thread;
};
Launches CountLaunches(const Trace& t) {
  std::set<uint64_t> kernels;
  for (const proto::GpuActivity& g : t.events().gpu_activities()) {
    if (g.kind() == proto::GpuActivity::KERNEL) kernels.insert(g.correlation_id());
  }
  Launches l;
  for (const proto::ApiCall& a : t.events().api_calls()) {
    if (!IsLaunch(t.String(a.name_sid()))) continue;
    ++l.calls;
    ++l.calls_by_thread[a.tid()];
    if (kernels.count(a.correlation_id())) {
      ++l.with_kernel;
      ++l.with_kernel_by_thread[a.tid()];
    }
  }
  return l;
}

// A small MLP (Linear 4096x4096, ReLU, Linear 4096x4096, ReLU, Linear
// 4096x10; batch 512, FP32, Adam) under reverie_torch.profile(warmup=1,
// steps=5) after 3 bare steps.
TEST(GpuDataTest, MlpTwinUnderReverieTorch) {
  const Trace t = Load("mlp_twin.pb");
  ExpectWellFormed(t);
  const proto::TraceChunk& ev = t.events();
  EXPECT_EQ(t.header().framework(), "pytorch 2.11.0+cu130");
  EXPECT_EQ(t.header().metadata().at("collector.warmup"), "1");
  EXPECT_EQ(StepsMetadata(t), "5");

  ASSERT_EQ(ev.steps_size(), 5);
  EXPECT_EQ(ev.steps(0).index(), 1);  // step 0 was the warmup
  for (const proto::Step& it : ev.steps()) {
    EXPECT_GT(it.end_ns() - it.start_ns(), 3'000'000);
    EXPECT_LT(it.end_ns() - it.start_ns(), 3'400'000);
  }
  std::map<std::string, int64_t> tid;
  for (const proto::Thread& th : ev.threads()) tid[th.name()] = th.tid();
  ASSERT_EQ(tid.size(), 2u);
  ASSERT_TRUE(tid.count("python3") && tid.count("pt_autograd_0"));

  // Layers: the module paths, forward on the main thread and backward on
  // the autograd thread, every step; the optimizer step as an UPDATE
  // annotation.
  std::map<std::pair<std::string, int>, int> layers;
  int update = 0;
  for (const proto::Range& r : ev.ranges()) {
    if (r.kind() == proto::Range::LAYER) {
      ++layers[{std::string(t.String(r.module_path_sid())), r.phase()}];
      EXPECT_EQ(r.tid(), r.phase() == proto::FORWARD ? tid["python3"] : tid["pt_autograd_0"]);
    } else {
      EXPECT_EQ(r.phase(), proto::UPDATE);
      // Defect 3: named before reverie_torch used PyTorch's
      // "Optimizer.step#Adam.step", so facts say "optimizer unknown".
      EXPECT_EQ(t.String(r.name_sid()), "optimizer.step");
      ++update;
    }
  }
  EXPECT_EQ(update, 5);
  ASSERT_EQ(layers.size(), 12u);
  for (const char* path : {"Sequential", "0", "1", "2", "3", "4"}) {
    EXPECT_EQ((layers[{path, proto::FORWARD}]), 5) << path;
    EXPECT_EQ((layers[{path, proto::BACKWARD}]), 5) << path;
  }
  ASSERT_EQ(ev.parameters_size(), 6);
  EXPECT_EQ(t.String(ev.parameters(2).name_sid()), "2.weight");
  EXPECT_EQ(t.String(ev.parameters(2).layer_sid()), "2");
  EXPECT_EQ(ev.parameters(2).bytes(), int64_t{4096} * 4096 * 4);
  EXPECT_EQ(t.String(ev.parameters(2).dtype_sid()), "Float");

  EXPECT_EQ(ev.api_calls_size(), 2540);  // 508 a step, every query included
  ASSERT_EQ(ev.syncs_size(), 5);
  for (const proto::Sync& s : ev.syncs()) EXPECT_EQ(s.kind(), proto::Sync::DEVICE);

  // Defect 1: every kernel launched from the main thread (forward, loss,
  // Adam: 22 a step) was decoded before its launch after the window closed
  // and dropped; only the autograd thread's 13 a step are here.
  const Launches l = CountLaunches(t);
  EXPECT_EQ(l.calls, 175);
  EXPECT_EQ(l.with_kernel, 65);
  EXPECT_EQ(l.calls_by_thread.at(tid["python3"]), 110);
  EXPECT_EQ(l.with_kernel_by_thread.count(tid["python3"]), 0u);
  EXPECT_EQ(l.with_kernel_by_thread.at(tid["pt_autograd_0"]), 65);
  int kernels = 0, memsets = 0;
  for (const proto::GpuActivity& g : ev.gpu_activities()) {
    kernels += g.kind() == proto::GpuActivity::KERNEL;
    memsets += g.kind() == proto::GpuActivity::MEMSET;
  }
  EXPECT_EQ(kernels, 65);
  EXPECT_EQ(memsets, 10);
  // Defect 2: started after PyTorch's context, so no CUPTI DEVICE record.
  EXPECT_EQ(t.header().devices_size(), 0);
  // The loss was silent: no counter said so.
  EXPECT_EQ(t.GetCounter(TraceCounter::records_outside_window), 675);
}

// examples/cuda_mlp under `reverie collect --warmup 2 --steps 3`
// (injection; cuBLAS, two streams ordered by events, Adam).
TEST(GpuDataTest, CudaMlpUnderReverieCollect) {
  const Trace t = Load("cuda_mlp.pb");
  ExpectWellFormed(t);
  const proto::TraceChunk& ev = t.events();
  EXPECT_EQ(t.header().metadata().at("collector.warmup"), "2");
  EXPECT_EQ(StepsMetadata(t), "3");

  // Injected at cuInit: CUPTI's DEVICE record came.
  ASSERT_EQ(t.header().devices_size(), 1);
  const proto::Device& d = t.header().devices(0);
  EXPECT_EQ(d.name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.vendor(), "nvidia");
  EXPECT_EQ(d.sm_count(), 132);
  EXPECT_EQ(d.compute_major(), 9);
  EXPECT_EQ(d.compute_minor(), 0);
  EXPECT_EQ(d.total_memory_bytes(), int64_t{85017493504});
  EXPECT_EQ(d.sm_clock_khz(), 1980000);
  EXPECT_NEAR(d.memory_bandwidth_gbps(), 3352.3, 0.1);

  ASSERT_EQ(ev.steps_size(), 3);
  EXPECT_EQ(ev.steps(0).index(), 2);
  ASSERT_EQ(ev.threads_size(), 1);
  EXPECT_EQ(ev.threads(0).name(), "cuda_mlp");
  EXPECT_EQ(ev.api_calls_size(), 390);

  std::map<std::pair<std::string, int>, int> ranges;
  for (const proto::Range& r : ev.ranges()) ++ranges[{std::string(t.String(r.name_sid())), r.phase()}];
  for (const char* layer : {"fc1", "fc2", "fc3"}) {
    EXPECT_EQ((ranges[{layer, proto::FORWARD}]), 3) << layer;
    EXPECT_EQ((ranges[{layer, proto::BACKWARD}]), 3) << layer;
  }
  EXPECT_EQ((ranges[{"loss", proto::FORWARD}]), 3);
  EXPECT_EQ((ranges[{"data", proto::DATA_LOADING}]), 3);
  EXPECT_EQ((ranges[{"optimizer", proto::UPDATE}]), 3);
  EXPECT_EQ(ev.ranges_size(), 27);
  EXPECT_EQ(ev.parameters_size(), 6);

  // Syncs joined with their thread and, for stream waits, the event record.
  int stream_syncs = 0, waits = 0;
  for (const proto::Sync& s : ev.syncs()) {
    if (s.kind() == proto::Sync::STREAM) ++stream_syncs;
    if (s.kind() != proto::Sync::STREAM_WAIT_EVENT) continue;
    ++waits;
    EXPECT_NE(s.wait_on_stream(), 0);
    EXPECT_NE(s.wait_on_stream(), s.stream());
    EXPECT_NE(s.event_record_correlation_id(), 0u);
  }
  EXPECT_EQ(stream_syncs, 3);
  EXPECT_EQ(waits, 6);

  // Defect 1, both ends of the window. After it closed, every GPU and
  // event record decoded before its call was dropped: of the window's 84
  // launches (28 a step), 9 copies and 3 memsets, one copy is here, and none
  // of its 21 event records. Before any call of the window was decoded,
  // the warmup's last 5 Adam kernels and 14 event records were kept by
  // their GPU time (or for having none): their calls are not in the trace.
  const Launches l = CountLaunches(t);
  EXPECT_EQ(l.calls, 84);
  EXPECT_EQ(l.with_kernel, 0);
  uint64_t first_call = ~uint64_t{0};
  for (const proto::ApiCall& a : ev.api_calls()) first_call = std::min<uint64_t>(first_call, a.correlation_id());
  int warmup_kernels = 0, copies = 0;
  for (const proto::GpuActivity& g : ev.gpu_activities()) {
    if (g.kind() == proto::GpuActivity::KERNEL) {
      EXPECT_LT(g.correlation_id(), first_call);
      EXPECT_NE(t.String(g.name_sid()).find("Adam"), std::string_view::npos);
      ++warmup_kernels;
    } else {
      EXPECT_EQ(g.kind(), proto::GpuActivity::MEMCPY);
      EXPECT_EQ(t.String(g.name_sid()), "Memcpy HtoD (Pinned -> Device)");
      EXPECT_EQ(g.correlation_id(), first_call);
      ++copies;
    }
  }
  EXPECT_EQ(warmup_kernels, 5);
  EXPECT_EQ(copies, 1);
  ASSERT_EQ(ev.event_records_size(), 14);
  for (const proto::EventRecord& e : ev.event_records()) EXPECT_LT(e.correlation_id(), first_call);
  EXPECT_EQ(t.GetCounter(TraceCounter::records_outside_window), 2007);
}

}  // namespace
}  // namespace reverie
