#include "transforms/gpu_scaling.h"

#include <cmath>

#include "gtest/gtest.h"

namespace reverie::transforms {
namespace {

using depgraph::Graph;
using depgraph::KernelGeometry;
using depgraph::ResourceId;
using depgraph::TaskId;
using depgraph::TaskKind;
using depgraph::TaskSpec;

// Volta-like occupancy limits; speeds vary per test.
GpuSpec Volta(double bandwidth = 900, double peak = 15.7, int sms = 80) {
  GpuSpec s;
  s.name = "volta-like";
  s.sm_count = sms;
  s.max_threads_per_sm = 2048;
  s.max_blocks_per_sm = 32;
  s.registers_per_sm = 65536;
  s.shared_memory_per_sm_bytes = 96 * 1024;
  s.clock_mhz = 1530;
  s.memory_bandwidth_gbs = bandwidth;
  s.peak_tflops = peak;
  return s;
}

KernelGeometry Geo(int64_t blocks, int32_t threads, int32_t regs, int64_t smem = 0) {
  return KernelGeometry{blocks, threads, regs, smem};
}

TEST(BlocksPerSmTest, TakesTheTightestOccupancyLimit) {
  const GpuSpec v = Volta();
  EXPECT_EQ(BlocksPerSm(v, Geo(1000, 256, 32)), 8);   // threads: 64 warps / 8; registers: 8
  EXPECT_EQ(BlocksPerSm(v, Geo(1000, 256, 64)), 4);   // registers: 65536 / (2048 * 8)
  EXPECT_EQ(BlocksPerSm(v, Geo(1000, 128, 16, 48 * 1024)), 2);  // shared memory
  EXPECT_EQ(BlocksPerSm(v, Geo(1000, 32, 0)), 32);    // block cap, registers unknown
  // 33 registers round up to 1280 a warp (256-register units): 65536 / (1280 * 8) = 6.
  EXPECT_EQ(BlocksPerSm(v, Geo(1000, 256, 33)), 6);
  // Does not fit by these limits, but it ran: at least one block.
  EXPECT_EQ(BlocksPerSm(v, Geo(1000, 1024, 255)), 1);
  EXPECT_EQ(BlocksPerSm(v, KernelGeometry{}), 1);
  GpuSpec turing = v;
  turing.max_threads_per_sm = 1024;
  turing.max_blocks_per_sm = 16;
  EXPECT_EQ(BlocksPerSm(turing, Geo(1000, 256, 32)), 4);
}

TEST(WaveScaleFactorTest, SameGpuIsExactlyOne) {
  const GpuSpec v = Volta();
  for (double gamma : {0.0, 0.25, 0.5, 1.0}) {
    for (const KernelGeometry& g : {Geo(10, 256, 32), Geo(100000, 256, 32), Geo(5000, 128, 64, 40000),
                                    KernelGeometry{}}) {
      EXPECT_DOUBLE_EQ(WaveScaleFactor(g, v, v, gamma), 1.0) << gamma << " " << g.blocks;
    }
  }
}

TEST(WaveScaleFactorTest, MemoryBoundManyWavesFollowBandwidth) {
  // Equal occupancy, twice the bandwidth: gamma 1 halves the time, whatever the math.
  EXPECT_DOUBLE_EQ(WaveScaleFactor(Geo(640 * 100, 256, 32), Volta(900, 15.7), Volta(1800, 40), 1.0), 0.5);
}

TEST(WaveScaleFactorTest, ComputeBoundFollowsWavesAndPerSmThroughput) {
  // Twice the SMs at the same per-SM peak: half as many waves.
  const GpuSpec o = Volta(900, 10, 80);
  const GpuSpec d = Volta(900, 20, 160);
  EXPECT_DOUBLE_EQ(WaveScaleFactor(Geo(640 * 100, 256, 32), o, d, 0.0), 0.5);
  // Same SMs, twice the per-SM peak (a newer SM): half the time per wave.
  EXPECT_DOUBLE_EQ(WaveScaleFactor(Geo(640 * 100, 256, 32), o, Volta(900, 20, 80), 0.0), 0.5);
  // Wave quantisation: 641 blocks are 2 waves on 640 slots, 1 wave on 1280.
  EXPECT_DOUBLE_EQ(WaveScaleFactor(Geo(1281, 256, 32), o, d, 0.0), 2.0 / 3.0);
}

TEST(WaveScaleFactorTest, WithoutPeaksTheClockIsTheComputeTerm) {
  GpuSpec o = Volta(900, 0);
  GpuSpec d = Volta(900, 0);
  d.clock_mhz = o.clock_mhz * 2;
  EXPECT_DOUBLE_EQ(WaveScaleFactor(Geo(640 * 100, 256, 32), o, d, 0.0), 0.5);
}

TEST(WaveScaleFactorTest, SingleWaveKernelsIgnoreBandwidth) {
  const GpuSpec o = Volta(900, 10);
  const GpuSpec d = Volta(3600, 20);
  EXPECT_DOUBLE_EQ(WaveScaleFactor(Geo(50, 256, 32), o, d, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(WaveScaleFactor(Geo(50, 256, 32), o, d, 0.0), 0.5);
  // 100 blocks on 80 SMs are 2 per SM; on 160 SMs 1 per SM.
  EXPECT_DOUBLE_EQ(WaveScaleFactor(Geo(100, 256, 32), Volta(900, 10, 80), Volta(900, 20, 160), 0.0),
                   0.5);
}

TEST(WaveScaleFactorTest, UnknownGeometryUsesWholeGpuRatios) {
  // gamma 0.5: sqrt(bandwidth ratio) * sqrt(peak ratio).
  EXPECT_NEAR(WaveScaleFactor(KernelGeometry{}, Volta(900, 10), Volta(3600, 40), 0.5), 0.25, 1e-12);
}

class RetargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ResourceId s = g_.AddResource({depgraph::ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
    TaskSpec k{
        .kind = TaskKind::kKernel, .name = "big", .resource = s, .duration_ns = 1000,
        .geometry = Geo(640 * 100, 256, 32)};
    big_ = g_.AppendTask(k);
    k.name = "small";
    k.geometry = Geo(10, 64, 16);
    small_ = g_.AppendTask(k);
    k.name = "nogeo";
    k.geometry = KernelGeometry{};
    nogeo_ = g_.AppendTask(k);
    TaskSpec c = k;
    c.kind = TaskKind::kMemcpy;
    c.name = "copy";
    copy_ = g_.AppendTask(c);
  }
  Graph g_;
  TaskId big_, small_, nogeo_, copy_;
};

TEST_F(RetargetTest, ScalesKernelsOnlyAndCounts) {
  const Selection all = Selection::FromSorted({big_, small_, nogeo_, copy_});
  absl::StatusOr<RetargetStats> st = RetargetKernels(g_, all, Volta(900, 10), Volta(1800, 20), 1.0);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->kernels, 3);
  EXPECT_EQ(st->unknown_geometry, 1);
  EXPECT_EQ(st->single_wave, 1);
  EXPECT_EQ(st->skipped, 1);
  EXPECT_EQ(g_.duration_ns(big_), 500);
  EXPECT_EQ(g_.duration_ns(small_), 1000);  // latency-bound at gamma 1
  EXPECT_EQ(g_.duration_ns(nogeo_), 500);
  EXPECT_EQ(g_.duration_ns(copy_), 1000);
  EXPECT_EQ(st->before_ns, 3000);
  EXPECT_EQ(st->after_ns, 2000);
}

TEST_F(RetargetTest, BadArgumentsChangeNothing) {
  const Selection all = Selection::FromSorted({big_, small_, nogeo_, copy_});
  absl::StatusOr<RetargetStats> st = RetargetKernels(g_, all, Volta(), Volta(), 1.5);
  EXPECT_EQ(st.status().code(), absl::StatusCode::kInvalidArgument);
  GpuSpec no_bw = Volta();
  no_bw.name = "X1";
  no_bw.memory_bandwidth_gbs = 0;
  st = RetargetKernels(g_, all, Volta(), no_bw, 1.0);
  EXPECT_EQ(st.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(st.status().message()).find("'X1'"), std::string::npos) << st.status();
  GpuSpec no_speed = Volta(900, 0);
  no_speed.clock_mhz = 0;
  EXPECT_FALSE(ValidateGpuSpec(no_speed).ok());
  EXPECT_EQ(g_.duration_ns(big_), 1000);
  EXPECT_EQ(g_.duration_ns(nogeo_), 1000);
}

}  // namespace
}  // namespace reverie::transforms
