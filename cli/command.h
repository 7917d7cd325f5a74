// File: cli/command.h
//
// Each subcommand lives in its own cli/cmd_<name>.cc and registers itself with
// REVERIE_COMMAND; main.cc only dispatches. The command files are compiled
// straight into the executable (not a static library), so the registrars'
// static initializers are never dropped by the linker.
#ifndef REVERIE_CLI_COMMAND_H_
#define REVERIE_CLI_COMMAND_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace reverie::cli {

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the command ran but the answer is "no" / failed
inline constexpr int kExitBadInput = 2;  // bad arguments or unreadable input

// A command receives its arguments after the command name.
using CommandFn = std::function<int(const std::vector<std::string>& args)>;

struct Command {
  std::string name;
  std::string usage;    // one line: "info TRACE [--json]"
  std::string summary;  // one line of what it does
  CommandFn run;
};

std::vector<Command>& Registry();

struct Registrar {
  Registrar(std::string name, std::string usage, std::string summary, CommandFn fn) {
    Registry().push_back({std::move(name), std::move(usage), std::move(summary), std::move(fn)});
  }
};

#define REVERIE_COMMAND(id, name, usage, summary, fn) \
  static ::reverie::cli::Registrar reverie_command_registrar_##id(name, usage, summary, fn)

// Prints "reverie: <message>" on one line to stderr and returns kExitBadInput.
int BadInput(std::string_view message);

}  // namespace reverie::cli

#endif  // REVERIE_CLI_COMMAND_H_
