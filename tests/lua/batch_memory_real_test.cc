// batch_size.lua's memory and host-free models on the JonathanHourany batch
// pair (RTX 3080, batch 16 -> 2056, profile_memory=True): predicted from the
// batch-16 trace alone, checked against what the batch-2056 trace measured
// (issue 36's acceptance: the peak within 10%; issue 27's: the step within
// 25%). Skips when ../shared/traces is absent.
#include <cmath>
#include <string>
#include <vector>

#include "depgraph/memory_replay.h"
#include "depgraph/step_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/lua/real_graph.h"
#include "whatif/memory_fit.h"

namespace reverie {
namespace {

using testing::LoadOrFail;
using testing::Predict;
using testing::Prediction;

constexpr char kDir[] = "JonathanHourany__pytorch-sandbox/profiling/data-bottleneck/profiler-output/";
constexpr char kBatch16[] = "num-workers-8-batch-size-16/trace-num-workers-8-batch-size-16.json";
constexpr char kBatch2056[] = "num-workers-8-batch-size-2056/trace-num-workers-8-batch-size-2056.json";

// The GPU's peak allocated in a trace as measured: its events replayed at
// their measured times.
int64_t MeasuredPeak(const whatif::LoadedTrace& t) {
  const depgraph::TaskTimes m = depgraph::MeasuredTimes(t.graph);
  int64_t peak = -1;
  for (const depgraph::DevicePeak& d : depgraph::ReplayMemory(t.graph, m.start, m.end)) {
    if (d.device >= 0) peak = std::max(peak, d.peak);
  }
  return peak;
}

TEST(BatchMemoryRealTest, PredictedPeakOfTheLargerBatchIsWithinTenPercent) {
  REVERIE_REQUIRE_TRACE(before_path, std::string(kDir) + kBatch16);
  REVERIE_REQUIRE_TRACE(after_path, std::string(kDir) + kBatch2056);
  const whatif::LoadedTrace* before = LoadOrFail(before_path);
  const whatif::LoadedTrace* after = LoadOrFail(after_path);
  ASSERT_TRUE(before && after);
  const Prediction p = Predict(*before, {"batch_size.lua"}, {{"factor", "128.5"}});
  ASSERT_TRUE(p.status.ok()) << p.status;
  const std::vector<whatif::MemoryFit> fits =
      whatif::FitMemory(before->graph, before->baseline, p.graph, p.sim, before->model.devices);
  ASSERT_EQ(fits.size(), 1u);
  const double measured = static_cast<double>(MeasuredPeak(*after));
  ASSERT_GT(measured, 0);
  EXPECT_EQ(fits[0].base_peak, MeasuredPeak(*before)) << "the baseline replays the recorded order";
  EXPECT_GT(fits[0].pred_peak, fits[0].base_peak) << "a larger batch needs more memory";
  EXPECT_NEAR(static_cast<double>(fits[0].pred_peak) / measured, 1.0, 0.10)
      << "predicted " << fits[0].pred_peak << " B, measured " << measured << " B";
  EXPECT_TRUE(fits[0].fits()) << whatif::MemoryFitLine(fits[0]);
  EXPECT_EQ(fits[0].capacity_from, "deviceProperties");
}

TEST(BatchMemoryRealTest, FreeingTheLargerBatchOnTheHostLengthensTheStep) {
  REVERIE_REQUIRE_TRACE(before_path, std::string(kDir) + kBatch16);
  REVERIE_REQUIRE_TRACE(after_path, std::string(kDir) + kBatch2056);
  const whatif::LoadedTrace* before = LoadOrFail(before_path);
  const whatif::LoadedTrace* after = LoadOrFail(after_path);
  ASSERT_TRUE(before && after);
  const Prediction with = Predict(*before, {"batch_size.lua"}, {{"factor", "128.5"}});
  const Prediction without =
      Predict(*before, {"batch_size.lua"}, {{"factor", "128.5"}, {"release_per_byte", "false"}});
  ASSERT_TRUE(with.status.ok() && without.status.ok());
  bool logged = false;
  for (const std::string& line : with.reports[0].log) logged |= line.find("host buffers (6 frees)") != std::string::npos;
  EXPECT_TRUE(logged) << "the log names the frees it scaled";
  const double measured = testing::PeriodUs(after->baseline);
  EXPECT_GT(with.pred_us, without.pred_us + 1000) << "about 2 ms per step of unmapping the batch";
  EXPECT_LT(std::fabs(with.pred_us - measured) / measured, 0.25)
      << "predicted " << with.pred_us << " us, measured " << measured << " us";
  // A smaller batch frees less: never a longer step than the baseline's.
  const Prediction smaller = Predict(*before, {"batch_size.lua"}, {{"factor", "0.5"}});
  ASSERT_TRUE(smaller.status.ok());
  EXPECT_LE(smaller.pred_us, smaller.base_us);
}

// Kineto's 2021 schema records no addresses, so no free is tied to its
// allocation: the frees of the resized batch tensors are paired by size.
// Before, they returned the recorded size and every resized tensor leaked
// its growth: ResNet-50 at batch x2 peaked at 40.2 GiB for 2.6 GiB. A batch
// x2 now needs more than the baseline and at most twice it (activations
// double, weights and optimizer state do not); x0.5 needs less.
TEST(BatchMemoryRealTest, ATraceWithoutAddressesReturnsTheResizedTensors) {
  REVERIE_REQUIRE_TRACE(path, testing::kResnetSampleTrace);
  const whatif::LoadedTrace* t = LoadOrFail(path);
  ASSERT_TRUE(t);
  for (const char* factor : {"2", "0.5"}) {
    SCOPED_TRACE(factor);
    const Prediction p = Predict(*t, {"batch_size.lua"}, {{"factor", factor}});
    ASSERT_TRUE(p.status.ok()) << p.status;
    const std::vector<whatif::MemoryFit> fits =
        whatif::FitMemory(t->graph, t->baseline, p.graph, p.sim, t->model.devices);
    ASSERT_EQ(fits.size(), 1u);
    const double ratio =
        static_cast<double>(fits[0].pred_peak) / static_cast<double>(fits[0].base_peak);
    if (std::string(factor) == "2") {
      EXPECT_GT(ratio, 1.0);
      EXPECT_LE(ratio, 2.0);
    } else {
      EXPECT_LT(ratio, 1.0);
      EXPECT_GE(ratio, 0.5);
    }
    EXPECT_THAT(p.reports[0].log, ::testing::Contains(::testing::HasSubstr("paired by size")));
  }
}

// HTA's df_index_resolver records memory with addresses but no input
// shapes: before, batch x2 kept every size and predicted the trace's own
// 6.17 GiB peak ("fits"); now the forward's and backward's transients grow
// and the peak says it is an estimate, between the baseline's and twice it.
// The shape-based model, where shapes exist, is what the 10% check above
// measures; this estimate is checked only for its direction and its label.
TEST(BatchMemoryRealTest, WithoutShapesThePeakIsAnEstimateThatGrows) {
  REVERIE_REQUIRE_TRACE(path, testing::kDfIndexResolverTrace);
  const whatif::LoadedTrace* t = LoadOrFail(path);
  ASSERT_TRUE(t);
  const Prediction p = Predict(*t, {"batch_size.lua"}, {{"factor", "2"}});
  ASSERT_TRUE(p.status.ok()) << p.status;
  const std::vector<whatif::MemoryFit> fits =
      whatif::FitMemory(t->graph, t->baseline, p.graph, p.sim, t->model.devices);
  ASSERT_FALSE(fits.empty());
  for (const whatif::MemoryFit& f : fits) {
    EXPECT_GT(f.pred_peak, f.base_peak) << f.device;
    EXPECT_LE(f.pred_peak, 2 * f.base_peak) << f.device;
    EXPECT_THAT(whatif::MemoryFitLine(f), ::testing::HasSubstr("an estimate, likely high"));
  }
  EXPECT_THAT(p.reports[0].log, ::testing::Contains(::testing::HasSubstr("memory: an estimate")));
}

// The bytes scripts allocated per step in the forward and backward
// (events appended past the trace's).
int64_t ScriptAllocatedBytes(const depgraph::Graph& base, const depgraph::Graph& g) {
  int64_t sum = 0;
  const auto all = g.memory_events();
  for (size_t i = base.memory_events().size(); i < all.size(); ++i) {
    if (all[i].bytes > 0) sum += all[i].bytes;
  }
  return sum;
}

// amp.lua's half copies of the inputs are batch tensors: AMP then a batch
// change gives them the size a batch change then AMP makes (within a block
// of rounding each). Before, the first order left them at the old batch's
// size (the weights' copies keep theirs either way).
TEST(BatchMemoryRealTest, AmpsInputCopiesFollowALaterBatchChange) {
  REVERIE_REQUIRE_TRACE(path, std::string(kDir) + kBatch16);
  const whatif::LoadedTrace* t = LoadOrFail(path);
  ASSERT_TRUE(t);
  const std::vector<std::pair<std::string, std::string>> sets = {{"batch_size.factor", "8"}};
  const Prediction amp_first = Predict(*t, {"amp.lua", "batch_size.lua"}, sets);
  const Prediction batch_first = Predict(*t, {"batch_size.lua", "amp.lua"}, sets);
  const Prediction amp_only = Predict(*t, {"amp.lua"});
  ASSERT_TRUE(amp_first.status.ok() && batch_first.status.ok() && amp_only.status.ok());
  const int64_t a = ScriptAllocatedBytes(t->graph, amp_first.graph);
  const int64_t b = ScriptAllocatedBytes(t->graph, batch_first.graph);
  const int64_t one = ScriptAllocatedBytes(t->graph, amp_only.graph);
  ASSERT_GT(one, 0) << "amp.lua made its cast copies";
  EXPECT_GT(b, one) << "the input copies grew with the batch";
  const int64_t copies = static_cast<int64_t>(amp_first.graph.memory_events().size() -
                                              t->graph.memory_events().size()) /
                         2;
  EXPECT_NEAR(static_cast<double>(a), static_cast<double>(b), 512.0 * copies)
      << "AMP then batch x8: " << a << " B, batch x8 then AMP: " << b << " B";
}

}  // namespace
}  // namespace reverie
