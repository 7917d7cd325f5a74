// `reverie collect -o TRACE [--iterations N] [--warmup N] -- CMD [ARGS...]`:
// runs CMD with the CUPTI collector injected (CUDA_INJECTION64_PATH) and
// returns CMD's exit status. The collector library is found through
// $REVERIE_COLLECTOR_LIB, next to this executable, or in the build tree.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/command.h"

namespace reverie::cli {
namespace {

constexpr char kUsage[] = "collect -o TRACE [--iterations N] [--warmup N] -- CMD [ARGS...]";
constexpr char kLibraryName[] = "libreverie_collector.so";

namespace fs = std::filesystem;

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// Where the collector library is, or "" (with `looked` listing the places).
std::string FindCollector(std::string* looked) {
  if (const char* env = std::getenv("REVERIE_COLLECTOR_LIB"); env != nullptr && *env != '\0') {
    *looked = std::string("$REVERIE_COLLECTOR_LIB=") + env;
    return IsFile(env) ? fs::absolute(env).string() : "";
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path dir = exe.parent_path();
  const fs::path candidates[] = {
      dir / kLibraryName,                           // installed side by side
      dir.parent_path() / "collector" / kLibraryName,  // build tree: build/cli/reverie
      dir.parent_path() / "lib" / kLibraryName,        // prefix/bin + prefix/lib
      dir.parent_path() / "lib" / "reverie" / kLibraryName,
  };
  for (const fs::path& c : candidates) {
    looked->append(looked->empty() ? "" : ", ").append(c.string());
    if (IsFile(c)) return c.lexically_normal().string();
  }
  return "";
}

bool ParseCount(const std::string& s, int64_t* out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return false;
  *out = v;
  return true;
}

int RunCollect(const std::vector<std::string>& args) {
  std::string output;
  int64_t iterations = 0, warmup = 0;
  bool have_iterations = false, have_warmup = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    const bool takes_value = a == "-o" || a == "--output" || a == "--iterations" || a == "--warmup";
    if (!takes_value) return BadInput("collect: unknown option '" + a + "'; usage: " + kUsage);
    if (i + 1 >= args.size()) return BadInput("collect: " + a + " needs a value; usage: " + kUsage);
    const std::string& v = args[++i];
    if (a == "-o" || a == "--output") {
      output = v;
    } else if (a == "--iterations") {
      if (!ParseCount(v, &iterations)) return BadInput("collect: --iterations '" + v + "' is not a count");
      have_iterations = true;
    } else {
      if (!ParseCount(v, &warmup)) return BadInput("collect: --warmup '" + v + "' is not a count");
      have_warmup = true;
    }
  }
  if (i >= args.size()) return BadInput(std::string("collect: no command to run; usage: ") + kUsage);
  if (output.empty()) return BadInput(std::string("collect: -o TRACE is required; usage: ") + kUsage);

  std::string looked;
  const std::string library = FindCollector(&looked);
  if (library.empty()) {
    return BadInput("collect: " + std::string(kLibraryName) + " not found (looked at " + looked +
                    "); reverie was built without CUDA/CUPTI, or set REVERIE_COLLECTOR_LIB");
  }
  std::error_code ec;
  const std::string trace = fs::absolute(output, ec).lexically_normal().string();
  if (IsFile(trace) && ::unlink(trace.c_str()) != 0) {
    return BadInput("collect: cannot replace " + trace + ": " + std::strerror(errno));
  }

  std::vector<char*> argv;
  for (size_t k = i; k < args.size(); ++k) argv.push_back(const_cast<char*>(args[k].c_str()));
  argv.push_back(nullptr);

  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return BadInput(std::string("collect: fork failed: ") + std::strerror(errno));
  if (child == 0) {
    ::setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
    // The Python package (reverie_torch) loads the same file, so both
    // share one collector.
    ::setenv("REVERIE_COLLECTOR_LIB", library.c_str(), 1);
    ::setenv("REVERIE_OUTPUT", trace.c_str(), 1);
    if (have_iterations) ::setenv("REVERIE_ITERATIONS", std::to_string(iterations).c_str(), 1);
    if (have_warmup) ::setenv("REVERIE_WARMUP", std::to_string(warmup).c_str(), 1);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "reverie: collect: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    std::fflush(stderr);
    ::_exit(127);
  }
  // Like a shell waiting for a foreground job: Ctrl-C goes to the program,
  // and we report how it ended.
  struct sigaction ignore{}, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status)
                                     : (WIFSIGNALED(status) ? 128 + WTERMSIG(status) : kExitFailure);
  struct stat st{};
  if (::stat(trace.c_str(), &st) == 0) {
    std::fprintf(stderr, "reverie: collect: wrote %s (%lld bytes)\n", trace.c_str(),
                 static_cast<long long>(st.st_size));
  } else if (code != 127) {
    std::fprintf(stderr,
                 "reverie: collect: no trace written (the program did not initialize CUDA, or "
                 "CUPTI could not start)\n");
  }
  return code;
}

}  // namespace

REVERIE_COMMAND(collect, "collect", kUsage,
                "run a CUDA program under the CUPTI collector and write a .pb trace", RunCollect);

}  // namespace reverie::cli
