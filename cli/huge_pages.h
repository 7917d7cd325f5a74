// File: cli/huge_pages.h
//
// The reverie executable runs with glibc's malloc asking for transparent
// huge pages (the `glibc.malloc.hugetlb=1` tunable).
//
// Why: loading a trace fills fresh memory (the graph's columns, the
// protobuf arena, simdjson's buffers), and with 4 KiB pages about a quarter
// of `reverie info` went to page faults and zeroing pages (perf, on
// df_index_resolver). Most Linux distributions set transparent huge pages
// to "madvise": a process gets 2 MiB pages only where it asks, and glibc
// asks only when the tunable says so. glibc reads GLIBC_TUNABLES before
// main runs, so the executable sets it and runs itself again, once
// (docs/PERFORMANCE.md has the before and after). The re-executed process
// restores the environment as the user gave it, so that nothing it starts
// inherits the setting. Only the executable: the Python module lives in
// the user's interpreter and leaves its allocator alone.
//
// The cost: a second process start (about 15 ms, the dynamic loader's
// relocations). It pays off from about 6 MiB of JSON (2.7 ms saved per
// MB), so only a command given a trace that large starts again: `--help`,
// `scripts` and the example traces do not. base/huge_pages.h is the
// targeted mechanism this process-wide one stands in for until the graph's
// columns use it.
//
// Nothing happens when no argument names a trace file (.json, .gz, .pb)
// of about kWorthJsonBytes of JSON or more, when REVERIE_HUGE_PAGES=0, when GLIBC_TUNABLES already
// sets glibc.malloc.hugetlb, under sanitizers (their allocator is not
// glibc's), off glibc, or when /proc/self/exe cannot be executed (then the
// process goes on as it is). Huge pages are advice: where the kernel has
// none to give, malloc runs as before.
#ifndef REVERIE_CLI_HUGE_PAGES_H_
#define REVERIE_CLI_HUGE_PAGES_H_

#include <cstdint>

namespace reverie::cli {

// The JSON a command's trace files must hold (estimated from their sizes)
// for the re-execution to pay for itself.
inline constexpr uint64_t kWorthJsonBytes = uint64_t{6} << 20;

// Whether argv (a command line: argv[0] is the program) names trace files
// (.json, .json.gz or .gz, .pb, as arguments or --flag=values) holding
// about kWorthJsonBytes of JSON or more.
bool WorthHugePages(char** argv);

// Call first in main, before anything reads the environment or starts a
// thread; returns (in this process or the re-executed one) when the
// command should run.
void RunWithHugePages(char** argv);

}  // namespace reverie::cli

#endif  // REVERIE_CLI_HUGE_PAGES_H_
