#include "base/parallel.h"

#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace reverie {
namespace {

TEST(ParallelTest, EveryItemRunsOnce) {
  std::vector<std::atomic<int>> runs(1000);
  ParallelFor(runs.size(), 4, [&](size_t i) { ++runs[i]; });
  for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
}

TEST(ParallelTest, WorkersFollowTheRequestThenReverieThreadsThenTheCores) {
  unsetenv("REVERIE_THREADS");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(WorkerCount(0, 10000), cores);
  EXPECT_EQ(WorkerCount(3, 10000), 3);
  EXPECT_EQ(WorkerCount(8, 2), 2);  // never more than the items
  EXPECT_EQ(WorkerCount(0, 0), 1);
  setenv("REVERIE_THREADS", "5", 1);
  EXPECT_EQ(WorkerCount(0, 10000), 5);
  EXPECT_EQ(WorkerCount(2, 10000), 2);  // an explicit count wins
  for (const char* bad : {"0", "-3", "four", "4x", ""}) {
    setenv("REVERIE_THREADS", bad, 1);
    EXPECT_EQ(WorkerCount(0, 10000), cores) << "REVERIE_THREADS=" << bad;
  }
  setenv("REVERIE_THREADS", "100000", 1);
  EXPECT_EQ(WorkerCount(0, 100000), 1024);
  unsetenv("REVERIE_THREADS");
}

TEST(ParallelTest, WhatItemsThrowIsThrownAgainAfterEveryItemRan) {
  for (int threads : {1, 4}) {
    std::vector<std::atomic<int>> runs(64);
    try {
      ParallelForRethrowing(runs.size(), threads, [&](size_t i) {
        ++runs[i];
        if (i == 9) throw std::runtime_error("item 9");
        if (i == 40) throw std::bad_alloc();
      });
      ADD_FAILURE() << "nothing thrown";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "item 9");  // the first in item order
    }
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << i;
  }
}

}  // namespace
}  // namespace reverie
