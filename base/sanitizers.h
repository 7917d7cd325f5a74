// File: base/sanitizers.h
//
// Which sanitizer a build runs under, one spelling for GCC
// (__SANITIZE_ADDRESS__) and clang (__has_feature): REVERIE_ASAN and
// REVERIE_TSAN are defined to 1 under AddressSanitizer / ThreadSanitizer.
#ifndef REVERIE_BASE_SANITIZERS_H_
#define REVERIE_BASE_SANITIZERS_H_

#if defined(__SANITIZE_ADDRESS__)
#define REVERIE_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define REVERIE_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(REVERIE_ASAN)
#define REVERIE_ASAN 1
#endif
#if __has_feature(thread_sanitizer) && !defined(REVERIE_TSAN)
#define REVERIE_TSAN 1
#endif
#endif

#endif  // REVERIE_BASE_SANITIZERS_H_
