#include "hardware/math_type.h"

#include <array>
#include <string>

#include "hardware/text.h"

namespace reverie::hardware {
namespace {

constexpr std::array<std::string_view, kMathCount> kNames = {"fp64", "fp32", "tf32",
                                                             "bf16", "fp16", "fp8"};

bool HasAny(std::string_view lower, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (text::Contains(lower, w)) return true;
  }
  return false;
}

// rocBLAS / hipBLASLt (Tensile) names carry the data type as the word after
// the operands' index orders: "Cijk_Ailk_Bljk_BBS_BH_..." (bf16 in and out,
// fp32 compute), "..._B_BS_BH_..." (hipBLASLt: bf16), "..._HHS_..." (fp16),
// "..._SB_..." (fp32, batched), "..._F8..." (fp8). Its first letter is the
// input type.
std::optional<Math> TensileMath(std::string_view name) {
  if (!name.starts_with("Cijk_")) return std::nullopt;
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    at = name.find('_', at);
    if (at == std::string_view::npos) return std::nullopt;
    ++at;
  }
  const std::string_view type = name.substr(at, name.find('_', at) - at);
  if (type.starts_with("F8") || type.starts_with("B8")) return Math::kFp8;
  switch (type.empty() ? '\0' : type.front()) {
    case 'S':
      return Math::kFp32;
    case 'D':
      return Math::kFp64;
    case 'H':
      return Math::kFp16;
    case 'B':
      return Math::kBf16;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string_view MathName(Math m) { return kNames[static_cast<int>(m)]; }

std::optional<Math> ParseMath(std::string_view name) {
  if (name.size() > 8) return std::nullopt;  // the longest name is "bfloat16"
  const std::string lower = text::Lower(name);
  for (int i = 0; i < kMathCount; ++i) {
    if (lower == kNames[i]) return static_cast<Math>(i);
  }
  if (lower == "half" || lower == "float16") return Math::kFp16;
  if (lower == "bfloat16") return Math::kBf16;
  if (lower == "float" || lower == "float32") return Math::kFp32;
  if (lower == "double" || lower == "float64") return Math::kFp64;
  return std::nullopt;
}

int32_t ElementBytes(std::string_view t) {
  // The names c10::toString gives ScalarType, as the profiler records them.
  if (t == "float" || t == "int" || t == "unsigned int" || t == "c10::complex<c10::Half>") return 4;
  if (t == "double" || t == "long int" || t == "long" || t == "c10::complex<float>" ||
      t == "unsigned long") {
    return 8;
  }
  if (t == "c10::Half" || t == "c10::BFloat16" || t == "short int" || t == "short" ||
      t == "unsigned short") {
    return 2;
  }
  if (t == "c10::complex<double>") return 16;
  if (t == "bool" || t == "unsigned char" || t == "signed char" || t == "char" ||
      t.starts_with("c10::Float8") || t == "c10::quint8" || t == "c10::qint8") {
    return 1;
  }
  return 0;
}

std::optional<Math> MathOfType(std::string_view t) {
  if (t == "float") return Math::kFp32;
  if (t == "double") return Math::kFp64;
  if (t == "c10::Half") return Math::kFp16;
  if (t == "c10::BFloat16") return Math::kBf16;
  if (t.starts_with("c10::Float8")) return Math::kFp8;
  return std::nullopt;
}

namespace {

// MathOfKernelName, given the name lower-cased (`n`) too.
std::optional<Math> MathOfNames(std::string_view name, std::string_view n) {
  // An element type named outright decides, before the tensor-core shape
  // tags that several types share.
  if (HasAny(n, {"fp8", "e4m3", "e5m2", "f8f8", "float8", "f8f6f4"})) return Math::kFp8;
  if (HasAny(n, {"tf32", "xf32"})) return Math::kTf32;
  if (HasAny(n, {"bf16", "bfloat16"})) return Math::kBf16;
  if (HasAny(n, {"fp16", "f16", "half", "hgemm", "hcudnn", "h884", "h1688", "h16816", "hmma"})) {
    return Math::kFp16;
  }
  if (std::optional<Math> m = TensileMath(name)) return m;
  // Shape tags without a type word: an fp32-accumulating m16n8k8 MMA on
  // fp32 data is Ampere's tf32 path (Turing's 1688 kernels name their fp16
  // inputs, caught above); m16n8k16 and Volta's m8n8k4 MMAs take 16-bit
  // inputs only, so they are never tf32.
  if (HasAny(n, {"s1688"})) return Math::kTf32;
  if (HasAny(n, {"s16816", "s884", "s161616"})) return Math::kFp16;
  if (HasAny(n, {"dgemm", "f64", "fp64", "double"})) return Math::kFp64;
  if (HasAny(n, {"sgemm", "simt", "scudnn", "f32f32", "<float"})) return Math::kFp32;
  return std::nullopt;
}

}  // namespace

std::optional<Math> MathOfKernelName(std::string_view name) {
  return MathOfNames(name, text::Lower(name));
}

bool UsesMatrixUnits(std::string_view kernel_name, Math math) {
  return UsesMatrixUnits(ReadNameMath(kernel_name), math);
}

std::optional<Math> MathOfKernel(std::string_view name, std::optional<Math> op) {
  return MathOfKernel(NameMath{.math = MathOfKernelName(name)}, op);
}

NameMath ReadNameMath(std::string_view kernel_name) {
  const std::string n = text::Lower(kernel_name);
  NameMath out{.math = MathOfNames(kernel_name, n)};
  out.simt = HasAny(n, {"sgemm", "simt", "dgemm"}) && !HasAny(n, {"tensorop", "tf32"});
  out.matrix_tag = HasAny(n, {"tensorop", "xmma", "gmma", "hmma", "wmma", "mma_", "nvjet", "s1688",
                              "s16816", "h884", "h1688", "h16816", "i8816", "mfma"});
  return out;
}

std::optional<Math> MathOfKernel(const NameMath& name, std::optional<Math> op) {
  if (!name.math) return op;
  const auto half = [](std::optional<Math> m) { return m == Math::kFp16 || m == Math::kBf16; };
  if (half(name.math) && half(op)) return op;
  return name.math;
}

bool UsesMatrixUnits(const NameMath& name, Math math) {
  if (name.simt) return false;
  if (math == Math::kTf32 || math == Math::kFp8 || name.matrix_tag) return true;
  return math == Math::kFp16 || math == Math::kBf16;
}

uint8_t PackNameMath(const NameMath& n) {
  // Bits 0-2: the math + 1 (0: none); 3: simt; 4: matrix_tag; 7: read.
  const int math = n.math ? static_cast<int>(*n.math) + 1 : 0;
  return static_cast<uint8_t>(0x80 | math | (n.simt ? 0x08 : 0) | (n.matrix_tag ? 0x10 : 0));
}

NameMath UnpackNameMath(uint8_t packed) {
  NameMath n;
  if ((packed & 0x07) != 0) n.math = static_cast<Math>((packed & 0x07) - 1);
  n.simt = packed & 0x08;
  n.matrix_tag = packed & 0x10;
  return n;
}

}  // namespace reverie::hardware
