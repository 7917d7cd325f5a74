#include "transforms/selection.h"

#include "gtest/gtest.h"
#include "transforms/test_graphs.h"
#include "transforms/structure.h"

namespace reverie::transforms {
namespace {

Selection Ids(std::vector<uint32_t> v) {
  std::vector<TaskId> ids;
  for (uint32_t x : v) ids.push_back(TaskId(x));
  return Selection::FromUnsorted(ids);
}

TEST(SelectionTest, SetAlgebra) {
  const Selection a = Ids({5, 1, 3, 3, 9});
  const Selection b = Ids({3, 4, 9, 10});
  EXPECT_EQ(a.size(), 4u);  // deduplicated
  EXPECT_EQ(a.Union(b), Ids({1, 3, 4, 5, 9, 10}));
  EXPECT_EQ(a.Intersect(b), Ids({3, 9}));
  EXPECT_EQ(a.Minus(b), Ids({1, 5}));
  EXPECT_TRUE(a.Contains(TaskId(5)));
  EXPECT_FALSE(a.Contains(TaskId(4)));
  EXPECT_TRUE(Selection().Intersect(a).empty());
}

TEST(SelectionTest, LiveDropsRemovedTasks) {
  depgraph::Graph g = testing::MakeTrainingGraph(1);
  const Selection s = Ids({0, 1, 2});
  g.RemoveTasks({TaskId(1)});
  EXPECT_EQ(s.Live(g), Ids({0, 2}));
}

}  // namespace
}  // namespace reverie::transforms
