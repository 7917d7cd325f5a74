// File: cli/flags.h
//
// Options whose values are checked as CLI11 parses them, so that a bad value
// is one line "reverie: CMD: NAME expects ..., got 'V'" naming the option,
// whichever command it belongs to. Header-only because cli/ compiles command
// files straight into the executable (command.h).
#ifndef REVERIE_CLI_FLAGS_H_
#define REVERIE_CLI_FLAGS_H_

#include <cstdint>
#include <functional>
#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "depgraph/builder.h"

namespace reverie::cli {

inline constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();

// An integer as written on a command line: digits, or a whole number in
// exponent form ("5e9", the way docs write budgets).
inline bool ParseIntArg(const std::string& v, int64_t* n) {
  if (absl::SimpleAtoi(v, n)) return true;
  double d = 0;
  if (v.find_first_of("eE") == std::string::npos || !absl::SimpleAtod(v, &d)) return false;
  // Below 2^63 exactly, and whole: "5e9" is 5000000000, "1.5e0" is no integer.
  if (!(d >= -9.2e18 && d <= 9.2e18) || d != static_cast<double>(static_cast<int64_t>(d))) {
    return false;
  }
  *n = static_cast<int64_t>(d);
  return true;
}

// An option taking an integer in [min, max], handed to `set`. `what` names
// the range in the error ("" picks "a positive integer", "a non-negative
// integer" or "an integer in MIN..MAX").
inline CLI::Option* AddIntOption(CLI::App& app, const std::string& name, int64_t min, int64_t max,
                                 std::function<void(int64_t)> set, const std::string& help,
                                 std::string what = "") {
  if (what.empty()) {
    what = min == 1 && max == kNoMax   ? "a positive integer"
           : min == 0 && max == kNoMax ? "a non-negative integer"
                                       : absl::StrCat("an integer in ", min, "..", max);
  }
  const std::string flag = name.substr(name.rfind(',') + 1);  // "-o,--output": "--output"
  return app
      .add_option_function<std::string>(
          name,
          [flag, min, max, what, set = std::move(set)](const std::string& v) {
            int64_t n = 0;
            if (!ParseIntArg(v, &n) || n < min || n > max) {
              throw CLI::ValidationError(absl::StrCat(flag, " expects ", what, ", got '", v, "'"));
            }
            set(n);
          },
          help)
      ->type_name("N");
}

// The same into an integer variable (a value past its type's range is
// clamped to it).
template <typename Int>
CLI::Option* AddInt(CLI::App& app, const std::string& name, Int* out, int64_t min, int64_t max,
                    const std::string& help, const std::string& what = "") {
  return AddIntOption(
      app, name, min, max,
      [out](int64_t n) {
        *out = static_cast<Int>(std::min<int64_t>(n, std::numeric_limits<Int>::max()));
      },
      help, what);
}

// An option taking one of `choices`, handed to `set`; `what` describes them
// in the error (default "A or B").
inline CLI::Option* AddChoice(CLI::App& app, const std::string& name,
                              std::initializer_list<const char*> choices,
                              std::function<void(const std::string&)> set,
                              const std::string& help, std::string what = "") {
  std::vector<std::string> list(choices.begin(), choices.end());
  if (what.empty()) what = absl::StrJoin(list, " or ");
  return app
      .add_option_function<std::string>(
          name,
          [name, list, what, set = std::move(set)](const std::string& v) {
            if (std::find(list.begin(), list.end(), v) == list.end()) {
              throw CLI::ValidationError(absl::StrCat(name, " expects ", what, ", got '", v, "'"));
            }
            set(v);
          },
          help)
      ->type_name(absl::StrJoin(list, "|"));
}

// A path option that must not be empty (`--timeline=` is refused with
// "NAME needs <what>").
inline CLI::Option* AddPath(CLI::App& app, const std::string& name, std::string* out,
                            const std::string& help, const std::string& type_name = "FILE",
                            const std::string& what = "an output path") {
  const std::string flag = name.substr(name.rfind(',') + 1);
  return app
      .add_option_function<std::string>(
          name,
          [flag, out, what](const std::string& v) {
            if (v.empty()) throw CLI::ValidationError(absl::StrCat(flag, " needs ", what));
            *out = v;
          },
          help)
      ->type_name(type_name);
}

// The --timeline flag of predict, replay, report and ranks.
inline CLI::Option* AddTimelineFlag(CLI::App& app, std::string* out) {
  return AddPath(app, "--timeline", out,
                 "write a Chrome-trace / Perfetto timeline of the runs to OUT.json", "OUT.json");
}

// --cpu-model ops|gaps (predict, validate): how the graph models CPU time.
inline CLI::Option* AddCpuModelFlag(CLI::App& app, depgraph::BuildOptions* build) {
  return AddChoice(
      app, "--cpu-model", {"ops", "gaps"}, [build](const std::string& v) { build->cpu_ops = v == "ops"; },
      "CPU time as ops and framework time apart (ops, the default) or as gaps between launches",
      "ops (op and framework time apart) or gaps");
}

// A required positional argument.
inline CLI::Option* AddArg(CLI::App& app, const std::string& name, std::string* out,
                           const std::string& help) {
  return app.add_option(name, *out, help)->required()->type_name("");
}

// A required positional argument taking one or more values (TRACE...).
inline CLI::Option* AddArgs(CLI::App& app, const std::string& name, std::vector<std::string>* out,
                            const std::string& help) {
  return app.add_option(name, *out, help)->required()->type_name("");
}

}  // namespace reverie::cli

#endif  // REVERIE_CLI_FLAGS_H_
