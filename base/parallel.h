// File: base/parallel.h
//
// Independent work items on all cores: fn(i) for every i in [0, n), each
// once, by `threads` workers (0: $REVERIE_THREADS, else the machine's
// cores; never more than n).
// The caller's thread is one of the workers. fn must be safe to run
// concurrently for different i (each writes its own result slot) and must
// not throw: an exception leaving a worker thread ends the process
// (std::terminate), so wrap what may throw.
#ifndef REVERIE_BASE_PARALLEL_H_
#define REVERIE_BASE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace reverie {

// The worker count when none is given: $REVERIE_THREADS when it is a
// positive number (a shared machine, a container whose CPU quota is below
// its core count), else the machine's cores.
inline int DefaultWorkerCount() {
  if (const char* env = std::getenv("REVERIE_THREADS"); env != nullptr) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return static_cast<int>(std::min(v, 1024L));
  }
  return static_cast<int>(std::thread::hardware_concurrency());
}

// The worker count ParallelFor uses for `threads` and `n` items.
inline int WorkerCount(int threads, size_t n) {
  int w = threads > 0 ? threads : DefaultWorkerCount();
  w = std::max(1, w);
  return static_cast<int>(std::min<size_t>(static_cast<size_t>(w), std::max<size_t>(1, n)));
}

template <typename Fn>
void ParallelFor(size_t n, int threads, Fn&& fn) {
  const int workers = WorkerCount(threads, n);
  // Each worker takes the next item: the order of completion does not
  // matter, each item's result has its own slot.
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  if (workers <= 1) {
    work();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers - 1));
  for (int i = 1; i < workers; ++i) {
    // A thread the system refuses (a process or memory limit) only means
    // fewer workers: those running take every item.
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;
    }
  }
  work();
  for (std::thread& t : pool) t.join();
}

// ParallelFor for work that may throw (std::bad_alloc on a trace too large
// for memory): what fn(i) throws is caught on its worker, and once every
// item has run (those after a throw too) the first exception in item order
// is thrown again here.
template <typename Fn>
void ParallelForRethrowing(size_t n, int threads, Fn&& fn) {
  std::vector<std::exception_ptr> thrown(n);
  ParallelFor(n, threads, [&](size_t i) {
    try {
      fn(i);
    } catch (...) {
      thrown[i] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : thrown) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace reverie

#endif  // REVERIE_BASE_PARALLEL_H_
