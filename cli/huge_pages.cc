#include "cli/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace reverie::cli {
namespace {

constexpr char kTunable[] = "glibc.malloc.hugetlb=1";
// Set in the re-executed process so that it neither loops nor passes the
// tunable on to the processes it starts.
constexpr char kMarker[] = "REVERIE_HUGE_PAGES_SET";

}  // namespace

void RunWithHugePages(char** argv) {
#if defined(__GLIBC__) && !defined(REVERIE_NO_HUGE_PAGES)
  if (const char* mark = std::getenv(kMarker); mark != nullptr) {
    // The re-executed process: glibc has read the tunable; put the
    // environment back as the user gave it.
    const std::string before = mark;
    unsetenv(kMarker);
    if (before.empty()) {
      unsetenv("GLIBC_TUNABLES");
    } else {
      setenv("GLIBC_TUNABLES", before.c_str() + 1, 1);  // "=<what it was>"
    }
    return;
  }
  if (const char* off = std::getenv("REVERIE_HUGE_PAGES"); off != nullptr && off[0] == '0') return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string given = tunables != nullptr ? tunables : "";
  // The user chose malloc's settings: leave them.
  if (given.find("glibc.malloc.hugetlb") != std::string::npos) return;
  // "" marks "GLIBC_TUNABLES was unset", "=X" "it was X".
  setenv(kMarker, tunables != nullptr ? ("=" + given).c_str() : "", 1);
  setenv("GLIBC_TUNABLES", given.empty() ? kTunable : (given + ":" + kTunable).c_str(), 1);
  execv("/proc/self/exe", argv);
  // No /proc, or exec refused: run as we are, with the environment as given.
  unsetenv(kMarker);
  if (tunables != nullptr) {
    setenv("GLIBC_TUNABLES", given.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
#else
  (void)argv;
#endif
}

}  // namespace reverie::cli
