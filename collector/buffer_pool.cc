#include "collector/buffer_pool.h"

#include <cstdlib>

namespace reverie::collector {
namespace {

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

BufferPool::BufferPool(size_t buffer_bytes, size_t count)
    : buffer_bytes_(RoundUp(buffer_bytes == 0 ? kBufferAlignment : buffer_bytes, kBufferAlignment)),
      count_(count),
      free_(count == 0 ? 1 : count) {
  if (count_ == 0) return;
  // std::aligned_alloc: size must be a multiple of the alignment (it is).
  arena_ = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, buffer_bytes_ * count_));
  if (arena_ == nullptr) return;
  for (uint32_t i = 0; i < count_; ++i) free_.TryPush(i);
}

BufferPool::~BufferPool() { std::free(arena_); }

uint8_t* BufferPool::Acquire() {
  uint32_t index = 0;
  if (arena_ == nullptr || !free_.TryPop(&index)) return nullptr;
  in_use_.fetch_add(1, std::memory_order_relaxed);
  return arena_ + static_cast<size_t>(index) * buffer_bytes_;
}

uint8_t* BufferPool::AllocateFallback() {
  return static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, buffer_bytes_));
}

bool BufferPool::Owns(const uint8_t* buffer) const {
  if (arena_ == nullptr || buffer < arena_ || buffer >= arena_ + buffer_bytes_ * count_) {
    return false;
  }
  return static_cast<size_t>(buffer - arena_) % buffer_bytes_ == 0;
}

void BufferPool::Release(uint8_t* buffer) {
  if (buffer == nullptr) return;
  if (!Owns(buffer)) {
    std::free(buffer);
    return;
  }
  const auto index = static_cast<uint32_t>(static_cast<size_t>(buffer - arena_) / buffer_bytes_);
  in_use_.fetch_sub(1, std::memory_order_relaxed);
  // Cannot fail: the free list has room for every buffer of the pool.
  free_.TryPush(index);
}

}  // namespace reverie::collector
