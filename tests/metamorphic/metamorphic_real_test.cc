// Metamorphic tests over every shared Kineto trace (issue 29): relations
// between runs that must hold whatever the trace holds, so they catch silent
// wrong answers that no example with a known answer does.
//
// 1. Format: the trace imported, written as a .pb (reverie import) and read
//    back gives the same graph, the same baseline and the same prediction.
// 2. Order: the JSON with its traceEvents shuffled gives the same graph and
//    the same times (a profiler writes events in no promised order).
// 3. Identity: a script that changes nothing predicts exactly the baseline
//    (one simulation rule for both, no drift from copying or committing).
// 4. Scale: the trace with every time stretched by k (ts around the first
//    event, dur), and the builder's thresholds with them, reports every time
//    (measured and simulated steps, the breakdown, each task) exactly k times
//    longer, and a scale-free prediction k times within its own rounding.
//
// A trace the pipeline refuses (no GPU work) must be refused the same way in
// every variant. Runtime: each test loads its trace twice (about a second for
// the largest, 56 MB); the relations use a few scripts, every trace.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "depgraph/breakdown.h"
#include "depgraph/critical_path.h"
#include "depgraph/step_time.h"
#include "frameworks/trace_loader.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "base/sv.h"
#include "proto/trace_io.h"
#include "tests/common/real_traces.h"
#include "tests/metamorphic/trace_text.h"
#include "whatif/pipeline.h"

