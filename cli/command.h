// File: cli/command.h
//
// Each subcommand lives in its own cli/cmd_<name>.cc and registers itself with
// REVERIE_COMMAND; main.cc only dispatches. The command files are compiled
// straight into the executable (not a static library), so the registrars'
// static initializers are never dropped by the linker.
//
// A command declares its options and arguments on a CLI11 app (its setup
// function) and returns the function that runs it once they are parsed, so
// every command parses `--flag value` and `--flag=value` alike and answers
// `--help`. The run function returns an absl::Status; main.cc turns it into
// the exit status (ExitStatusOf) and the one line on stderr.
#ifndef REVERIE_CLI_COMMAND_H_
#define REVERIE_CLI_COMMAND_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace reverie::cli {

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the command ran but the answer is "no" / failed
inline constexpr int kExitBadInput = 2;  // bad arguments or unreadable input

// Runs a command whose options have been parsed.
using RunFn = std::function<absl::Status()>;
// Declares a command's options and arguments on `app` (binding them to state
// the returned RunFn owns) and returns the RunFn.
using SetupFn = std::function<RunFn(CLI::App& app)>;

struct Command {
  std::string name;
  std::string summary;  // one line of what it does
  SetupFn setup;
};

std::vector<Command>& Registry();

struct Registrar {
  Registrar(std::string name, std::string summary, SetupFn setup) {
    Registry().push_back({std::move(name), std::move(summary), std::move(setup)});
  }
};

#define REVERIE_COMMAND(id, name, summary, setup) \
  static ::reverie::cli::Registrar reverie_command_registrar_##id(name, summary, setup)

// A usage error found after parsing (a missing argument, flags that do not
// go together), or a failure the command states itself (collect: no
// collector library): printed as "reverie: CMD: <problem>", exit
// kExitBadInput.
absl::Status UsageError(const std::string& problem);

// `s` (not OK) ending the command with `exit_status` instead of the one its
// code maps to. With an empty message nothing more is printed: the command
// has given its answer and the answer is "no" (a sweep point failed), or it
// passes on the exit status of the program it ran (collect).
absl::Status WithExitStatus(absl::Status s, int exit_status);

// `s` with `prefix` before its message (a path the library did not name),
// its code and payloads kept.
absl::Status Prefixed(const std::string& prefix, const absl::Status& s);

// `s` (not OK) with lines main prints below its one line (Lua's traceback).
absl::Status WithDetail(absl::Status s, const std::string& detail);
// The lines WithDetail attached, or "".
std::string DetailOf(const absl::Status& s);

// The exit status for what a command returned: 0 for OK, the one given to
// WithExitStatus, else kExitBadInput: whatever the code (InvalidArgument,
// NotFound, DataLoss, ResourceExhausted, ...), an error the pipeline returns
// is about a file, a script or an argument the user gave. A failure that is
// not (a write that failed, a bug of ours) says so with WithExitStatus.
int ExitStatusOf(const absl::Status& s);

// Whether `s` came from UsageError.
bool IsUsageError(const absl::Status& s);

}  // namespace reverie::cli

#endif  // REVERIE_CLI_COMMAND_H_
