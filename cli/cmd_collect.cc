// `reverie collect -o TRACE [--steps N] [--warmup N] [--] CMD [ARGS...]`:
// runs CMD with the CUPTI collector injected (CUDA_INJECTION64_PATH) and
// returns CMD's exit status. The collector library is found through
// $REVERIE_COLLECTOR_LIB, next to this executable, or in the build tree.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/command.h"
#include "cli/flags.h"

namespace reverie::cli {
namespace {

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

struct Options {
  std::string output;
  int64_t steps = -1, warmup = -1;  // -1: not given
};

absl::Status RunCollect(const Options& o, std::vector<std::string> args) {
  // What follows the options is the program and its arguments, "--" or not.
  if (!args.empty() && args[0] == "--") args.erase(args.begin());
  if (args.empty()) return UsageError("no command to run; give it after --");
  if (const std::string& a = args[0]; a.size() > 1 && a[0] == '-') {
    return UsageError(absl::StrCat("unknown option '", a, "'; see 'reverie collect --help'"));
  }

  std::string looked;
  const std::string library = FindCollector(&looked);
  if (library.empty()) {
    return UsageError(absl::StrCat(kLibraryName, " not found (looked at ", looked,
                                   "); reverie was built without CUDA/CUPTI, or set "
                                   "REVERIE_COLLECTOR_LIB"));
  }
  std::error_code ec;
  const std::string trace = fs::absolute(o.output, ec).lexically_normal().string();
  if (IsFile(trace) && ::unlink(trace.c_str()) != 0) {
    return UsageError(absl::StrCat("cannot replace ", trace, ": ", std::strerror(errno)));
  }

  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return UsageError(absl::StrCat("fork failed: ", std::strerror(errno)));
  if (child == 0) {
    ::setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
    // The Python package (reverie_torch) loads the same file, so both
    // share one collector.
    ::setenv("REVERIE_COLLECTOR_LIB", library.c_str(), 1);
    ::setenv("REVERIE_OUTPUT", trace.c_str(), 1);
    if (o.steps >= 0) ::setenv("REVERIE_STEPS", std::to_string(o.steps).c_str(), 1);
    if (o.warmup >= 0) ::setenv("REVERIE_WARMUP", std::to_string(o.warmup).c_str(), 1);
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
  const bool wrote = ::stat(trace.c_str(), &st) == 0;
  if (wrote) {
    absl::FPrintF(stderr, "reverie: collect: wrote %s (%lld bytes)\n", trace.c_str(), st.st_size);
  }
  // The program's own exit status when it failed; when it succeeded but
  // nothing was collected, a failure all the same: a script running
  // `collect` must not read a missing trace as a collected one.
  if (code != 0) {
    if (!wrote && code != 127) {
      std::fprintf(stderr,
                   "reverie: collect: no trace written (the program did not initialize CUDA, "
                   "or CUPTI could not start)\n");
    }
    return WithExitStatus(absl::UnknownError(""), code);
  }
  if (!wrote) {
    return WithExitStatus(
        absl::FailedPreconditionError(
            absl::StrCat(trace,
                         ": no trace written: the program exited 0 without initializing CUDA, or "
                         "CUPTI could not start")),
        kExitFailure);
  }
  return absl::OkStatus();
}

// Names the program to run in the usage line, which lists only declared
// arguments (the program is what is left over, App::remaining()).
class CollectFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string name) const override {
    return "Usage: " + name + " [OPTIONS] [--] CMD [ARGS...]\n";
  }
};

RunFn SetupCollect(CLI::App& app) {
  auto o = std::make_shared<Options>();
  AddPath(app, "-o,--output", &o->output, "the .pb trace to write", "TRACE", "a file name")
      ->required();
  AddInt(app, "--steps", &o->steps, 0, kNoMax, "steps to record", "a count");
  // Deprecated name of --steps (reverie 0.1.0), hidden from the help.
  AddInt(app, "--iterations", &o->steps, 0, kNoMax, "", "a count")->group("");
  AddInt(app, "--warmup", &o->warmup, 0, kNoMax, "steps to skip before recording",
         "a count");
  // Everything from the first argument that is no option of ours on (and
  // after "--") is the program to run, its own options included.
  app.prefix_command();
  auto formatter = std::make_shared<CollectFormatter>();
  formatter->column_width(app.get_formatter()->get_column_width());
  app.formatter(formatter);
  app.footer("CMD [ARGS...] is the CUDA program to run and its arguments; its exit status is "
             "collect's.");
  return [o, &app] { return RunCollect(*o, app.remaining()); };
}

}  // namespace

REVERIE_COMMAND(collect, "collect",
                "run a CUDA program under the CUPTI collector and write a .pb trace", SetupCollect);

}  // namespace reverie::cli
