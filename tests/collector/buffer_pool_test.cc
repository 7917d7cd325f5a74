// BufferPool and MpmcQueue under concurrency, the way CUPTI drives them:
// several threads request and complete buffers while the writer drains and
// recycles. Meant to run under ThreadSanitizer too (build dir with
// -DREVERIE_SANITIZE=thread); the assertions check conservation: no buffer
// or value is lost or duplicated.
#include "collector/buffer_pool.h"

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "collector/mpmc_queue.h"
#include "gtest/gtest.h"

namespace reverie::collector {
namespace {

TEST(MpmcQueueTest, FifoAndBounds) {
  MpmcQueue<int> q(3);
  EXPECT_EQ(q.capacity(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(q.TryPush(i));
  EXPECT_FALSE(q.TryPush(99));
  int v = -1;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(q.TryPop(&v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(q.TryPop(&v));
}

TEST(MpmcQueueTest, ManyProducersManyConsumersConserveValues) {
  constexpr int kProducers = 4;
  constexpr int kConsumers = 3;
  constexpr int kPerProducer = 20000;
  MpmcQueue<uint64_t> q(64);
  std::atomic<int> producers_done{0};
  std::atomic<uint64_t> sum{0};
  std::atomic<int> count{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        const uint64_t v = static_cast<uint64_t>(p) * kPerProducer + i + 1;
        while (!q.TryPush(v)) std::this_thread::yield();
      }
      producers_done.fetch_add(1);
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&] {
      uint64_t v = 0;
      while (true) {
        if (q.TryPop(&v)) {
          sum.fetch_add(v);
          count.fetch_add(1);
        } else if (producers_done.load() == kProducers) {
          if (!q.TryPop(&v)) break;
          sum.fetch_add(v);
          count.fetch_add(1);
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const uint64_t n = uint64_t{kProducers} * kPerProducer;
  EXPECT_EQ(count.load(), static_cast<int>(n));
  EXPECT_EQ(sum.load(), n * (n + 1) / 2);
}

TEST(BufferPoolTest, AcquireAllThenExhaustedThenRecycle) {
  BufferPool pool(10000, 3);
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool.buffer_bytes() % kBufferAlignment, 0u);
  EXPECT_GE(pool.buffer_bytes(), 10000u);
  std::set<uint8_t*> seen;
  for (int i = 0; i < 3; ++i) {
    uint8_t* b = pool.Acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);  // CUPTI's requirement
    EXPECT_TRUE(pool.Owns(b));
    seen.insert(b);
  }
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.in_use(), 3u);
  uint8_t* extra = pool.AllocateFallback();
  ASSERT_NE(extra, nullptr);
  EXPECT_FALSE(pool.Owns(extra));
  pool.Release(extra);  // freed, not recycled
  EXPECT_EQ(pool.Acquire(), nullptr);
  pool.Release(*seen.begin());
  EXPECT_EQ(pool.Acquire(), *seen.begin());
}

// The CUPTI pattern end to end: "CUPTI threads" request a buffer, fill it,
// complete it into the queue; the "writer" checks the contents and
// recycles. Every buffer handed out is accounted for.
TEST(BufferPoolTest, CuptiLikeConcurrentRequestCompleteRecycle) {
  constexpr int kCuptiThreads = 4;
  constexpr int kBuffersEach = 3000;
  BufferPool pool(4096, 8);
  MpmcQueue<CompletedBuffer> completed(32);
  std::atomic<int> done{0};
  std::atomic<int> exhausted{0};
  std::atomic<int64_t> decoded_sum{0};
  std::atomic<int> decoded{0};

  std::thread writer([&] {
    auto decode = [&](const CompletedBuffer& b) {
      uint64_t v = 0;
      std::memcpy(&v, b.data, sizeof v);
      EXPECT_EQ(b.valid_bytes, 8u + v % 100);
      decoded_sum.fetch_add(static_cast<int64_t>(v));
      decoded.fetch_add(1);
      pool.Release(b.data);
    };
    CompletedBuffer b;
    while (true) {
      // Read `done` before popping: once every producer finished, an empty
      // queue really is the end.
      const bool producers_finished = done.load() == kCuptiThreads;
      if (completed.TryPop(&b)) {
        decode(b);
      } else if (producers_finished) {
        break;
      } else {
        std::this_thread::yield();
      }
    }
  });
  std::vector<std::thread> cupti;
  for (int t = 0; t < kCuptiThreads; ++t) {
    cupti.emplace_back([&, t] {
      for (int i = 0; i < kBuffersEach; ++i) {
        uint8_t* b = nullptr;
        while ((b = pool.Acquire()) == nullptr) {
          exhausted.fetch_add(1);
          std::this_thread::yield();
        }
        const uint64_t v = static_cast<uint64_t>(t) * kBuffersEach + i;
        std::memcpy(b, &v, sizeof v);
        while (!completed.TryPush({b, 8 + v % 100})) std::this_thread::yield();
      }
      done.fetch_add(1);
    });
  }
  for (std::thread& t : cupti) t.join();
  writer.join();
  const int64_t n = int64_t{kCuptiThreads} * kBuffersEach;
  EXPECT_EQ(decoded.load(), n);
  EXPECT_EQ(decoded_sum.load(), n * (n - 1) / 2);
  EXPECT_EQ(pool.in_use(), 0u);
}

}  // namespace
}  // namespace reverie::collector
