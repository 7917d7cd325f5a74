// reverie: answers "what if" questions about deep-learning training
// performance from one profiled iteration. See README.md.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/command.h"

namespace reverie::cli {

std::vector<Command>& Registry() {
  static auto* commands = new std::vector<Command>();  // leaked: no exit-order hazards
  return *commands;
}

int BadInput(std::string_view message) {
  // One line whatever the message quotes (a path or a name from a hostile
  // file may hold a newline).
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "reverie: %s\n", line.c_str());
  return kExitBadInput;
}

namespace {

void PrintUsage(FILE* out) {
  std::fprintf(out, "usage: reverie COMMAND [ARGS...]\n\ncommands:\n");
  std::vector<Command> sorted = Registry();
  std::sort(sorted.begin(), sorted.end(),
            [](const Command& a, const Command& b) { return a.name < b.name; });
  for (const Command& c : sorted) {
    // Long usages get their summary on the next line, so the column holds.
    if (c.usage.size() > 40) {
      std::fprintf(out, "  %s\n  %-40s %s\n", c.usage.c_str(), "", c.summary.c_str());
    } else {
      std::fprintf(out, "  %-40s %s\n", c.usage.c_str(), c.summary.c_str());
    }
  }
  std::fprintf(out, "\nA TRACE is a PyTorch-profiler (Kineto) .json / .json.gz or a reverie .pb.\n");
}

}  // namespace
}  // namespace reverie::cli

int main(int argc, char** argv) {
  using namespace reverie::cli;
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitBadInput;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    PrintUsage(stdout);
    return kExitOk;
  }
  if (name == "--version") {
    std::printf("reverie 0.1.0\n");
    return kExitOk;
  }
  for (const Command& c : Registry()) {
    if (c.name != name) continue;
    std::vector<std::string> args(argv + 2, argv + argc);
    try {
      return c.run(args);
    } catch (const std::exception& e) {
      // Our code reports errors with absl::Status; this only catches what a
      // library threw (std::bad_alloc on a huge trace, say).
      return BadInput(std::string("internal error: ") + e.what());
    }
  }
  std::fprintf(stderr, "reverie: unknown command '%s'\n", name.c_str());
  PrintUsage(stderr);
  return kExitBadInput;
}
