// File: base/strong_id.h
//
// StrongId<Tag>: a 32-bit index that cannot be mixed up with another kind of
// index (a TaskId is not a ResourceId) at compile time. The value kInvalid
// (all ones) means "none"; ids are dense indexes into compact arrays.
#ifndef REVERIE_BASE_STRONG_ID_H_
#define REVERIE_BASE_STRONG_ID_H_

#include <cstdint>
#include <functional>
#include <limits>

namespace reverie {

template <typename Tag>
class StrongId {
 public:
  using ValueType = uint32_t;
  static constexpr ValueType kInvalidValue = std::numeric_limits<ValueType>::max();

  constexpr StrongId() = default;
  constexpr explicit StrongId(ValueType v) : value_(v) {}
  static constexpr StrongId Invalid() { return StrongId(); }

  constexpr ValueType value() const { return value_; }
  constexpr bool valid() const { return value_ != kInvalidValue; }

  friend constexpr bool operator==(StrongId a, StrongId b) = default;
  friend constexpr auto operator<=>(StrongId a, StrongId b) = default;

  template <typename H>
  friend H AbslHashValue(H h, StrongId id) {
    return H::combine(std::move(h), id.value_);
  }

 private:
  ValueType value_ = kInvalidValue;
};

}  // namespace reverie

template <typename Tag>
struct std::hash<reverie::StrongId<Tag>> {
  size_t operator()(reverie::StrongId<Tag> id) const noexcept {
    return std::hash<uint32_t>()(id.value());
  }
};

#endif  // REVERIE_BASE_STRONG_ID_H_
