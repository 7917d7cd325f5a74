// Lookups over the GPU table (hardware/gpu_table.cc): by key, by what a
// trace records, peaks per math type, and the host link's bandwidth.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/sv.h"
#include "hardware/gpu_spec.h"
#include "hardware/text.h"

namespace reverie::hardware {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::vector<std::string> Tokens(std::string_view s) {
  std::string lower = text::Lower(s);
  for (char& c : lower) {
    if (c == '-' || c == '_' || c == '(' || c == ')' || c == ',') c = ' ';
  }
  std::vector<std::string> out;
  for (absl::string_view t : absl::StrSplit(lower, ' ', absl::SkipEmpty())) out.emplace_back(t);
  return out;
}

// How many tokens `pattern` matched in `name` (a contiguous run), or 0.
int PatternTokens(const std::vector<std::string>& name, std::string_view pattern) {
  const std::vector<std::string> p = Tokens(pattern);
  if (p.empty() || p.size() > name.size()) return 0;
  for (size_t i = 0; i + p.size() <= name.size(); ++i) {
    bool all = true;
    for (size_t j = 0; j < p.size() && all; ++j) all = name[i + j] == p[j];
    if (all) return static_cast<int>(p.size());
  }
  return 0;
}

bool MemoryAgrees(const GpuSpec& g, int64_t bytes) {
  if (bytes <= 0) return false;
  const double gib = static_cast<double>(bytes) / kGiB;
  return std::abs(gib - g.memory_gb) <= 0.12 * g.memory_gb;
}

bool VendorIsAmd(const DeviceFacts& d) {
  if (d.vendor == "amd") return true;
  const std::string n = text::Lower(d.name);
  return n.find("amd") != std::string::npos || n.find("radeon") != std::string::npos ||
         n.find("instinct") != std::string::npos;
}

}  // namespace

std::string_view VendorName(Vendor v) { return v == Vendor::kAmd ? "amd" : "nvidia"; }

double PeakTflops(const GpuSpec& gpu, Math math, bool matrix) {
  const int i = static_cast<int>(math);
  if (matrix && gpu.matrix_tflops[i] > 0) return gpu.matrix_tflops[i];
  return gpu.vector_tflops[i];
}

Math EffectiveMath(const GpuSpec& gpu, Math m, bool* matrix) {
  auto mat = [&](Math x) { return gpu.matrix_tflops[static_cast<int>(x)] > 0; };
  auto vec = [&](Math x) { return gpu.vector_tflops[static_cast<int>(x)] > 0; };
  if (*matrix) {
    if (mat(m)) return m;
    if (m == Math::kFp8 && mat(Math::kBf16)) return Math::kBf16;
    if (m == Math::kFp8 && mat(Math::kFp16)) return Math::kFp16;
    // Otherwise CUDA cores (Volta and Turing have no bf16 units: PyTorch's
    // bf16 GEMMs run in fp32 there; tf32 without tensor cores is fp32).
    *matrix = false;
  }
  if (m == Math::kTf32 || m == Math::kFp8) m = Math::kFp32;
  if (vec(m)) return m;
  return Math::kFp32;  // half types without a published vector rate run at the fp32 rate
}

double RooflineNs(const GpuSpec& gpu, double flops, double bytes, Math math, bool matrix,
                  bool* compute_bound) {
  const Math m = EffectiveMath(gpu, math, &matrix);
  const double peak = PeakTflops(gpu, m, matrix);  // TFLOP/s = 1e3 FLOP per ns
  const double compute_ns = peak > 0 ? flops / (peak * 1e3) : 0;
  const double memory_ns = gpu.memory_bandwidth_gbs > 0 ? bytes / gpu.memory_bandwidth_gbs : 0;
  if (compute_bound != nullptr) *compute_bound = compute_ns > memory_ns;
  return std::max(compute_ns, memory_ns);
}

double PcieGbs(int32_t gen, int32_t lanes) {
  // GT/s per lane and line-code efficiency, PCI-SIG base specifications 1.0-6.0.
  double gts = 0, eff = 0;
  switch (gen) {
    case 1: gts = 2.5, eff = 0.8; break;
    case 2: gts = 5, eff = 0.8; break;
    case 3: gts = 8, eff = 128.0 / 130.0; break;
    case 4: gts = 16, eff = 128.0 / 130.0; break;
    case 5: gts = 32, eff = 128.0 / 130.0; break;
    case 6: gts = 64, eff = 242.0 / 256.0; break;
    default: return 0;
  }
  return gts * eff * lanes / 8.0;
}

const GpuSpec* FindGpu(std::string_view key) {
  for (const GpuSpec& g : GpuTable()) {
    // No copy per row: a script's key may be megabytes long.
    if (absl::EqualsIgnoreCase(Sv(g.key), Sv(key))) return &g;
  }
  return nullptr;
}

std::string GpuKeys() {
  std::vector<absl::string_view> keys;
  for (const GpuSpec& g : GpuTable()) keys.push_back(Sv(g.key));
  return absl::StrJoin(keys, ", ");
}

GpuMatch MatchGpu(const DeviceFacts& d) {
  GpuMatch m;
  const std::vector<std::string> name = Tokens(d.name);
  const bool amd = VendorIsAmd(d);
  int best = 0, best_tokens = 0;
  std::string_view best_pattern;
  for (const GpuSpec& g : GpuTable()) {
    int tokens = 0;
    std::string_view pattern;
    for (std::string_view p : g.match) {
      const int t = p.empty() ? 0 : PatternTokens(name, p);
      if (t > tokens) tokens = t, pattern = p;
    }
    const bool sm = d.sm_count > 0 && d.sm_count == g.sm_count;
    const bool mem = MemoryAgrees(g, d.total_memory_bytes);
    const bool cc = d.cc_major > 0 && d.cc_major == g.cc_major && d.cc_minor == g.cc_minor;
    int score = 0;
    if (tokens > 0) {
      score = 10 * tokens + (sm ? 4 : 0) + (mem ? 2 : 0) + (cc ? 1 : 0);
    } else if (sm && mem && cc && amd == (g.vendor == Vendor::kAmd)) {
      score = 7;  // no name match: every recorded property agrees
    }
    if (score > best) best = score, best_tokens = tokens, best_pattern = pattern, m.spec = &g;
  }
  if (m.spec == nullptr) return m;
  const GpuSpec& g = *m.spec;
  std::vector<std::string> facts;
  if (best_tokens > 0) {
    facts.push_back(absl::StrCat("device name '", Sv(d.name), "' (pattern '", Sv(best_pattern), "')"));
  } else {
    facts.push_back(absl::StrCat("deviceProperties of '", Sv(d.name), "' (no name pattern matched)"));
  }
  if (d.sm_count > 0) {
    facts.push_back(d.sm_count == g.sm_count
                        ? absl::StrCat(d.sm_count, " SMs")
                        : absl::StrCat(d.sm_count, " SMs (the table says ", g.sm_count, ")"));
  }
  if (d.total_memory_bytes > 0) {
    const double gib = static_cast<double>(d.total_memory_bytes) / kGiB;
    facts.push_back(MemoryAgrees(g, d.total_memory_bytes)
                        ? absl::StrFormat("%.0f GiB", gib)
                        : absl::StrFormat("%.0f GiB (the table says %g GB)", gib, g.memory_gb));
  }
  if (d.cc_major > 0) facts.push_back(absl::StrCat("compute capability ", d.cc_major, ".", d.cc_minor));
  m.how = absl::StrJoin(facts, ", ");
  return m;
}

}  // namespace reverie::hardware
