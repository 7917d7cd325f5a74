#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hardware/gpu_spec.h"

namespace reverie::hardware {
namespace {

using ::testing::HasSubstr;

TEST(GpuTableTest, EveryRowIsComplete) {
  std::set<std::string> keys;
  for (const GpuSpec& g : GpuTable()) {
    SCOPED_TRACE(std::string(g.key));
    EXPECT_TRUE(keys.insert(std::string(g.key)).second) << "duplicate key";
    EXPECT_FALSE(g.name.empty());
    EXPECT_FALSE(g.arch.empty());
    EXPECT_FALSE(g.source.empty()) << "every row names its public source";
    EXPECT_FALSE(g.match[0].empty());
    EXPECT_GT(g.sm_count, 0);
    EXPECT_GT(g.boost_clock_mhz, 0);
    EXPECT_GT(g.memory_bandwidth_gbs, 0);
    EXPECT_GT(g.memory_gb, 0);
    EXPECT_GT(g.cc_major, 0);
    EXPECT_GT(HostLinkGbs(g), 0);
    EXPECT_GT(g.vector_tflops[static_cast<int>(Math::kFp32)], 0);
    EXPECT_GT(g.occupancy.max_threads_per_sm, 0);
    EXPECT_GT(g.occupancy.shared_memory_per_sm_kb, 0);
    EXPECT_EQ(g.scaleup_gbs > 0, !g.scaleup.empty());
    for (int m = 0; m < kMathCount; ++m) {
      // Tensor cores are never slower than the CUDA cores on the same math.
      if (g.matrix_tflops[m] > 0 && g.vector_tflops[m] > 0) {
        EXPECT_GE(g.matrix_tflops[m], g.vector_tflops[m]) << MathName(static_cast<Math>(m));
      }
    }
    // fp32 on CUDA cores = SMs x 128 lanes (64 before Ampere GA10x / Hopper
    // doubled them; 64 on AMD CUs, packed) x 2 x clock, within 15%: a typo
    // in a peak or a clock shows here.
    const double lanes_fp32 = g.vector_tflops[1] * 1e6 / (2.0 * g.sm_count * g.boost_clock_mhz);
    EXPECT_TRUE(std::abs(lanes_fp32 - 64) < 10 || std::abs(lanes_fp32 - 128) < 19)
        << "fp32 lanes per SM " << lanes_fp32;
  }
  EXPECT_GE(GpuTable().size(), 25u);
}

TEST(GpuTableTest, TheIssueListIsCovered) {
  for (const char* key : {"V100-SXM2", "V100-PCIe", "T4", "A10", "A100-SXM4-40GB", "A100-SXM4-80GB",
                          "A100-PCIe-40GB", "A100-PCIe-80GB", "L4", "L40S", "H100-PCIe", "H100-SXM",
                          "H200", "B200", "RTX2080Ti", "RTX3080", "RTX3090", "RTX4090", "GP100",
                          "MI250X", "MI300X"}) {
    EXPECT_NE(FindGpu(key), nullptr) << key;
  }
  EXPECT_EQ(FindGpu("h100-sxm"), FindGpu("H100-SXM"));
  EXPECT_EQ(FindGpu("no such gpu"), nullptr);
  EXPECT_THAT(GpuKeys(), HasSubstr("MI300X"));
}

TEST(GpuTableTest, PcieBandwidthFromGenerationAndLanes) {
  EXPECT_NEAR(PcieGbs(3, 16), 15.75, 0.01);
  EXPECT_NEAR(PcieGbs(4, 16), 31.51, 0.01);
  EXPECT_NEAR(PcieGbs(5, 16), 63.02, 0.01);
  EXPECT_NEAR(PcieGbs(4, 8), 15.75, 0.01);
  EXPECT_NEAR(PcieGbs(2, 16), 8.0, 0.01);
  EXPECT_EQ(PcieGbs(0, 16), 0);
  EXPECT_NEAR(HostLinkGbs(*FindGpu("MI300X")), 63.02, 0.01);
  EXPECT_NEAR(HostLinkGbs(*FindGpu("V100-SXM2")), 15.75, 0.01);
}

TEST(GpuTableTest, MathFallsBackToWhatThePartRuns) {
  const GpuSpec& v100 = *FindGpu("V100-SXM2");
  bool matrix = true;
  EXPECT_EQ(EffectiveMath(v100, Math::kFp16, &matrix), Math::kFp16);
  EXPECT_TRUE(matrix);
  matrix = true;
  EXPECT_EQ(EffectiveMath(v100, Math::kBf16, &matrix), Math::kFp32);  // no bf16 units
  EXPECT_FALSE(matrix);
  matrix = true;
  EXPECT_EQ(EffectiveMath(v100, Math::kTf32, &matrix), Math::kFp32);
  EXPECT_FALSE(matrix);
  const GpuSpec& a100 = *FindGpu("A100-SXM4-80GB");
  matrix = true;
  EXPECT_EQ(EffectiveMath(a100, Math::kFp8, &matrix), Math::kBf16);
  EXPECT_TRUE(matrix);
  matrix = true;
  EXPECT_EQ(EffectiveMath(a100, Math::kFp32, &matrix), Math::kFp32);  // no fp32 tensor cores
  EXPECT_FALSE(matrix);
  EXPECT_DOUBLE_EQ(PeakTflops(a100, Math::kFp16, true), 312);
  EXPECT_DOUBLE_EQ(PeakTflops(a100, Math::kFp16, false), 78);
}

TEST(GpuTableTest, RooflineByHand) {
  const GpuSpec& a100 = *FindGpu("A100-SXM4-80GB");
  bool compute = false;
  // 2*4096^3 FLOPs in fp16 on tensor cores: 137.4 GFLOP / 312 TFLOP/s = 440.5 us;
  // 3 * 4096^2 * 2 bytes / 2039 GB/s = 49.4 us: compute-bound.
  const double f = 2.0 * 4096 * 4096 * 4096, b = 3.0 * 4096 * 4096 * 2;
  EXPECT_NEAR(RooflineNs(a100, f, b, Math::kFp16, true, &compute), f / 312e3, 1);
  EXPECT_TRUE(compute);
  // An element-wise add of 2^26 fp32 elements: 3 * 256 MiB / 2039 GB/s.
  const double bytes = 3.0 * 4 * (1 << 26);
  EXPECT_NEAR(RooflineNs(a100, 1 << 26, bytes, Math::kFp32, false, &compute), bytes / 2039, 1);
  EXPECT_FALSE(compute);
}

struct Seen {
  const char* name;
  const char* vendor;
  int sms, major, minor;
  int64_t bytes;
  const char* key;
};

// Every GPU /work/shared/traces/MANIFEST.md lists, with the deviceProperties
// its traces record (name, numSms, computeMajor/Minor, totalGlobalMem).
constexpr Seen kManifest[] = {
    {"NVIDIA B200", "nvidia", 148, 10, 0, 191503138816, "B200"},
    {"NVIDIA H100 80GB HBM3", "nvidia", 132, 9, 0, 85018279936, "H100-SXM"},
    {"AMD Instinct MI300X VF", "amd", 304, 9, 4, 205571227648, "MI300X"},
    {"AMD Instinct MI300X", "amd", 304, 9, 4, 206141652992, "MI300X"},
    {"NVIDIA A100 80GB PCIe", "nvidia", 108, 8, 0, 84990623744, "A100-PCIe-80GB"},
    {"NVIDIA A100-SXM4-80GB", "nvidia", 108, 8, 0, 85095874560, "A100-SXM4-80GB"},
    {"NVIDIA GeForce RTX 3080", "nvidia", 68, 8, 6, 10319495168, "RTX3080"},
    {"NVIDIA PG509-210", "nvidia", 108, 8, 0, 85198045184, "A100-SXM4-80GB"},
    {"AMD Radeon Graphics", "amd", 104, 9, 0, 68702699520, "MI250"},
    {"NVIDIA A100-PG509-200", "nvidia", 108, 8, 0, 42297524224, "A100-SXM4-40GB"},
    {"Tesla V100-SXM2-32GB", "nvidia", 80, 7, 0, 34089730048, "V100-SXM2"},
    {"Quadro GP100", "nvidia", 56, 6, 0, 17069309952, "GP100"},
    {"NVIDIA GeForce RTX 2080 Ti", "nvidia", 68, 7, 5, 11554586624, "RTX2080Ti"},
    {"NVIDIA H100", "nvidia", 132, 9, 0, 102085492736, "H100-NVL"},
    {"Tesla V100-DGXS-32GB", "nvidia", 80, 7, 0, 34084028416, "V100-SXM2"},
};

TEST(GpuMatchTest, EveryManifestGpuMatches) {
  for (const Seen& s : kManifest) {
    SCOPED_TRACE(s.name);
    const GpuMatch m = MatchGpu({s.name, s.vendor, s.sms, s.major, s.minor, s.bytes});
    ASSERT_NE(m.spec, nullptr);
    EXPECT_EQ(m.spec->key, s.key);
    EXPECT_THAT(m.how, HasSubstr(std::to_string(s.sms) + " SMs"));
  }
}

DeviceFacts Named(std::string_view name) {
  DeviceFacts d;
  d.name = name;
  return d;
}

TEST(GpuMatchTest, NamesAloneAndWhatDoesNotMatch) {
  EXPECT_EQ(MatchGpu(Named("NVIDIA A10")).spec->key, "A10");            // not A100
  EXPECT_EQ(MatchGpu(Named("NVIDIA L4")).spec->key, "L4");              // not L40S
  EXPECT_EQ(MatchGpu(Named("NVIDIA L40S")).spec->key, "L40S");
  EXPECT_EQ(MatchGpu(Named("Tesla T4")).spec->key, "T4");
  EXPECT_EQ(MatchGpu(Named("NVIDIA H100 PCIe")).spec->key, "H100-PCIe");
  EXPECT_EQ(MatchGpu(Named("NVIDIA H200")).spec->key, "H200");
  EXPECT_EQ(MatchGpu(Named("NVIDIA GeForce RTX 4090")).spec->key, "RTX4090");
  EXPECT_EQ(MatchGpu(Named("Tesla V100-PCIE-32GB")).spec->key, "V100-PCIe");
  EXPECT_EQ(MatchGpu(Named("AMD Instinct MI250X")).spec->key, "MI250X");
  EXPECT_EQ(MatchGpu(Named("NVIDIA GeForce RTX 3070")).spec, nullptr);
  EXPECT_EQ(MatchGpu(Named("")).spec, nullptr);
  // A known name with another SM count (a MIG slice, another SKU) still
  // matches, and says so.
  const GpuMatch mig = MatchGpu({"NVIDIA A100-SXM4-40GB MIG 3g.20gb", "nvidia", 42, 8, 0, 0});
  ASSERT_NE(mig.spec, nullptr);
  EXPECT_THAT(mig.how, HasSubstr("42 SMs (the table says 108)"));
}

}  // namespace
}  // namespace reverie::hardware
