// Several traces loaded at once (whatif::LoadAndSimulateAll): the same
// graphs and baselines as one at a time, in the order given, whatever the
// thread count; the error of the first path that fails, in that order; and
// the progress callback never entered by two threads at once.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "whatif/pipeline.h"

namespace reverie {
namespace {

using ::testing::HasSubstr;

const std::string kExamples = std::string(REVERIE_SOURCE_DIR) + "/examples/";

TEST(LoadAllTest, SameAsOneAtATimeInTheOrderGiven) {
  const std::vector<std::string> paths = {kExamples + "ddp_rank1.json", kExamples + "tiny_mlp_training.json",
                                          kExamples + "ddp_rank0.json"};
  for (int threads : {1, 2, 3}) {
    absl::StatusOr<std::vector<std::unique_ptr<whatif::LoadedTrace>>> all =
        whatif::LoadAndSimulateAll(paths, {}, threads);
    ASSERT_TRUE(all.ok()) << all.status();
    ASSERT_EQ(all->size(), paths.size());
    for (size_t i = 0; i < paths.size(); ++i) {
      absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> one = whatif::LoadAndSimulate(paths[i]);
      ASSERT_TRUE(one.ok()) << one.status();
      const whatif::LoadedTrace& a = *(*all)[i];
      const whatif::LoadedTrace& b = **one;
      EXPECT_EQ(a.path, paths[i]);
      EXPECT_EQ(a.graph.task_count(), b.graph.task_count()) << paths[i];
      EXPECT_EQ(a.graph.edge_count(), b.graph.edge_count()) << paths[i];
      EXPECT_EQ(a.baseline.start_ns, b.baseline.start_ns) << paths[i];
      EXPECT_EQ(a.baseline.end_ns, b.baseline.end_ns) << paths[i];
      EXPECT_EQ(a.baseline.mean_step_ns(), b.baseline.mean_step_ns()) << paths[i];
      EXPECT_EQ(a.model.facts.precision.compute, b.model.facts.precision.compute) << paths[i];
    }
  }
}

TEST(LoadAllTest, TheFirstFailingPathInOrderNamesTheError) {
  const std::string missing = kExamples + "no_such_trace.json";
  const std::string not_json = kExamples + "README.md";
  for (int threads : {1, 2, 4}) {
    absl::StatusOr<std::vector<std::unique_ptr<whatif::LoadedTrace>>> all = whatif::LoadAndSimulateAll(
        {kExamples + "tiny_mlp_training.json", missing, not_json}, {}, threads);
    ASSERT_FALSE(all.ok());
    EXPECT_THAT(all.status().message(), HasSubstr("no_such_trace.json")) << threads;
    all = whatif::LoadAndSimulateAll({not_json, missing}, {}, threads);
    ASSERT_FALSE(all.ok());
    EXPECT_THAT(all.status().message(), HasSubstr("README.md")) << threads;
  }
}

TEST(LoadAllTest, ProgressIsReportedFromOneThreadAtATime) {
  std::atomic<int> inside{0}, most{0}, calls{0};
  whatif::LoadOptions o;
  o.progress = [&](int, std::string_view) {
    const int now = ++inside;
    most = std::max(most.load(), now);
    ++calls;
    --inside;
  };
  absl::StatusOr<std::vector<std::unique_ptr<whatif::LoadedTrace>>> all = whatif::LoadAndSimulateAll(
      {kExamples + "ddp_rank0.json", kExamples + "ddp_rank1.json"}, o, 2);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(calls.load(), 6);  // three stages a trace
  EXPECT_EQ(most.load(), 1);
}

}  // namespace
}  // namespace reverie
