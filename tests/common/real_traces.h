// File: tests/common/real_traces.h
//
// Where the real-trace suite finds ../shared/traces: $REVERIE_TRACES, else the
// folder beside the checkout. Tests call RequireTraces() / TracePath() and
// skip with a clear message when the traces are absent, so the test command
// passes on a fresh machine.
#ifndef REVERIE_TESTS_COMMON_REAL_TRACES_H_
#define REVERIE_TESTS_COMMON_REAL_TRACES_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace reverie::testing {

inline std::string TracesDir() {
  if (const char* env = std::getenv("REVERIE_TRACES"); env != nullptr && *env != '\0') return env;
#ifdef REVERIE_DEFAULT_TRACES
  return REVERIE_DEFAULT_TRACES;
#else
  return "../shared/traces";
#endif
}

// Full path of a trace given its path relative to the traces folder, or ""
// when it is not there.
inline std::string TracePath(const std::string& relative) {
  const std::filesystem::path p = std::filesystem::path(TracesDir()) / relative;
  return std::filesystem::exists(p) ? p.string() : std::string();
}

}  // namespace reverie::testing

// Skips the current test when a trace is missing, saying which and where.
#define REVERIE_REQUIRE_TRACE(var, relative)                                           \
  const std::string var = ::reverie::testing::TracePath(relative);                     \
  if (var.empty()) {                                                                   \
    GTEST_SKIP() << "real trace " << (relative) << " not found under "                 \
                 << ::reverie::testing::TracesDir() << " (set REVERIE_TRACES)";        \
  }

#endif  // REVERIE_TESTS_COMMON_REAL_TRACES_H_