namespace reverie::whatif {
namespace {

using depgraph::Graph;
using ::reverie::testing::FindEvents;
using ::reverie::testing::ReadText;
using ::reverie::testing::Shuffled;
using ::reverie::testing::Stretched;
using depgraph::SimResult;
using depgraph::TaskId;

// Every Kineto trace under ../shared/traces (the execution traces *_et.json.gz
// are not profiler traces); EveryKinetoTraceIsListed checks the folder holds
// no other.
const char* const kTraces[] = {
    "AMD-AGI__TraceLens/tests/traces/b200/eager_trace.json.gz",
    "AMD-AGI__TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
    "AMD-AGI__TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "AMD-AGI__TraceLens/tests/traces/h100/"
    "facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    "AMD-AGI__TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "AMD-AGI__TraceLens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    "AMD-AGI__TraceLens/tests/traces/mi300/Falconsai_nsfw_image_detection__1016002.json.gz",
    "AMD-AGI__TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz",
    "AMD-AGI__TraceLens/tests/traces/mi300/"
    "facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    testing::kMi300DdpTrace,
    "AMD-AGI__TraceLens/tests/traces/torch_compile_triton/trace.json.gz",
    "HazyResearch__zoology/trace.json",
    "JeremyMorlier__GPUModel/trace.json",
    "JeremyMorlier__GPUModel/trace2.json",
    "JeremyMorlier__GPUModel/trace3.json",
    "JonathanHourany__pytorch-sandbox/profiling/data-bottleneck/profiler-output/"
    "num-workers-0-batch-size-16/trace-num-workers-0-batch-size-16.json",
    testing::kLoaderBs16Trace,
    "JonathanHourany__pytorch-sandbox/profiling/data-bottleneck/profiler-output/"
    "num-workers-8-batch-size-2056/trace-num-workers-8-batch-size-2056.json",
    testing::kTransformerTutorialTrace,
    "Quentin-Anthony__torch-profiling-tutorial/log/transformer/"
    "dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json",
    "anupambhatnagar__GPUPuzzlers/streams/blocking/blocking_streams.json.gz",
    "anupambhatnagar__GPUPuzzlers/streams/non_blocking/non_blocking_streams.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/amd_trace/"
    "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/call_stack/backward_thread.json",
    "facebookresearch__HolisticTraceAnalysis/tests/data/cpu_only/"
    "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/critical_path/alexnet/"
    "benchmark_result_2869224_1695835535_trace.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync/"
    "event_sync_trace.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync_multi_stream/"
    "event_sync_trace.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/critical_path/simple_add/"
    "benchmark_result_493459_1694039959_trace.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/cupti_profiler/"
    "benchmark_result_924719_1679055439_trace.json.gz",
    testing::kDfIndexResolverTrace,
    "facebookresearch__HolisticTraceAnalysis/tests/data/execution_trace/"
    "benchmark_simple_add_trace.json.gz",
    testing::kNcclTrace,
    "facebookresearch__HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/"
    "rank0.json.gz",
    testing::kV100Trace,
    "facebookresearch__HolisticTraceAnalysis/tests/data/rank_non_gpu/rank_non_gpu.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/triton_example/triton_example.json.gz",
    "facebookresearch__HolisticTraceAnalysis/tests/data/with_gpu_user_annotation/"
    "step_based_trace_2543932.json.gz",
    "facebookresearch__param/et_replay/tests/inputs/linear_kineto.json.gz",
    testing::kRtxResnetTrace,
    "pytorch__kineto/docs/traces/before_fix_trace.json",
    testing::kResnetSampleTrace,
    "pytorch__kineto/tb_plugin/test/gpu_metrics_input.json",
};

// The scripts predictions are compared with: one that changes the graph's
// structure and schedule (amp: inserted kernels, a sync, shrunk kernels) and
// one that only scales (scale-free, for the Scale relation).
constexpr char kHalveKernels[] = "graph:select{kind = 'kernel'}:scale(0.5)\n";

// ---- comparing runs --------------------------------------------------------

void ExpectSameGraph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.task_count(), b.task_count());
  ASSERT_EQ(a.resource_count(), b.resource_count());
  for (uint32_t r = 0; r < a.resource_count(); ++r) {
    const depgraph::Resource& x = a.resource(depgraph::ResourceId(r));
    const depgraph::Resource& y = b.resource(depgraph::ResourceId(r));
    EXPECT_EQ(x.name, y.name) << "resource " << r;
    EXPECT_EQ(x.kind, y.kind) << "resource " << r;
  }
  int mismatches = 0;
  for (uint32_t i = 0; i < a.task_count() && mismatches < 5; ++i) {
    const TaskId t(i);
    const bool same = a.kind(t) == b.kind(t) && a.name(t) == b.name(t) &&
                      a.duration_ns(t) == b.duration_ns(t) && a.gap_ns(t) == b.gap_ns(t) &&
                      a.resource_of(t) == b.resource_of(t) && a.step_of(t) == b.step_of(t) &&
                      a.phase(t) == b.phase(t) && a.removed(t) == b.removed(t) &&
                      (a.layer_of(t).valid() ? std::string_view(a.layer(a.layer_of(t)).path) : "") ==
                          (b.layer_of(t).valid() ? std::string_view(b.layer(b.layer_of(t)).path) : "");
    if (!same) {
      ++mismatches;
      ADD_FAILURE() << "task " << i << ": " << a.name(t) << " / " << b.name(t) << ", duration "
                    << a.duration_ns(t) << " / " << b.duration_ns(t) << ", gap " << a.gap_ns(t)
                    << " / " << b.gap_ns(t);
    }
  }
  ASSERT_EQ(a.live_edge_count(), b.live_edge_count());
  auto edges = [](const Graph& g) {
    std::vector<std::tuple<uint32_t, uint32_t, int, int32_t>> out;
    for (const depgraph::Edge& e : g.edges()) {
      if (!e.removed) out.emplace_back(e.src.value(), e.dst.value(), static_cast<int>(e.kind), e.delay_ns);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_TRUE(edges(a) == edges(b)) << "the edges differ";
}

void ExpectSameSim(const SimResult& a, const SimResult& b) {
  ASSERT_EQ(a.start_ns.size(), b.start_ns.size());
  EXPECT_TRUE(a.start_ns == b.start_ns) << "simulated starts differ";
  EXPECT_TRUE(a.end_ns == b.end_ns) << "simulated ends differ";
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].start_ns, b.steps[i].start_ns) << "step " << i;
    EXPECT_EQ(a.steps[i].end_ns, b.steps[i].end_ns) << "step " << i;
  }
}

