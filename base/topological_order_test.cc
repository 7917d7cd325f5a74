#include "base/topological_order.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reverie {
namespace {

using ::testing::ElementsAre;

// 0 -> 2, 1 -> 2, 2 -> 3; slot 4 is not a node.
struct Diamond {
  std::vector<std::vector<uint32_t>> out = {{2}, {2}, {3}, {}, {}};
  std::vector<uint32_t> pending = {0, 0, 2, 1, kNotANode};
  auto children() {
    return [this](uint32_t i, auto visit) {
      for (uint32_t c : out[i]) visit(c);
    };
  }
};

TEST(TopologicalOrder, ParentsComeFirstReadyNodesLastInFirstOut) {
  Diamond d;
  std::vector<uint32_t> order;
  const TopologicalResult r = TopologicalOrder(d.pending, d.children(), [&](uint32_t i) { order.push_back(i); });
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.nodes, 4u);
  EXPECT_THAT(order, ElementsAre(1, 0, 2, 3));
  EXPECT_EQ(r.FirstUnordered(), kNotANode);
}

TEST(TopologicalOrder, ByKeyTakesTheSmallestReadyKey) {
  Diamond d;
  const std::vector<int64_t> key = {5, 9, 0, 0, 0};
  std::vector<uint32_t> order;
  TopologicalOrderBy(d.pending, d.children(), [&](uint32_t i) { return key[i]; },
                     [&](uint32_t i) { order.push_back(i); });
  EXPECT_THAT(order, ElementsAre(0, 1, 2, 3));
}

TEST(TopologicalOrder, ACycleLeavesItsNodesAndWhatFollowsUnordered) {
  Diamond d;
  d.out[3] = {2};  // 2 -> 3 -> 2
  d.pending[2] = 3;
  std::vector<uint32_t> order;
  const TopologicalResult r = TopologicalOrder(d.pending, d.children(), [&](uint32_t i) { order.push_back(i); });
  EXPECT_FALSE(r.complete());
  EXPECT_THAT(order, ElementsAre(1, 0));
  EXPECT_EQ(r.FirstUnordered(), 2u);
}

}  // namespace
}  // namespace reverie
