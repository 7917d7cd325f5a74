// File: base/huge_pages.h
//
// Memory for large buffers that are filled once and freed at once (a trace's
// text, the blocks of a trace's protobuf arena): mapped straight from the
// kernel, so it goes back to the system when freed, and asked for
// transparent huge pages when large enough, so filling 50 MB costs ~25 page
// faults instead of ~13,000 (each ~1-3 us on a VM). Where transparent huge
// pages are off (/sys/kernel/mm/transparent_hugepage/enabled = never) this
// changes nothing but the fault count.
#ifndef REVERIE_BASE_HUGE_PAGES_H_
#define REVERIE_BASE_HUGE_PAGES_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace reverie {

inline constexpr size_t kSmallPage = 4096;
inline constexpr size_t kHugePage = size_t{2} << 20;

// `bytes` rounded up to whole small pages.
inline size_t RoundUpToPages(size_t bytes) { return (bytes + kSmallPage - 1) / kSmallPage * kSmallPage; }

// Asks for huge pages on [p, p + bytes) when it can hold one; advisory.
inline void AdviseHugePages(void* p, size_t bytes) {
  if (bytes >= kHugePage) ::madvise(p, bytes, MADV_HUGEPAGE);
}

// Zeroed, readable and writable memory of RoundUpToPages(bytes) bytes,
// starting on a huge-page boundary when at least one huge page long (so the
// kernel can back all of it with huge pages); nullptr when out of memory.
// Free with UnmapPages(p, bytes).
inline void* MapPages(size_t bytes) {
  const size_t size = RoundUpToPages(bytes);
  const size_t slack = size >= kHugePage ? kHugePage : 0;
  void* raw = ::mmap(nullptr, size + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = slack == 0 ? start : (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) ::munmap(raw, aligned - start);
  const uintptr_t end = start + size + slack;
  if (end > aligned + size) ::munmap(reinterpret_cast<void*>(aligned + size), end - aligned - size);
  void* p = reinterpret_cast<void*>(aligned);
  AdviseHugePages(p, size);
  return p;
}

inline void UnmapPages(void* p, size_t bytes) {
  if (p != nullptr) ::munmap(p, RoundUpToPages(bytes));
}

// A std allocator for large arrays that grow with the trace (an importer's
// records, indexes over them): allocations of kMinBytes and more come from
// MapPages, so reserving generously costs only address space and filling
// costs few page faults; smaller ones from the default allocator.
template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;
  static constexpr size_t kMinBytes = size_t{1} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: converting, as std::allocator

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMinBytes) return std::allocator<T>().allocate(n);
    void* p = MapPages(bytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMinBytes) {
      std::allocator<T>().deallocate(p, n);
    } else {
      UnmapPages(p, bytes);
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

}  // namespace reverie

#endif  // REVERIE_BASE_HUGE_PAGES_H_
