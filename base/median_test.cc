#include "base/median.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace reverie {
namespace {

TEST(MedianTest, TheUpperMedianIsASample) {
  std::vector<int64_t> odd = {9, 1, 5}, even = {4, 1, 3, 2}, none;
  EXPECT_EQ(UpperMedianInPlace(odd), 5);
  EXPECT_EQ(UpperMedianInPlace(even), 3);  // index 2 of 1 2 3 4
  EXPECT_EQ(UpperMedianInPlace(none, 7), 7);
  EXPECT_EQ(UpperMedianInPlace(none), 0);
}

TEST(MedianTest, AnEvenCountTakesTheMeanOfTheMiddleTwo) {
  std::vector<int64_t> odd = {9, 1, 5}, even = {4, 1, 3, 2}, none;
  EXPECT_EQ(MedianInPlace(odd), 5.0);
  EXPECT_EQ(MedianInPlace(even), 2.5);
  EXPECT_EQ(MedianInPlace(none), 0.0);
  std::vector<int64_t> repeated(10, 100);
  repeated.insert(repeated.end(), 10, 300);
  EXPECT_EQ(MedianInPlace(repeated), 200.0);
}

}  // namespace
}  // namespace reverie
