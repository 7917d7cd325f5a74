#include "base/strong_id.h"

#include <type_traits>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace reverie {
namespace {

struct ATag {};
struct BTag {};
using AId = StrongId<ATag>;
using BId = StrongId<BTag>;

TEST(StrongIdTest, DefaultIsInvalid) {
  AId id;
  EXPECT_FALSE(id.valid());
  EXPECT_EQ(id, AId::Invalid());
  EXPECT_TRUE(AId(0).valid());
}

TEST(StrongIdTest, DistinctTagsDoNotConvert) {
  static_assert(!std::is_convertible_v<AId, BId>);
  static_assert(!std::is_convertible_v<uint32_t, AId>);
  static_assert(sizeof(AId) == sizeof(uint32_t));
}

TEST(StrongIdTest, OrdersAndHashes) {
  EXPECT_LT(AId(1), AId(2));
  absl::flat_hash_set<AId> set = {AId(1), AId(2), AId(1)};
  EXPECT_EQ(set.size(), 2u);
}

}  // namespace
}  // namespace reverie
