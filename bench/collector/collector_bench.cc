// Collector costs, each next to a baseline measured in the same run:
// - encoding 64K kernel records: hand-written wire encoder (what the .so
//   does) vs libprotobuf (what it avoids linking);
// - decoding CUPTI kernel records (real CUDA 13 structs) into a trace file;
// - one layer marker pair (push + pop) vs the clock read it contains.
// Run: build/release/bench/collector/collector_bench
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "collector/chunk_writer.h"
#include "collector/collector_runtime.h"
#include "collector/cupti_decoder.h"
#include "collector/trace_sink.h"
#include "proto/trace.pb.h"

namespace reverie::collector {
namespace {

constexpr int kRecords = 65536;

GpuActivityRecord Kernel(int i) {
  GpuActivityRecord r;
  r.kind = GpuKind::kKernel;
  r.name_sid = static_cast<uint32_t>(i % 300 + 1);
  r.device = 0;
  r.stream = 7;
  r.start_ns = 1'700'000'000'000'000'000 + int64_t{i} * 5000;
  r.end_ns = r.start_ns + 3000;
  r.correlation_id = static_cast<uint64_t>(i + 1);
  r.external_id = static_cast<uint64_t>(i / 10 + 1);
  r.context = 1;
  r.grid_x = 128;
  r.grid_y = r.grid_z = 1;
  r.block_x = 256;
  r.block_y = r.block_z = 1;
  r.registers_per_thread = 32;
  r.shared_memory_bytes = 4096;
  return r;
}

void BM_EncodeKernels_Hand(benchmark::State& state) {
  WireBuffer chunk;
  for (auto _ : state) {
    chunk.clear();
    for (int i = 0; i < kRecords; ++i) {
      const size_t at = chunk.BeginMessage(kChunkGpuActivities);
      EncodeGpuActivity(Kernel(i), &chunk);
      chunk.EndMessage(at);
    }
    benchmark::DoNotOptimize(chunk.data());
  }
  state.SetItemsProcessed(state.iterations() * kRecords);
  state.counters["bytes_per_record"] = static_cast<double>(chunk.size()) / kRecords;
}
BENCHMARK(BM_EncodeKernels_Hand)->Unit(benchmark::kMillisecond);

void BM_EncodeKernels_Protobuf(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    proto::TraceChunk chunk;
    for (int i = 0; i < kRecords; ++i) {
      const GpuActivityRecord r = Kernel(i);
      proto::GpuActivity* g = chunk.add_gpu_activities();
      g->set_kind(proto::GpuActivity::KERNEL);
      g->set_name_sid(r.name_sid);
      g->set_device(r.device);
      g->set_stream(r.stream);
      g->set_start_ns(r.start_ns);
      g->set_end_ns(r.end_ns);
      g->set_correlation_id(r.correlation_id);
      g->set_external_id(r.external_id);
      g->set_context(r.context);
      g->set_grid_x(r.grid_x);
      g->set_grid_y(r.grid_y);
      g->set_grid_z(r.grid_z);
      g->set_block_x(r.block_x);
      g->set_block_y(r.block_y);
      g->set_block_z(r.block_z);
      g->set_registers_per_thread(r.registers_per_thread);
      g->set_shared_memory_bytes(r.shared_memory_bytes);
    }
    out.clear();
    chunk.SerializeToString(&out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kRecords);
  state.counters["bytes_per_record"] = static_cast<double>(out.size()) / kRecords;
}
BENCHMARK(BM_EncodeKernels_Protobuf)->Unit(benchmark::kMillisecond);

std::string NoThreadName(int64_t, int64_t) { return ""; }

Collector*& collector_for_exit() {
  static Collector* c = nullptr;
  return c;
}

void BM_DecodeCuptiKernelsToFile(benchmark::State& state) {
  std::vector<CUpti_ActivityKernel10> records(kRecords);
  const char* names[] = {"_Z6kernelILi1EEvPf", "_Z6kernelILi2EEvPf", "volta_sgemm_128x64_nn"};
  for (int i = 0; i < kRecords; ++i) {
    CUpti_ActivityKernel10& k = records[i];
    std::memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 1000 + uint64_t(i) * 10;
    k.end = k.start + 5;
    k.correlationId = static_cast<uint32_t>(i + 1);
    k.streamId = 7;
    k.gridX = 64;
    k.blockX = 256;
    k.name = names[i % 3];
  }
  const std::string path = "/tmp/collector_bench." + std::to_string(::getpid()) + ".pb";
  for (auto _ : state) {
    ChunkWriter writer;
    StepWindow window(0, 0);
    std::string error;
    writer.Open(path, HeaderInfo{}, {}, &error);
    TraceSink sink(&writer, &window, HeaderInfo{}, &NoThreadName);
    CuptiDecoder decoder(&sink, nullptr, nullptr, 1);
    for (const auto& k : records) decoder.Decode(reinterpret_cast<const CUpti_Activity*>(&k));
    writer.Close();
  }
  ::unlink(path.c_str());
  state.SetItemsProcessed(state.iterations() * kRecords);
}
BENCHMARK(BM_DecodeCuptiKernelsToFile)->Unit(benchmark::kMillisecond);

void BM_ClockRead_Baseline(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(MonotonicNowNs());
}
BENCHMARK(BM_ClockRead_Baseline);

// Host-only when no GPU driver is present (CUPTI's external-id push/pop is
// then skipped); on a GPU machine the same benchmark includes them.
std::string MarkerTracePath() {
  return "/tmp/collector_bench_markers." + std::to_string(::getpid()) + ".pb";
}

void BM_LayerPushPop(benchmark::State& state) {
  static Collector* collector = [] {
    auto* c = new Collector();
    c->Configure("REVERIE_OUTPUT", MarkerTracePath().c_str());
    c->Start(Collector::Mode::kApi);
    std::atexit([] {
      collector_for_exit()->Stop();
      ::unlink(MarkerTracePath().c_str());
    });
    return c;
  }();
  collector_for_exit() = collector;
  for (auto _ : state) {
    collector->LayerPush("layer1.0.conv1", 1);
    collector->LayerPop();
  }
  state.counters["collecting"] = collector->IsCollecting();
}
BENCHMARK(BM_LayerPushPop);

}  // namespace
}  // namespace reverie::collector

BENCHMARK_MAIN();
