#include "transforms/edit.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "transforms/select.h"
#include "transforms/test_graphs.h"

namespace reverie::transforms {
namespace {

class EditTest : public ::testing::Test {
 protected:
  depgraph::Graph g_ = testing::MakeTrainingGraph(1);
  Selection Kernels(const char* name) {
    TaskQuery q;
    q.kinds = KindBit(depgraph::TaskKind::kKernel);
    q.names = {name};
    return *Select(g_, q);
  }
};

TEST_F(EditTest, ScaleShrinkSetAdd) {
  const Selection gemm = Kernels("volta_sgemm_64x64_nn");  // 50us
  ASSERT_EQ(gemm.size(), 1u);
  const TaskId t = gemm[0];
  ASSERT_TRUE(ScaleDuration(g_, gemm, 0.5).ok());
  EXPECT_EQ(g_.duration_ns(t), 25'000);
  ASSERT_TRUE(ShrinkDuration(g_, gemm, 3).ok());
  EXPECT_EQ(g_.duration_ns(t), 8'333);  // rounded to the nearest ns
  ASSERT_TRUE(SetDuration(g_, gemm, 7).ok());
  EXPECT_EQ(g_.duration_ns(t), 7);
  ASSERT_TRUE(AddDuration(g_, gemm, -100).ok());
  EXPECT_EQ(g_.duration_ns(t), 0);  // clamped
  ASSERT_TRUE(SetGap(g_, gemm, 4).ok());
  ASSERT_TRUE(ScaleGap(g_, gemm, 2).ok());
  EXPECT_EQ(g_.gap_ns(t), 8);
  ASSERT_TRUE(SetPriority(g_, gemm, -3).ok());
  EXPECT_EQ(g_.priority(t), -3);
}

TEST_F(EditTest, RejectsBadFactorsWithoutChanging) {
  const Selection all = Kernels("*");
  const int64_t before = TotalDurationNs(g_, all);
  EXPECT_EQ(ScaleDuration(g_, all, -1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ScaleDuration(g_, all, std::nan("")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ShrinkDuration(g_, all, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ScaleGap(g_, all, std::numeric_limits<double>::infinity()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SetDuration(g_, all, -5).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TotalDurationNs(g_, all), before);
}

TEST_F(EditTest, SkipsRemovedMembers) {
  const Selection all = Kernels("*");
  g_.RemoveTasks({all[0]});
  ASSERT_TRUE(SetDuration(g_, all, 1).ok());
  EXPECT_EQ(TotalDurationNs(g_, all), static_cast<int64_t>(all.size()) - 1);
}

}  // namespace
}  // namespace reverie::transforms