// The graph as a multiset of tasks (all but their ids) and the number of
// edges of each kind: what does not depend on the order in which tied
// events (the same start and end on one thread) were numbered.
void ExpectSameTasks(const Graph& a, const Graph& b) {
  auto tasks = [](const Graph& g) {
    std::vector<std::string> out;
    for (uint32_t i = 0; i < g.task_count(); ++i) {
      const TaskId t(i);
      if (g.removed(t)) continue;
      out.push_back(absl::StrCat(static_cast<int>(g.kind(t)), "|", Sv(g.name(t)), "|", g.duration_ns(t), "|",
                                 g.gap_ns(t), "|", g.resource(g.resource_of(t)).name, "|", g.step_of(t),
                                 "|", static_cast<int>(g.phase(t)), "|",
                                 g.layer_of(t).valid() ? g.layer(g.layer_of(t)).path : ""));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> ta = tasks(a), tb = tasks(b);
  if (ta != tb) {
    std::vector<std::string> only_a, only_b;
    std::set_difference(ta.begin(), ta.end(), tb.begin(), tb.end(), std::back_inserter(only_a));
    std::set_difference(tb.begin(), tb.end(), ta.begin(), ta.end(), std::back_inserter(only_b));
    std::string shown;
    for (size_t i = 0; i < std::min<size_t>(3, only_a.size()); ++i) shown += "\n  - " + only_a[i];
    for (size_t i = 0; i < std::min<size_t>(3, only_b.size()); ++i) shown += "\n  + " + only_b[i];
    ADD_FAILURE() << only_a.size() << " tasks differ:" << shown;
  }
  auto kinds = [](const Graph& g) {
    std::vector<int> n(depgraph::kEdgeKindCount, 0);
    for (const depgraph::Edge& e : g.edges()) n[static_cast<int>(e.kind)] += !e.removed;
    return n;
  };
  EXPECT_TRUE(kinds(a) == kinds(b)) << "the edges differ";
}

// What a user reads of a simulation: the steps, the makespan, the breakdown.
void ExpectSameTimes(const Graph& ga, const SimResult& a, const Graph& gb, const SimResult& b) {
  EXPECT_EQ(a.makespan_ns, b.makespan_ns);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].start_ns, b.steps[i].start_ns) << "step " << i;
    EXPECT_EQ(a.steps[i].end_ns, b.steps[i].end_ns) << "step " << i;
  }
  const depgraph::GraphBreakdown x = depgraph::ComputeBreakdown(ga, a);
  const depgraph::GraphBreakdown y = depgraph::ComputeBreakdown(gb, b);
  ASSERT_EQ(x.steps.size(), y.steps.size());
  for (size_t i = 0; i < x.steps.size(); ++i) {
    for (const auto& [p, q] : {std::pair{x.steps[i].simulated, y.steps[i].simulated},
                               std::pair{x.steps[i].measured, y.steps[i].measured}}) {
      EXPECT_EQ(p.cpu_only_ns, q.cpu_only_ns) << "step " << i;
      EXPECT_EQ(p.gpu_only_ns, q.gpu_only_ns) << "step " << i;
      EXPECT_EQ(p.overlap_ns, q.overlap_ns) << "step " << i;
      EXPECT_EQ(p.idle_ns, q.idle_ns) << "step " << i;
    }
  }
}

absl::StatusOr<Prediction> PredictWith(const LoadedTrace& t, const std::string& name,
                                       const std::string& code) {
  ScriptSpec spec;
  if (code.empty()) {
    spec.scripts = {name};
  } else {
    spec.scripts = {name};
    spec.sources = {{name, code}};
  }
  return Predict(t, spec);
}

std::string TempFile(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "reverie_metamorphic";
  std::filesystem::create_directories(dir);
  return (dir / (std::to_string(::getpid()) + "_" + name)).string();
}

// The message without the file's path (variants live at other paths).
std::string WithoutPath(const absl::Status& s, const std::string& path) {
  std::string m(s.message());
  for (size_t at; (at = m.find(path)) != std::string::npos;) m.replace(at, path.size(), "TRACE");
  return m;
}

