// File: cli/script_args.h
//
// The command-line flags of every command that runs optimization scripts
// (predict, export, report, sweep, ...), declared in one place so that they
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

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/flags.h"
#include "lua/lua_engine.h"
#include "lua/script_runner.h"
#include "whatif/pipeline.h"

namespace reverie::cli {

// --script and --set fill scripts and settings; --lua-budget,
// --lua-memory-mb and --no-sandbox the limits (the engine's defaults when not
// given).
using ScriptArgs = whatif::ScriptSpec;

// --script, repeatable: one FILE per occurrence, in order.
inline CLI::Option* AddScriptFlag(CLI::App& app, ScriptArgs* out) {
  return app
      .add_option("--script", out->scripts,
                  "optimization script (a path, or a name from scripts/); repeatable, run in order")
      ->type_name("FILE")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// --lua-budget, --lua-memory-mb and --no-sandbox.
inline void AddLuaLimitFlags(CLI::App& app, ScriptArgs* out) {
  AddIntOption(app, "--lua-budget", 1, kNoMax,
               [out](int64_t n) { out->limits.instruction_budget = n; },
               "Lua VM instructions per script (and per schedule key function)");
  AddIntOption(app, "--lua-memory-mb", 1, kNoMax,
               [out](int64_t n) { out->limits.memory_limit_bytes = lua::MiBToBytes(n); },
               "Lua memory per script, MiB");
  app.add_flag_callback("--no-sandbox", [out] { out->limits.sandbox = false; },
                        "open Lua's standard libraries (trusted scripts only)");
}

// --set [SCRIPT.]KEY=VALUE, repeatable, into out->settings in order.
inline CLI::Option* AddSetFlag(CLI::App& app, ScriptArgs* out,
                               const std::string& help =
                                   "set a parameter the scripts declare; repeatable") {
  return app
      .add_option_function<std::vector<std::string>>(
          "--set",
          [out](const std::vector<std::string>& values) {
            for (const std::string& v : values) {
              absl::StatusOr<std::pair<std::string, std::string>> kv = lua::ParseSetting(v);
              if (!kv.ok()) throw CLI::ValidationError(std::string(kv.status().message()));
              out->settings.push_back(std::move(*kv));
            }
          },
          help)
      ->type_name("[SCRIPT.]KEY=VALUE")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// All five. A command that gives --set another meaning (sweep's value grids)
// calls AddScriptFlag and AddLuaLimitFlags and declares its own --set.
inline void AddScriptFlags(CLI::App& app, ScriptArgs* out) {
  AddScriptFlag(app, out);
  AddSetFlag(app, out);
  AddLuaLimitFlags(app, out);
}

}  // namespace reverie::cli

#endif  // REVERIE_CLI_SCRIPT_ARGS_H_
