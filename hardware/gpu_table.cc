// The rows of the GPU table (hardware/gpu_spec.h), each from its vendor's
// public datasheet or architecture whitepaper, named in `source`. Peaks are
// dense TFLOP/s (datasheets quote tensor figures "with sparsity": those are
// halved here, and the note says so where a row needed it). Figures a
// source does not give are derived as the note says (vector FP16 from the
// FP32 rate and the architecture's FP16 ratio, FP64 on GeForce parts from
// their 1/32 or 1/64 rate), or left 0 (unknown; L2 of B200).
//
// Occupancy limits per architecture are those of the CUDA C++ Programming
// Guide's "Technical Specifications per Compute Capability" table
// (threads, resident blocks, 32-bit registers and shared memory per SM);
// AMD CDNA: 2048 work-items (32 wavefronts of 64) and 64 KiB LDS per CU.
#include <array>
#include <string_view>

#include "hardware/gpu_spec.h"

namespace reverie::hardware {
namespace {

// Peaks in table order: fp64, fp32, tf32, bf16, fp16, fp8.
using Peaks = std::array<double, kMathCount>;
constexpr Peaks P(double fp64, double fp32, double tf32, double bf16, double fp16, double fp8) {
  return {fp64, fp32, tf32, bf16, fp16, fp8};
}

constexpr Occupancy kPascal{2048, 32, 65536, 64};
constexpr Occupancy kVolta{2048, 32, 65536, 96};
constexpr Occupancy kTuring{1024, 16, 65536, 64};
constexpr Occupancy kGa100{2048, 32, 65536, 164};
constexpr Occupancy kGa10x{1536, 16, 65536, 100};
constexpr Occupancy kAda{1536, 24, 65536, 100};
constexpr Occupancy kHopper{2048, 32, 65536, 228};
constexpr Occupancy kBlackwell{2048, 32, 65536, 228};
constexpr Occupancy kCdna{2048, 32, 0, 64};

constexpr Vendor kNv = Vendor::kNvidia;
constexpr Vendor kAmd = Vendor::kAmd;

// clang-format off
constexpr GpuSpec kTable[] = {
  // --- Pascal ---
  {"P100-SXM2", "NVIDIA Tesla P100 SXM2 16GB", kNv, "Pascal sm_60", 6, 0, 56, 1480,
   P(5.3, 10.6, 0, 0, 21.2, 0), P(0, 0, 0, 0, 0, 0), 732, 16, 4, 3, 16, 160, "NVLink 1", kPascal,
   {"p100"}, "NVIDIA Tesla P100 datasheet (2016); NVIDIA Tesla P100 whitepaper (GP100)", ""},
  {"GP100", "NVIDIA Quadro GP100", kNv, "Pascal sm_60", 6, 0, 56, 1442,
   P(5.2, 10.3, 0, 0, 20.7, 0), P(0, 0, 0, 0, 0, 0), 717, 16, 4, 3, 16, 80, "NVLink 1 (2 bridges)",
   kPascal, {"gp100"}, "NVIDIA Quadro GP100 datasheet (2017)", ""},
  // --- Volta ---
  {"V100-PCIe", "NVIDIA Tesla V100 PCIe 32GB", kNv, "Volta sm_70", 7, 0, 80, 1380,
   P(7.0, 14.0, 0, 0, 28.0, 0), P(0, 0, 0, 0, 112, 0), 900, 32, 6, 3, 16, 0, "", kVolta,
   {"v100 pcie"}, "NVIDIA Tesla V100 GPU Accelerator datasheet (2018); Volta GV100 whitepaper",
   "vector fp16 = 2 x fp32 (Volta's packed half rate)"},
  // DGX Station's V100-DGXS runs at the SXM2 clocks (DGX Station datasheet).
  {"V100-SXM2", "NVIDIA Tesla V100 SXM2 32GB", kNv, "Volta sm_70", 7, 0, 80, 1530,
   P(7.8, 15.7, 0, 0, 31.4, 0), P(0, 0, 0, 0, 125, 0), 900, 32, 6, 3, 16, 300, "NVLink 2", kVolta,
   {"v100 sxm2", "v100 dgxs", "v100"},
   "NVIDIA Tesla V100 GPU Accelerator datasheet (2018); Volta GV100 whitepaper",
   "vector fp16 = 2 x fp32 (Volta's packed half rate)"},
  // --- Turing ---
  {"T4", "NVIDIA T4", kNv, "Turing sm_75", 7, 5, 40, 1590,
   P(0.25, 8.1, 0, 0, 16.2, 0), P(0, 0, 0, 0, 65, 0), 320, 16, 4, 3, 16, 0, "", kTuring,
   {"t4"}, "NVIDIA T4 Tensor Core GPU datasheet (2019); NVIDIA Turing architecture whitepaper",
   "fp64 = fp32 / 32 and vector fp16 = 2 x fp32 (Turing rates)"},
  {"RTX2080Ti", "NVIDIA GeForce RTX 2080 Ti", kNv, "Turing sm_75", 7, 5, 68, 1545,
   P(0.42, 13.4, 0, 0, 26.9, 0), P(0, 0, 0, 0, 53.8, 0), 616, 11, 5.5, 3, 16, 100, "NVLink 2 (2-way)",
   kTuring, {"2080 ti"},
   "NVIDIA Turing GPU architecture whitepaper, Appendix A (RTX 2080 Ti reference board)",
   "fp64 = fp32 / 32 and vector fp16 = 2 x fp32; tensor fp16 with fp32 accumulate"},
  // --- Ampere ---
  {"A100-PCIe-40GB", "NVIDIA A100 PCIe 40GB", kNv, "Ampere sm_80", 8, 0, 108, 1410,
   P(9.7, 19.5, 0, 39, 78, 0), P(19.5, 0, 156, 312, 312, 0), 1555, 40, 40, 4, 16, 600,
   "NVLink 3 (bridge)", kGa100, {"a100 pcie 40gb", "a100 40gb pcie"},
   "NVIDIA A100 Tensor Core GPU datasheet; NVIDIA A100 Tensor Core GPU Architecture whitepaper", ""},
  {"A100-PCIe-80GB", "NVIDIA A100 PCIe 80GB", kNv, "Ampere sm_80", 8, 0, 108, 1410,
   P(9.7, 19.5, 0, 39, 78, 0), P(19.5, 0, 156, 312, 312, 0), 1935, 80, 40, 4, 16, 600,
   "NVLink 3 (bridge)", kGa100, {"a100 80gb pcie", "a100 pcie 80gb", "a100 pcie"},
   "NVIDIA A100 Tensor Core GPU datasheet; NVIDIA A100 Tensor Core GPU Architecture whitepaper", ""},
  // Some clusters report the SXM4 boards by their board names: PG509-200
  // (40 GB) and PG509-210 (80 GB); memory size tells them apart.
  {"A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB", kNv, "Ampere sm_80", 8, 0, 108, 1410,
   P(9.7, 19.5, 0, 39, 78, 0), P(19.5, 0, 156, 312, 312, 0), 1555, 40, 40, 4, 16, 600, "NVLink 3",
   kGa100, {"a100 sxm4 40gb", "pg509 200", "a100"},
   "NVIDIA A100 Tensor Core GPU datasheet; NVIDIA A100 Tensor Core GPU Architecture whitepaper", ""},
  {"A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB", kNv, "Ampere sm_80", 8, 0, 108, 1410,
   P(9.7, 19.5, 0, 39, 78, 0), P(19.5, 0, 156, 312, 312, 0), 2039, 80, 40, 4, 16, 600, "NVLink 3",
   kGa100, {"a100 sxm4 80gb", "pg509 210", "a100"},
   "NVIDIA A100 Tensor Core GPU datasheet; NVIDIA A100 Tensor Core GPU Architecture whitepaper", ""},
  {"A10", "NVIDIA A10", kNv, "Ampere sm_86", 8, 6, 72, 1695,
   P(0.49, 31.2, 0, 31.2, 31.2, 0), P(0, 0, 62.5, 125, 125, 0), 600, 24, 6, 4, 16, 0, "", kGa10x,
   {"a10"}, "NVIDIA A10 Tensor Core GPU datasheet (2021); NVIDIA Ampere GA102 GPU architecture whitepaper",
   "fp64 = fp32 / 64 and vector fp16/bf16 = fp32 (GA10x rates); tensor figures dense (datasheet / 2)"},
  {"RTX3080", "NVIDIA GeForce RTX 3080 10GB", kNv, "Ampere sm_86", 8, 6, 68, 1710,
   P(0.47, 29.8, 0, 29.8, 29.8, 0), P(0, 0, 29.8, 59.5, 59.5, 0), 760, 10, 5, 4, 16, 0, "", kGa10x,
   {"rtx 3080"}, "NVIDIA Ampere GA102 GPU architecture whitepaper, Appendix A (GeForce RTX 3080)",
   "fp64 = fp32 / 64 and vector bf16 = fp32 (GA10x rates); tensor fp16/bf16 with fp32 accumulate"},
  {"RTX3090", "NVIDIA GeForce RTX 3090", kNv, "Ampere sm_86", 8, 6, 82, 1695,
   P(0.56, 35.6, 0, 35.6, 35.6, 0), P(0, 0, 35.6, 71, 71, 0), 936, 24, 6, 4, 16, 112.5,
   "NVLink 3 (2-way)", kGa10x, {"rtx 3090"},
   "NVIDIA Ampere GA102 GPU architecture whitepaper, Appendix A (GeForce RTX 3090)",
   "fp64 = fp32 / 64 and vector bf16 = fp32 (GA10x rates); tensor fp16/bf16 with fp32 accumulate"},
  // --- Ada ---
  {"RTX4080", "NVIDIA GeForce RTX 4080 16GB", kNv, "Ada sm_89", 8, 9, 76, 2505,
   P(0.76, 48.7, 0, 48.7, 48.7, 0), P(0, 0, 48.7, 97.5, 97.5, 194.9), 716.8, 16, 64, 4, 16, 0, "",
   kAda, {"rtx 4080"}, "NVIDIA Ada Lovelace GPU architecture whitepaper, Appendix A (RTX 4080 16GB)",
   "fp64 = fp32 / 64 and vector fp16/bf16 = fp32 (Ada rates); tensor figures with fp32 accumulate"},
  {"RTX4090", "NVIDIA GeForce RTX 4090", kNv, "Ada sm_89", 8, 9, 128, 2520,
   P(1.29, 82.6, 0, 82.6, 82.6, 0), P(0, 0, 82.6, 165.2, 165.2, 330.3), 1008, 24, 72, 4, 16, 0, "",
   kAda, {"rtx 4090"}, "NVIDIA Ada Lovelace GPU architecture whitepaper, Appendix A (RTX 4090)",
   "fp64 = fp32 / 64 and vector fp16/bf16 = fp32 (Ada rates); tensor figures with fp32 accumulate"},
  {"L4", "NVIDIA L4", kNv, "Ada sm_89", 8, 9, 58, 2040,
   P(0.47, 30.3, 0, 30.3, 30.3, 0), P(0, 0, 60, 121, 121, 242.5), 300, 24, 48, 4, 16, 0, "", kAda,
   {"l4"}, "NVIDIA L4 Tensor Core GPU datasheet (2023)",
   "tensor figures dense (datasheet / 2); fp64 = fp32 / 64 and vector fp16/bf16 = fp32 (Ada rates)"},
  {"L40S", "NVIDIA L40S", kNv, "Ada sm_89", 8, 9, 142, 2520,
   P(1.43, 91.6, 0, 91.6, 91.6, 0), P(0, 0, 183, 362, 362, 733), 864, 48, 96, 4, 16, 0, "", kAda,
   {"l40s"}, "NVIDIA L40S GPU datasheet (2023)",
   "tensor figures dense (datasheet / 2); fp64 = fp32 / 64 and vector fp16/bf16 = fp32 (Ada rates)"},
  // --- Hopper ---
  {"H100-PCIe", "NVIDIA H100 PCIe 80GB", kNv, "Hopper sm_90", 9, 0, 114, 1755,
   P(26, 51, 0, 102, 102, 0), P(51, 0, 378, 756.5, 756.5, 1513), 2000, 80, 50, 5, 16, 600,
   "NVLink 4 (bridge)", kHopper, {"h100 pcie"},
   "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe column); NVIDIA H100 Tensor Core GPU Architecture whitepaper",
   "tensor figures dense (datasheet / 2); vector fp16/bf16 = 2 x fp32 (Hopper rate)"},
  // H100 NVL: the 94 GB PCIe part with the SXM die.
  {"H100-NVL", "NVIDIA H100 NVL 94GB", kNv, "Hopper sm_90", 9, 0, 132, 1776,
   P(30, 60, 0, 120, 120, 0), P(60, 0, 417.5, 835.5, 835.5, 1670.5), 3900, 94, 50, 5, 16, 600,
   "NVLink 4 (bridge)", kHopper, {"h100 nvl", "h100"},
   "NVIDIA H100 Tensor Core GPU datasheet (H100 NVL column)",
   "tensor figures dense (datasheet / 2); boost clock derived from fp32 = SMs x 128 x 2 x clock; "
   "vector fp16/bf16 = 2 x fp32"},
  // "NVIDIA H100 80GB HBM3" is the SXM5 part (the PCIe card has HBM2e).
  {"H100-SXM", "NVIDIA H100 SXM5 80GB", kNv, "Hopper sm_90", 9, 0, 132, 1980,
   P(34, 67, 0, 134, 134, 0), P(67, 0, 494.7, 989.4, 989.4, 1978.9), 3350, 80, 50, 5, 16, 900,
   "NVLink 4", kHopper, {"h100 sxm", "h100 80gb hbm3", "h100"},
   "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column); NVIDIA H100 Tensor Core GPU Architecture whitepaper",
   "tensor figures dense (datasheet / 2); vector fp16/bf16 = 2 x fp32 (Hopper rate)"},
  {"H200", "NVIDIA H200 SXM 141GB", kNv, "Hopper sm_90", 9, 0, 132, 1980,
   P(34, 67, 0, 134, 134, 0), P(67, 0, 494.7, 989.4, 989.4, 1978.9), 4800, 141, 50, 5, 16, 900,
   "NVLink 4", kHopper, {"h200"}, "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column)",
   "tensor figures dense (datasheet / 2); vector fp16/bf16 = 2 x fp32 (Hopper rate)"},
  // --- Blackwell ---
  {"B200", "NVIDIA B200 (HGX B200) 180GB", kNv, "Blackwell sm_100", 10, 0, 148, 1980,
   P(37, 75, 0, 150, 150, 0), P(37, 0, 1125, 2250, 2250, 4500), 8000, 180, 0, 6, 16, 1800,
   "NVLink 5", kBlackwell, {"b200"},
   "NVIDIA HGX B200 / DGX B200 datasheet (8-GPU totals divided by 8)",
   "per-GPU figures are the 8-GPU system's / 8, tensor figures dense (/ 2); boost clock derived "
   "from fp32 = SMs x 128 x 2 x clock; L2 not published (0)"},
  // --- AMD CDNA 2: a trace sees one GCD of the two in an MI250/MI250X
  // package (HIP reports each as a device): per-GCD figures are the
  // package's / 2; Infinity Fabric is the package's.
  {"MI250X", "AMD Instinct MI250X (one GCD)", kAmd, "CDNA2 gfx90a", 9, 0, 110, 1700,
   P(23.95, 23.95, 0, 0, 0, 0), P(47.85, 47.85, 0, 191.5, 191.5, 0), 1638.4, 64, 8, 4, 16, 800,
   "Infinity Fabric", kCdna, {"mi250x"}, "AMD Instinct MI250X accelerator datasheet",
   "per-GCD figures = package / 2; vector fp16 not published (0: runs at the fp32 rate)"},
  {"MI250", "AMD Instinct MI250 (one GCD)", kAmd, "CDNA2 gfx90a", 9, 0, 104, 1700,
   P(22.65, 22.65, 0, 0, 0, 0), P(45.25, 45.25, 0, 181.05, 181.05, 0), 1638.4, 64, 8, 4, 16, 600,
   "Infinity Fabric", kCdna, {"mi250"}, "AMD Instinct MI250 accelerator datasheet",
   "per-GCD figures = package / 2; vector fp16 not published (0: runs at the fp32 rate)"},
  // --- AMD CDNA 3 ---
  {"MI300X", "AMD Instinct MI300X", kAmd, "CDNA3 gfx942", 9, 4, 304, 2100,
   P(81.7, 163.4, 0, 0, 0, 0), P(163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9), 5300, 192, 32, 5, 16,
   896, "Infinity Fabric", kCdna, {"mi300x"},
   "AMD Instinct MI300X accelerator datasheet; AMD CDNA 3 architecture whitepaper",
   "L2 = 8 XCDs x 4 MB (plus 256 MB Infinity Cache); Infinity Fabric 7 links x 128 GB/s; "
   "vector fp16 not published (0: runs at the fp32 rate)"},
  {"MI325X", "AMD Instinct MI325X", kAmd, "CDNA3 gfx942", 9, 4, 304, 2100,
   P(81.7, 163.4, 0, 0, 0, 0), P(163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9), 6000, 256, 32, 5, 16,
   896, "Infinity Fabric", kCdna, {"mi325x"}, "AMD Instinct MI325X accelerator datasheet",
   "L2 = 8 XCDs x 4 MB (plus 256 MB Infinity Cache); vector fp16 not published"},
};
// clang-format on

}  // namespace

absl::Span<const GpuSpec> GpuTable() { return kTable; }

}  // namespace reverie::hardware
