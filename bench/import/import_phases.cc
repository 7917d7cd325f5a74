// import_phases: where `reverie info`'s import time goes, phase by phase, on
// one trace (default: df_index_resolver.json.gz from the shared traces).
// Each phase runs in this process with fresh buffers, as the CLI does; the
// figures are best-of-N wall times and the minor page faults of the best run,
// next to a same-run baseline: memcpy of the raw JSON text into a fresh
// buffer (touching as much memory as the text, doing nothing with it).
//
//   import_phases [TRACE] [--runs N] [--threads N]   (threads: the parse's; default 1)
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/json_scan.h"
#include "frameworks/kineto/kineto_builder.h"
#include "frameworks/kineto/kineto_importer.h"
#include "frameworks/kineto/kineto_parser.h"
#include "frameworks/trace_summary.h"
#include "proto/trace_io.h"

namespace {

volatile char sink;  // keeps the baseline's copy from being optimised away

// Resident set size now, in MiB.
double RssMiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096.0 / 1048576.0;
}

long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

struct Best {
  double ms = 1e30;
  long faults = 0;
  void Take(double t, long f) {
    if (t < ms) ms = t, faults = f;
  }
};

// CPU time of this thread (user + system), in ms: steadier than wall time
// on a shared machine, where the process may wait for a core.
double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Runs `fn` (which returns false on failure) and records its time and faults.
template <typename Fn>
bool Time(Best* best, Fn&& fn) {
  const long f0 = MinorFaults();
  const double t0 = CpuMs();
  if (!fn()) return false;
  best->Take(CpuMs() - t0, MinorFaults() - f0);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = std::string(REVERIE_DEFAULT_TRACES) +
                     "/facebookresearch__HolisticTraceAnalysis/tests/data/df_index_resolver/"
                     "df_index_resolver.json.gz";
  int runs = 5;
  int threads = 1;  // the parse's (ParseKinetoJson); the whole import takes the default
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else {
      path = a;
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "import_phases: cannot read %s (set the path)\n", path.c_str());
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string file = ss.str();

  Best read, memcpy_base, scan, parse, parse_wall, finish, finish_wall, write_wall, whole, summary;
  size_t text_size = 0;
  for (int r = 0; r < runs; ++r) {
    std::unique_ptr<reverie::kineto::JsonInput> input;
    const bool ok = Time(&read, [&] {
      absl::StatusOr<reverie::kineto::JsonInput> j = reverie::kineto::ReadJsonInput(path);
      if (!j.ok()) {
        std::fprintf(stderr, "import_phases: %s\n", std::string(j.status().message()).c_str());
        return false;
      }
      input = std::make_unique<reverie::kineto::JsonInput>(*std::move(j));
      return true;
    });
    if (!ok) return 2;
    text_size = input->size();
    if (r == 0) std::printf("rss after read: %.1f MiB\n", RssMiB());
    Time(&memcpy_base, [&] {
      std::unique_ptr<char[]> copy(new char[input->size()]);
      std::memcpy(copy.get(), input->data(), input->size());
      sink = static_cast<char>(sink + copy[input->size() / 2]);
      return true;
    });
    Time(&scan, [&] {
      return reverie::kineto::ScanJsonLayout(input->text(), size_t{1} << 18).cuts.size() < (size_t{1} << 40);
    });
    reverie::kineto::KinetoTraceBuilder builder(path);
    const auto wall0 = std::chrono::steady_clock::now();
    Time(&parse, [&] {
      const absl::Status s = reverie::kineto::ParseKinetoJson(
          *input, path, &builder, reverie::kineto::kDefaultChunkBytes, threads);
      if (!s.ok()) std::fprintf(stderr, "import_phases: %s\n", std::string(s.message()).c_str());
      return s.ok();
    });
    parse_wall.Take(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count(),
        0);
    if (r == 0) std::printf("rss after parse: %.1f MiB\n", RssMiB());
    input.reset();
    reverie::Trace trace;
    const auto finish0 = std::chrono::steady_clock::now();
    Time(&finish, [&] {
      trace = builder.Finish(threads);
      return true;
    });
    finish_wall.Take(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - finish0)
            .count(),
        0);
    Time(&summary, [&] {
      const reverie::TraceSummary s = reverie::Summarize(trace);
      return s.ranges >= 0;
    });
    // Writing the .pb as `reverie import` does (in $TMPDIR, then removed).
    const char* tmp = std::getenv("TMPDIR");
    const std::string pb = std::string(tmp != nullptr ? tmp : "/tmp") + "/import_phases.pb";
    const auto write0 = std::chrono::steady_clock::now();
    if (!reverie::WriteTrace(trace, pb, {.threads = threads}).ok()) return 2;
    write_wall.Take(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - write0)
            .count(),
        0);
    std::remove(pb.c_str());
    Time(&whole, [&] { return reverie::ImportKinetoJson(path).ok(); });
  }
  std::printf(
      "trace: %s (%.1f MiB JSON, %.1f MiB file), best of %d, parse and finish on %d thread(s)\n",
      path.c_str(), text_size / 1048576.0, file.size() / 1048576.0, runs, threads);
  std::printf("%-44s %9s %12s\n", "phase", "cpu ms", "minor faults");
  auto row = [](const char* name, const Best& b) {
    std::printf("%-44s %9.1f %12ld\n", name, b.ms, b.faults);
  };
  row("read + inflate (ReadJsonInput)", read);
  row("parse: scan + simdjson walk + AddEvent", parse);
  row("  of which the layout scan (json_scan.h)", scan);
  std::printf("%-44s %9.1f %12s\n", "  its wall time (every thread)", parse_wall.ms, "");
  row("finish: correlations, ranges, threads", finish);
  std::printf("%-44s %9.1f %12s\n", "  its wall time (every thread)", finish_wall.ms, "");
  std::printf("%-44s %9.1f %12s\n", "write the .pb (WriteTrace), wall", write_wall.ms, "");
  row("ImportKinetoJson (all of the above)", whole);
  row("Summarize (reverie info's counts)", summary);
  row("baseline: memcpy of the text, fresh buffer", memcpy_base);
  return 0;
}
