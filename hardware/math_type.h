// File: hardware/math_type.h
//
// The arithmetic a kernel runs (fp64 ... fp8), read from what a trace
// records: the element types of an op's inputs (Kineto "Input type":
// "float", "c10::BFloat16", ...) and the kernel's name (cuBLAS / CUTLASS /
// cuDNN names say tf32, bf16, f16, fp8 and whether tensor cores run it).
#ifndef REVERIE_HARDWARE_MATH_TYPE_H_
#define REVERIE_HARDWARE_MATH_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace reverie::hardware {

enum class Math : uint8_t { kFp64 = 0, kFp32, kTf32, kBf16, kFp16, kFp8 };
inline constexpr int kMathCount = 6;

std::string_view MathName(Math m);  // "fp64", "fp32", "tf32", "bf16", "fp16", "fp8"
std::optional<Math> ParseMath(std::string_view name);

// Bytes per element of a PyTorch scalar type as the profiler names it
// ("float" 4, "c10::Half" 2, "long int" 8, "bool" 1, "c10::Float8_e4m3fn"
// 1, ...); 0 for what is not a tensor type ("Scalar", "ScalarList",
// "TensorList", "", unknown names).
int32_t ElementBytes(std::string_view torch_type);
// The math of a floating-point element type; nullopt for integers, bools
// and non-tensor arguments.
std::optional<Math> MathOfType(std::string_view torch_type);

// What a kernel's name says about its math, when it says anything: an
// element type named outright (fp8: e4m3, e5m2; tf32, xf32; bf16; fp16: f16,
// half, h884, h1688, h16816, hmma, hcudnn), rocBLAS / hipBLASLt's type word
// ("Cijk_Ailk_Bljk_BBS_..."), then cuBLAS / CUTLASS shape tags on fp32 data
// (s1688: Ampere's tf32; s16816, s884: 16-bit inputs), fp64 (dgemm, double),
// fp32 (sgemm, simt, scudnn, f32f32, ATen's "<float"). The one reader of
// kernel names for precision: the trace facts and the cost model use it.
std::optional<Math> MathOfKernelName(std::string_view name);
// The math a kernel ran, from its name and its op's recorded input type
// (`op`, nullopt when none was recorded): the name's reading, except that a
// name that says nothing takes the op's, and a 16-bit name takes the op's
// 16-bit type (cuDNN's generated kernels write f16 for bf16 too: GPT-2's
// bf16 SDPA runs "..._flash_fprop_wgmma_f16_..."). What the trace facts and
// the cost model read.
std::optional<Math> MathOfKernel(std::string_view name, std::optional<Math> op);

// Whether a GEMM / convolution / attention kernel runs on tensor (matrix)
// cores: its name says so (tensorop, xmma, gmma, hmma, mma, wmma, nvjet,
// s1688, h16816, ...), or its math is one only tensor cores run (tf32, fp8),
// or it is half precision (cuBLAS and cuDNN use tensor cores for fp16/bf16
// wherever a part has them). SIMT names (sgemm, simt) say no.
bool UsesMatrixUnits(std::string_view kernel_name, Math math);

// What a kernel's name alone says of its math, read once: reading lowers
// and scans the name, and the cost model asks per kernel per prediction,
// so the graph keeps it per interned name (depgraph::KernelNameMath).
struct NameMath {
  std::optional<Math> math;  // MathOfKernelName
  bool simt = false;         // sgemm, simt or dgemm, and neither tensorop nor tf32
  bool matrix_tag = false;   // a tensor-core tag (tensorop, xmma, hmma, s1688, ...)
};
NameMath ReadNameMath(std::string_view kernel_name);
// As the functions above, from a name read once.
std::optional<Math> MathOfKernel(const NameMath& name, std::optional<Math> op);
bool UsesMatrixUnits(const NameMath& name, Math math);
// A NameMath in one byte, never 0 (0: not read yet), and back.
uint8_t PackNameMath(const NameMath& n);
NameMath UnpackNameMath(uint8_t packed);

}  // namespace reverie::hardware

#endif  // REVERIE_HARDWARE_MATH_TYPE_H_