class MetamorphicTest : public ::testing::TestWithParam<const char*> {
 protected:
  // Loads the trace (skips when absent); false when the pipeline refuses it.
  bool LoadOriginal(const std::string& path, LoadOptions options = {}) {
    absl::StatusOr<std::unique_ptr<LoadedTrace>> t = LoadAndSimulate(path, options);
    if (!t.ok()) {
      original_error_ = WithoutPath(t.status(), path);
      return false;
    }
    original_ = *std::move(t);
    return true;
  }

  // Loads a variant written to `variant`; when the original was refused,
  // expects the same refusal and returns null.
  std::unique_ptr<LoadedTrace> LoadVariant(const std::string& variant, LoadOptions options = {}) {
    absl::StatusOr<std::unique_ptr<LoadedTrace>> t = LoadAndSimulate(variant, options);
    std::filesystem::remove(variant);
    if (original_ == nullptr) {
      EXPECT_FALSE(t.ok()) << "the original was refused: " << original_error_;
      if (!t.ok()) {
        EXPECT_EQ(WithoutPath(t.status(), variant), original_error_);
      }
      return nullptr;
    }
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *std::move(t) : nullptr;
  }

  std::unique_ptr<LoadedTrace> original_;
  std::string original_error_;
};

TEST_P(MetamorphicTest, PbExportGivesTheSameGraphAndPrediction) {
  REVERIE_REQUIRE_TRACE(path, GetParam());
  if (!LoadOriginal(path)) {
    // Refused after import: the .pb of the import is refused the same way.
    absl::StatusOr<Trace> trace = LoadTraceFile(path);
    ASSERT_TRUE(trace.ok()) << trace.status();
    const std::string pb = TempFile("refused.pb");
    ASSERT_TRUE(WriteTrace(*trace, pb).ok());
    LoadVariant(pb);
    return;
  }
  const std::string pb = TempFile("export.pb");
  ASSERT_TRUE(WriteTrace(original_->trace, pb).ok());
  const std::unique_ptr<LoadedTrace> back = LoadVariant(pb);
  ASSERT_NE(back, nullptr);
  ExpectSameGraph(original_->graph, back->graph);
  ExpectSameSim(original_->baseline, back->baseline);
  absl::StatusOr<Prediction> a = PredictWith(*original_, "amp.lua", "");
  absl::StatusOr<Prediction> b = PredictWith(*back, "amp.lua", "");
  ASSERT_EQ(a.ok(), b.ok()) << a.status() << " / " << b.status();
  if (!a.ok()) {
    EXPECT_EQ(a.status().message(), b.status().message());
    return;
  }
  ExpectSameGraph(a->graph, b->graph);
  ExpectSameSim(a->sim, b->sim);
}

TEST_P(MetamorphicTest, ShuffledEventsChangeNothing) {
  REVERIE_REQUIRE_TRACE(path, GetParam());
  LoadOriginal(path);
  const std::string text = ReadText(path);
  const std::string shuffled = Shuffled(text, 29);
  ASSERT_EQ(FindEvents(shuffled).events.size(), FindEvents(text).events.size());
  const std::string variant = TempFile("shuffled.json");
  std::ofstream(variant, std::ios::binary) << shuffled;
  const std::unique_ptr<LoadedTrace> back = LoadVariant(variant);
  if (original_ == nullptr) return;
  ASSERT_NE(back, nullptr);
  // What a user reads first (the tasks whatever their numbering, the times),
  // then the graph itself: ties are broken by content (correlation and
  // external ids), so even the numbering is the same, and with it every
  // prediction.
  ExpectSameTasks(original_->graph, back->graph);
  ExpectSameTimes(original_->graph, original_->baseline, back->graph, back->baseline);
  ExpectSameGraph(original_->graph, back->graph);
  ExpectSameSim(original_->baseline, back->baseline);
}

