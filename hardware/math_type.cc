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

std::optional<Math> MathOfKernelName(std::string_view name) {
  const std::string n = text::Lower(name);
  // Order matters: fp8 and tf32 names also carry tensor-core shape tags.
  if (HasAny(n, {"fp8", "e4m3", "e5m2", "f8f8"})) return Math::kFp8;
  if (HasAny(n, {"tf32", "xf32", "tensorop_s1688", "tensorop_s16816"})) return Math::kTf32;
  if (HasAny(n, {"bf16", "bfloat16"})) return Math::kBf16;
  if (HasAny(n, {"h884", "h1688", "h16816", "hmma", "f16", "fp16", "half", "_hgemm"})) {
    return Math::kFp16;
  }
  if (HasAny(n, {"dgemm", "f64", "fp64", "double"})) return Math::kFp64;
  if (HasAny(n, {"sgemm", "simt", "scudnn", "f32f32"})) return Math::kFp32;
  return std::nullopt;
}

bool UsesMatrixUnits(std::string_view kernel_name, Math math) {
  const std::string n = text::Lower(kernel_name);
  if (HasAny(n, {"sgemm", "simt", "dgemm"}) && !HasAny(n, {"tensorop", "tf32"})) return false;
  if (math == Math::kTf32 || math == Math::kFp8) return true;
  if (HasAny(n, {"tensorop", "xmma", "gmma", "hmma", "wmma", "mma_", "nvjet", "s1688", "s16816",
                 "h884", "h1688", "h16816", "i8816", "mfma"})) {
    return true;
  }
  return math == Math::kFp16 || math == Math::kBf16;
}

}  // namespace reverie::hardware
