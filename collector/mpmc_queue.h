// File: collector/mpmc_queue.h
//
// MpmcQueue<T>: a bounded multi-producer multi-consumer queue that never
// blocks and never allocates after construction, for CUPTI's buffer
// callbacks (they run on CUPTI's threads and on any thread that flushes).
//
// The algorithm is the classic sequence-numbered ring: every cell carries a
// sequence number; a producer claims position `tail` when the cell's
// sequence equals `tail`, writes the value and publishes it by storing
// tail + 1 (release); a consumer claims position `head` when the sequence
// equals head + 1, reads the value and frees the cell for the next lap by
// storing head + capacity. The acquire/release pairs on the sequence are
// what orders the plain value accesses (ThreadSanitizer checks this in
// buffer_pool_test).
//
// Invariants: capacity is a power of two; TryPush fails only when full and
// TryPop only when empty (momentarily, under contention, both may report so
// while another thread is mid-operation; callers treat that as full/empty).
#ifndef REVERIE_COLLECTOR_MPMC_QUEUE_H_
#define REVERIE_COLLECTOR_MPMC_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <type_traits>

namespace reverie::collector {

template <typename T>
class MpmcQueue {
  static_assert(std::is_trivially_copyable_v<T>, "cells are copied by value");

 public:
  explicit MpmcQueue(size_t min_capacity) {
    size_t capacity = 2;
    while (capacity < min_capacity) capacity <<= 1;
    mask_ = capacity - 1;
    cells_ = std::make_unique<Cell[]>(capacity);
    for (size_t i = 0; i < capacity; ++i) cells_[i].sequence.store(i, std::memory_order_relaxed);
  }
  MpmcQueue(const MpmcQueue&) = delete;
  MpmcQueue& operator=(const MpmcQueue&) = delete;

  size_t capacity() const { return mask_ + 1; }

  bool TryPush(const T& value) {
    size_t pos = tail_.load(std::memory_order_relaxed);
    while (true) {
      Cell& cell = cells_[pos & mask_];
      const size_t seq = cell.sequence.load(std::memory_order_acquire);
      const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.value = value;
          cell.sequence.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  bool TryPop(T* out) {
    size_t pos = head_.load(std::memory_order_relaxed);
    while (true) {
      Cell& cell = cells_[pos & mask_];
      const size_t seq = cell.sequence.load(std::memory_order_acquire);
      const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos + 1);
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          *out = cell.value;
          cell.sequence.store(pos + mask_ + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

 private:
  struct Cell {
    std::atomic<size_t> sequence{0};
    T value{};
  };

  std::unique_ptr<Cell[]> cells_;
  size_t mask_ = 0;
  alignas(64) std::atomic<size_t> head_{0};
  alignas(64) std::atomic<size_t> tail_{0};
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_MPMC_QUEUE_H_
