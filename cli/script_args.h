// File: cli/script_args.h
//
// The command-line flags of every command that runs optimization scripts
// (predict, export, report, sweep, ...), parsed in one place so that they
// mean the same everywhere and reach the Lua engine the same way
// (whatif::Predict takes them as its ScriptSpec):
//
//   --script FILE              repeatable; run in order
//   --set [SCRIPT.]KEY=VALUE   repeatable; a script parameter
//   --lua-budget N             VM instructions per script (and its schedule key)
//   --lua-memory-mb N          Lua memory per script, MiB
//   --no-sandbox               open Lua's standard libraries (trusted scripts)
//
// Header-only because cli/ compiles command files straight into the
// executable (command.h), so there is no cli library to put it in.
#ifndef REVERIE_CLI_SCRIPT_ARGS_H_
#define REVERIE_CLI_SCRIPT_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/sv.h"
#include "lua/lua_engine.h"
#include "lua/script_runner.h"
#include "whatif/pipeline.h"

namespace reverie::cli {

// --script and --set fill scripts and settings; --lua-budget,
// --lua-memory-mb and --no-sandbox the limits (the engine's defaults when not
// given).
using ScriptArgs = whatif::ScriptSpec;

// If args[*i] is one of the five flags above, consumes it (and its value,
// advancing *i to the value) into *out and returns true; otherwise returns
// false and touches nothing. A missing or bad value also returns true, with
// *error set to one line starting "<command>: " (the caller stops there);
// *error is left alone on success.
//
// A command that gives --set another meaning (sweep's value grids) checks
// for it before calling this, so "--set" never reaches it.
inline bool ConsumeScriptArg(std::string_view command, const std::vector<std::string>& args,
                             size_t* i, ScriptArgs* out, std::string* error) {
  const std::string& a = args[*i];
  if (a == "--no-sandbox") {
    out->limits.sandbox = false;
    return true;
  }
  if (a != "--script" && a != "--set" && a != "--lua-budget" && a != "--lua-memory-mb") {
    return false;
  }
  if (*i + 1 >= args.size()) {
    *error = absl::StrCat(Sv(command), ": ", a, " needs a value");
    return true;
  }
  const std::string& v = args[++*i];
  if (a == "--script") {
    out->scripts.push_back(v);
    return true;
  }
  if (a == "--set") {
    absl::StatusOr<std::pair<std::string, std::string>> kv = lua::ParseSetting(v);
    if (!kv.ok()) {
      *error = absl::StrCat(Sv(command), ": ", kv.status().message());
      return true;
    }
    out->settings.push_back(std::move(*kv));
    return true;
  }
  int64_t n = 0;
  if (!absl::SimpleAtoi(v, &n) || n <= 0) {
    *error = absl::StrCat(Sv(command), ": ", a, " expects a positive integer, got '", v, "'");
    return true;
  }
  if (a == "--lua-budget") {
    out->limits.instruction_budget = n;
  } else {
    out->limits.memory_limit_bytes = lua::MiBToBytes(n);
  }
  return true;
}

}  // namespace reverie::cli

#endif  // REVERIE_CLI_SCRIPT_ARGS_H_