TEST_P(MetamorphicTest, ScriptsThatChangeNothingPredictTheBaseline) {
  REVERIE_REQUIRE_TRACE(path, GetParam());
  if (!LoadOriginal(path)) {
    // Nothing to predict: a trace without GPU work is refused in one line.
    EXPECT_NE(original_error_.find("TRACE: "), std::string::npos) << original_error_;
    return;
  }
  const char* const kNoOps[] = {
      "",
      "graph:all():scale(1)",
      "graph:select{kind = 'kernel'}:shrink(1)",
      "for t in graph:all():tasks() do t.duration_ns = t.duration_ns; t.gap_ns = t.gap_ns end",
      "graph:remove(graph:none()) graph:set_policy('earliest_ready') local tl = graph:simulate()",
  };
  for (const char* code : kNoOps) {
    SCOPED_TRACE(code);
    absl::StatusOr<Prediction> p = PredictWith(*original_, "noop.lua", std::string(code) + "\n");
    if (!p.ok()) {
      // Only a trace whose steps take 0 us has no prediction (D27).
      EXPECT_NE(p.status().message().find("takes 0 us"), std::string::npos) << p.status();
      continue;
    }
    EXPECT_EQ(p->changes.added + p->changes.removed + p->changes.modified, 0);
    ExpectSameSim(original_->baseline, p->sim);
  }
}

// The shipped scripts at the settings that ask for no change (the batch x1,
// the network x1, a DataLoader as recorded) predict exactly the baseline,
// or refuse in one line: a script that re-estimates what it was not asked to
// change (batch_size.lua once retimed every copy by the model's rate at x1,
// 0.6% slower on Kineto's ResNet-50 sample) points the wrong way.
TEST_P(MetamorphicTest, ShippedScriptsAtTheirNeutralSettingsPredictTheBaseline) {
  REVERIE_REQUIRE_TRACE(path, GetParam());
  if (!LoadOriginal(path)) return;  // refused before any script: the test above checks it
  const std::pair<const char*, const char*> kNeutral[] = {
      {"batch_size.lua", "factor=1"},
      {"faster_network.lua", "speedup=1"},
      {"dataloader.lua", "num_workers=0"},
  };
  for (const auto& [script, setting] : kNeutral) {
    SCOPED_TRACE(absl::StrCat(script, " ", setting));
    ScriptSpec spec;
    spec.scripts = {script};
    const std::string_view kv(setting);
    const size_t eq = kv.find('=');
    spec.settings = {{std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1))}};
    absl::StatusOr<Prediction> p = Predict(*original_, spec);
    if (!p.ok()) {
      // A refusal says why in one line (the trace lacks what the script needs).
      const std::string m(p.status().message());
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
      EXPECT_TRUE(m.find("refused") != std::string::npos ||
                  m.find("takes 0 us") != std::string::npos)
          << m;
      continue;
    }
    ExpectSameSim(original_->baseline, p->sim);
  }
}

// |x_k - k x| <= slack_ns.
void ExpectScaled(int64_t scaled, int64_t base, int k, int64_t slack_ns, const std::string& what) {
  const double want = static_cast<double>(base) * k;
  EXPECT_NEAR(static_cast<double>(scaled), want, static_cast<double>(slack_ns)) << what;
}

