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

TEST(MedianTest, AQuantileIsTheSampleAtFloorQTimesNMinusOne) {
  std::vector<int64_t> ints = {90, 10, 50, 70, 30, 20, 80, 40, 60, 100, 0};
  EXPECT_EQ(QuantileInPlace(ints, 0.1, int64_t{-1}), 10);  // index 1 of 0 10 ... 100
  EXPECT_EQ(QuantileInPlace(ints, 0.0, int64_t{-1}), 0);
  EXPECT_EQ(QuantileInPlace(ints, 1.0, int64_t{-1}), 100);
  std::vector<double> doubles = {3.5, 1.5, 2.5}, none;
  EXPECT_EQ(QuantileInPlace(doubles, 0.5, 0.0), 2.5);
  EXPECT_EQ(QuantileInPlace(none, 0.1, 2000.0), 2000.0);
}

}  // namespace
}  // namespace reverie
