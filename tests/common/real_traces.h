// File: tests/common/real_traces.h
//
// Where the real-trace suite finds ../shared/traces: $REVERIE_TRACES, else the
// folder beside the checkout. Tests call RequireTraces() / TracePath() and
// skip with a clear message when the traces are absent, so the test command
// passes on a fresh machine.
#ifndef REVERIE_TESTS_COMMON_REAL_TRACES_H_
#define REVERIE_TESTS_COMMON_REAL_TRACES_H_

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "gtest/gtest.h"

namespace reverie::testing {

// The shared traces several suites name (MANIFEST.md says what each holds),
// relative to the traces folder.
// HTA's NCCL parser sample: two-rank data-parallel training, NCCL all-reduce
// and broadcast kernels on their own stream, sized allreduce Collective records.
inline constexpr char kNcclTrace[] =
    "facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz";
// ResNet DDP training with activation checkpointing, bf16, 8 ranks, MI300X;
// GPU-bound (97% busy), RCCL's generic kernels.
inline constexpr char kMi300DdpTrace[] =
    "AMD-AGI__TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz";
// Kineto's ResNet-50 sample: V100, batch 32, the DataLoader in the main thread.
inline constexpr char kResnetSampleTrace[] =
    "pytorch__kineto/tb_plugin/samples/resnet50_num_workers_0/"
    "worker0.1623143089861.pt.trace.json.gz";
// The data-bottleneck study's num_workers 8, batch 16 run (pair D1's AFTER, B1's BEFORE).
inline constexpr char kLoaderBs16Trace[] =
    "JonathanHourany__pytorch-sandbox/profiling/data-bottleneck/profiler-output/"
    "num-workers-8-batch-size-16/trace-num-workers-8-batch-size-16.json";
// FP32 ResNet training on an RTX 2080 Ti, CPU-bound, 30 steps, no step
// markers, no layer hooks.
inline constexpr char kRtxResnetTrace[] =
    "facebookresearch__param/et_replay/tests/inputs/resnet_kineto.json.gz";
// GPU-bound ResNet-like training on a V100, 5 ProfilerSteps.
inline constexpr char kV100Trace[] =
    "facebookresearch__HolisticTraceAnalysis/tests/data/ns_resolution_trace/"
    "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz";
// HTA's largest sample (2.08 M tasks), the performance benchmarks' input.
inline constexpr char kDfIndexResolverTrace[] =
    "facebookresearch__HolisticTraceAnalysis/tests/data/df_index_resolver/"
    "df_index_resolver.json.gz";
// A transformer from the torch-profiling tutorial, with input shapes recorded.
inline constexpr char kTransformerTutorialTrace[] =
    "Quentin-Anthony__torch-profiling-tutorial/log/transformer/"
    "dc3b0e7228dd_851.1752215573993169006.pt.trace.json";

inline std::string TracesDir() {
  if (const char* env = std::getenv("REVERIE_TRACES"); env != nullptr && *env != '\0') return env;
#ifdef REVERIE_DEFAULT_TRACES
  return REVERIE_DEFAULT_TRACES;
#else
  return "../shared/traces";
#endif
}

// Full path of a trace given its path relative to the traces folder, or ""
// when it is not there. A trace missing from a folder that is there (it has
// its MANIFEST.md) is a failure, not a skip: a renamed trace would otherwise
// leave its checks silently unrun.
inline std::string TracePath(const std::string& relative) {
  const std::filesystem::path root(TracesDir());
  const std::filesystem::path p = root / relative;
  if (std::filesystem::exists(p)) return p.string();
  if (std::filesystem::exists(root / "MANIFEST.md")) {
    ADD_FAILURE() << relative << " is not under " << root.string()
                  << " although its MANIFEST.md is: renamed or removed?";
  }
  return std::string();
}

// Every Kineto trace under the shared folder (execution traces excluded),
// relative to it; one empty entry when there are none, so a suite
// parameterized on it skips with a message instead of vanishing.
inline std::vector<std::string> AllKinetoTraces() {
  std::vector<std::string> out;
  const std::filesystem::path root(TracesDir());
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string name = it->path().filename().string();
    const bool json = name.ends_with(".json") || name.ends_with(".json.gz");
    if (!json || name.find("_et.") != std::string::npos) continue;
    out.push_back(std::filesystem::relative(it->path(), root).string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) out.push_back("");
  return out;
}

// A gtest-safe name for a parameter that is a trace's relative path.
inline std::string TraceTestName(size_t index, const std::string& relative) {
  std::string n = std::to_string(index);
  for (char c : relative) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n.substr(0, 120);
}

}  // namespace reverie::testing

// Skips the current test when a trace is missing, saying which and where.
#define REVERIE_REQUIRE_TRACE(var, relative)                                           \
  const std::string var = ::reverie::testing::TracePath(relative);                     \
  if (var.empty()) {                                                                   \
    GTEST_SKIP() << "real trace " << (relative) << " not found under "                 \
                 << ::reverie::testing::TracesDir() << " (set REVERIE_TRACES)";        \
  }

#endif  // REVERIE_TESTS_COMMON_REAL_TRACES_H_
