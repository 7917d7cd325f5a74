// File: collector/buffer_pool.h
//
// BufferPool: the activity buffers handed to CUPTI. All `count` buffers are
// carved out of one arena allocated up front, so CUPTI's bufferRequested
// callback only pops an index from a lock-free free list: no lock, no heap,
// nothing that can throw. Completed buffers travel to the writer thread
// through a second lock-free queue (CompletedBuffer) and come back with
// Release() once decoded.
//
// When the pool is empty the caller decides (CUPTI version permitting)
// between handing CUPTI no buffer (CUPTI then drops records and counts
// them) and AllocateFallback(), a plain aligned malloc that Release() frees
// instead of recycling. Both are counted by the caller.
//
// Invariants:
// - A buffer pointer is either in the free list, held by CUPTI, or in the
//   completed queue / being decoded; never two of these at once.
// - Owns(p) is true exactly for pointers inside the arena at a buffer
//   boundary; anything else passed to Release() is a fallback buffer.
// Thread-safe (every method may run concurrently with every other).
#ifndef REVERIE_COLLECTOR_BUFFER_POOL_H_
#define REVERIE_COLLECTOR_BUFFER_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "collector/mpmc_queue.h"

namespace reverie::collector {

// CUPTI requires 8-byte alignment; page alignment keeps buffers apart.
inline constexpr size_t kBufferAlignment = 4096;

struct CompletedBuffer {
  uint8_t* data = nullptr;
  size_t valid_bytes = 0;
};

class BufferPool {
 public:
  // `buffer_bytes` is rounded up to kBufferAlignment.
  BufferPool(size_t buffer_bytes, size_t count);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // False when the arena could not be allocated (then Acquire() always
  // returns nullptr).
  bool ok() const { return arena_ != nullptr; }
  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t count() const { return count_; }

  // A free pool buffer, or nullptr when all are in use.
  uint8_t* Acquire();
  // An extra buffer from the heap (nullptr if malloc fails). Not on the
  // no-allocation path: only used when the pool is exhausted and CUPTI
  // cannot take "no buffer" for an answer.
  uint8_t* AllocateFallback();
  // Returns a buffer from Acquire() or AllocateFallback().
  void Release(uint8_t* buffer);
  bool Owns(const uint8_t* buffer) const;

  // Buffers currently out of the free list (diagnostics and tests).
  size_t in_use() const { return in_use_.load(std::memory_order_relaxed); }

 private:
  size_t buffer_bytes_;
  size_t count_;
  uint8_t* arena_ = nullptr;
  MpmcQueue<uint32_t> free_;
  std::atomic<size_t> in_use_{0};
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_BUFFER_POOL_H_
