// File: base/testing/cli_runner.h
//
// Runs the `reverie` executable for end-to-end tests of report / compare /
// sweep, capturing exit status, stdout and stderr through temporary files.
#ifndef REVERIE_BASE_TESTING_CLI_RUNNER_H_
#define REVERIE_BASE_TESTING_CLI_RUNNER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/printable.h"  // ShellQuote
#include "base/testing/temp_dir.h"

namespace reverie::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline CliResult RunCli(const std::string& binary, const std::vector<std::string>& args,
                        const std::string& scratch) {
  std::string cmd = ShellQuote(binary);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  const std::string out = scratch + "/cli.out", err = scratch + "/cli.err";
  cmd += " >" + ShellQuote(out) + " 2>" + ShellQuote(err) + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

#ifdef REVERIE_CLI
// The executable under test (a reverie_cli_test names it).
inline const std::string kCli = REVERIE_CLI;
#endif
#ifdef REVERIE_SOURCE_DIR
// The example trace of the README, small enough for every command.
inline const std::string kExampleTrace =
    std::string(REVERIE_SOURCE_DIR) + "/examples/tiny_mlp_training.json";
#endif

}  // namespace reverie::testing

#endif  // REVERIE_BASE_TESTING_CLI_RUNNER_H_
