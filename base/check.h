// File: base/check.h
//
// REVERIE_CHECK(cond): an invariant of our own code (never of input data:
// input is validated and counted, see proto/trace_validate.h). Always on:
// a broken invariant in a simulator gives a plausible wrong answer, which is
// worse than stopping. Abseil 20220623 (Debian 12) has no absl/log CHECK.
#ifndef REVERIE_BASE_CHECK_H_
#define REVERIE_BASE_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define REVERIE_CHECK(cond)                                                                  \
  do {                                                                                       \
    if (__builtin_expect(!(cond), 0)) {                                                      \
      std::fprintf(stderr, "reverie: internal error: %s:%d: check failed: %s\n", __FILE__,   \
                   __LINE__, #cond);                                                         \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

#endif  // REVERIE_BASE_CHECK_H_