TEST_P(MetamorphicTest, StretchingTimeStretchesEveryReportedTime) {
  REVERIE_REQUIRE_TRACE(path, GetParam());
  constexpr int k = 3;
  LoadOptions scaled_options;
  depgraph::BuildOptions& o = scaled_options.build;
  o.stream_gap_cap_ns *= k;
  o.max_launch_latency_ns *= k;
  o.explain_tolerance_ns *= k;
  o.cross_stream_window_ns *= k;
  o.sync_tolerance_ns *= k;
  o.inter_thread_gap_ns *= k;
  o.inter_thread_window_ns *= k;
  o.autograd_gap_ns *= k;
  LoadOriginal(path);
  const std::string variant = TempFile("stretched.json");
  std::ofstream(variant, std::ios::binary) << Stretched(ReadText(path), k);
  const std::unique_ptr<LoadedTrace> s = LoadVariant(variant, scaled_options);
  if (original_ == nullptr) return;
  ASSERT_NE(s, nullptr);
  const Graph& g = original_->graph;
  ASSERT_EQ(g.task_count(), s->graph.task_count());
  ASSERT_EQ(g.live_edge_count(), s->graph.live_edge_count());
  // The shared traces give times in whole ns (at most 3 decimals of us) and
  // the stretched text is exact, so import, build and simulation are exactly
  // linear: no slack. (A trace with finer decimals would round each time to
  // a ns before the stretch and after it: about k ns per time.)
  const int64_t slack = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    ExpectScaled(s->graph.duration_ns(t), g.duration_ns(t), k, slack, "duration of " + std::string(g.name(t)));
    ExpectScaled(s->graph.gap_ns(t), g.gap_ns(t), k, slack, "gap of " + std::string(g.name(t)));
    if (::testing::Test::HasFailure()) return;
  }
  const int64_t path_slack = 0;
  const SimResult& a = original_->baseline;
  const SimResult& b = s->baseline;
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    ExpectScaled(b.steps[i].duration_ns(), a.steps[i].duration_ns(), k, path_slack,
                 "simulated step " + std::to_string(i));
  }
  ExpectScaled(b.makespan_ns, a.makespan_ns, k, path_slack, "makespan");
  const std::vector<depgraph::StepTime> ma = depgraph::MeasuredSteps(g);
  const std::vector<depgraph::StepTime> mb = depgraph::MeasuredSteps(s->graph);
  ASSERT_EQ(ma.size(), mb.size());
  for (size_t i = 0; i < ma.size(); ++i) {
    ExpectScaled(mb[i].duration_ns(), ma[i].duration_ns(), k, slack, "measured step " + std::to_string(i));
  }
  const depgraph::GraphBreakdown ba = depgraph::ComputeBreakdown(g, a);
  const depgraph::GraphBreakdown bb = depgraph::ComputeBreakdown(s->graph, b);
  ASSERT_EQ(ba.steps.size(), bb.steps.size());
  for (size_t i = 0; i < ba.steps.size(); ++i) {
    const depgraph::TimeSplit& x = ba.steps[i].simulated;
    const depgraph::TimeSplit& y = bb.steps[i].simulated;
    ExpectScaled(y.cpu_only_ns, x.cpu_only_ns, k, path_slack, "cpu only");
    ExpectScaled(y.gpu_only_ns, x.gpu_only_ns, k, path_slack, "gpu only");
    ExpectScaled(y.overlap_ns, x.overlap_ns, k, path_slack, "cpu + gpu");
    ExpectScaled(y.idle_ns, x.idle_ns, k, path_slack, "idle");
  }
  absl::StatusOr<Prediction> pa = PredictWith(*original_, "halve.lua", kHalveKernels);
  absl::StatusOr<Prediction> pb = PredictWith(*s, "halve.lua", kHalveKernels);
  ASSERT_EQ(pa.ok(), pb.ok()) << pa.status() << " / " << pb.status();
  if (pa.ok()) {
    // Halving rounds each odd duration to a ns: up to k ns per kernel on a
    // step's path.
    int64_t kernels = 0;
    for (uint32_t i = 0; i < g.task_count(); ++i) kernels += g.kind(TaskId(i)) == depgraph::TaskKind::kKernel;
    ExpectScaled(static_cast<int64_t>(pb->sim.mean_step_ns()),
                 static_cast<int64_t>(pa->sim.mean_step_ns()), k, k * (kernels + 1),
                 "predicted step");
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, MetamorphicTest, ::testing::ValuesIn(kTraces),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = std::to_string(info.index) + "_";
                           const std::string_view p = info.param;
                           const size_t slash = p.rfind('/');
                           for (char c : p.substr(slash == std::string_view::npos ? 0 : slash + 1)) {
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name.substr(0, 60);
                         });

// "Every shared trace": the list above is the folder's Kineto traces.
TEST(MetamorphicCoverageTest, EveryKinetoTraceIsListed) {
  const std::filesystem::path dir = ::reverie::testing::TracesDir();
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no traces at " << dir;
  std::vector<std::string> listed(std::begin(kTraces), std::end(kTraces));
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string rel = std::filesystem::relative(e.path(), dir).string();
    const bool json = rel.ends_with(".json") || rel.ends_with(".json.gz");
    if (!e.is_regular_file() || !json || rel.ends_with("_et.json.gz") || rel.ends_with("_et.json")) continue;
    EXPECT_NE(std::find(listed.begin(), listed.end(), rel), listed.end())
        << rel << " is not in the metamorphic tests' list";
  }
}

}  // namespace
}  // namespace reverie::whatif
