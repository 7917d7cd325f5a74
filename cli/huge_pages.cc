#include "cli/huge_pages.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace reverie::cli {
namespace {

constexpr char kTunable[] = "glibc.malloc.hugetlb=1";
// Set in the re-executed process so that it neither loops nor passes the
// tunable on to the processes it starts.
constexpr char kMarker[] = "REVERIE_HUGE_PAGES_SET";

// How much JSON a trace file holds, estimated low: a gzipped trace inflates
// 10-30x (df_index_resolver 17x, the kineto ResNet-50 sample 29x), a .pb
// holds about an eighth of its JSON (df_index_resolver: 6.5 MB for 51 MiB).
constexpr uint64_t kGzipRatio = 10;
constexpr uint64_t kPbRatio = 8;

// GLIBC_TUNABLES as the user gave it: unset, or its value.
[[maybe_unused]] void RestoreTunables(const char* given) {
  if (given == nullptr) {
    unsetenv("GLIBC_TUNABLES");
  } else {
    setenv("GLIBC_TUNABLES", given, 1);
  }
}

}  // namespace

bool WorthHugePages(char** argv) {
  uint64_t json_bytes = 0;
  for (char** a = argv + 1; *a != nullptr; ++a) {
    std::string_view arg = *a;
    if (const size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      arg.remove_prefix(eq + 1);
    }
    const uint64_t ratio = arg.ends_with(".gz")     ? kGzipRatio
                           : arg.ends_with(".pb")   ? kPbRatio
                           : arg.ends_with(".json") ? 1
                                                    : 0;
    struct stat st;
    if (ratio == 0 || ::stat(std::string(arg).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    json_bytes += static_cast<uint64_t>(st.st_size) * ratio;
  }
  return json_bytes >= kWorthJsonBytes;
}

void RunWithHugePages(char** argv) {
#if defined(__GLIBC__) && !defined(REVERIE_NO_HUGE_PAGES)
  if (const char* mark = std::getenv(kMarker); mark != nullptr) {
    // The re-executed process: glibc has read the tunable; put the
    // environment back as the user gave it.
    const std::string before = mark;
    unsetenv(kMarker);
    RestoreTunables(before.empty() ? nullptr : before.c_str() + 1);  // "=<what it was>"
    return;
  }
  if (const char* off = std::getenv("REVERIE_HUGE_PAGES"); off != nullptr && off[0] == '0') return;
  if (!WorthHugePages(argv)) return;
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
  RestoreTunables(tunables != nullptr ? given.c_str() : nullptr);
#else
  (void)argv;
#endif
}

}  // namespace reverie::cli
