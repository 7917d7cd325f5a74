// File: cli/paths.h
//
// Output paths checked against the inputs before anything is written, so that
// no command overwrites a trace or script the user gave it. Header-only:
// cli/ compiles its command files straight into the executable (command.h).
#ifndef REVERIE_CLI_PATHS_H_
#define REVERIE_CLI_PATHS_H_

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace reverie::cli {

// Whether two paths name the same file (or would, once the missing one is
// created): symlinks and "./" spellings included.
inline bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec)) {
    return std::filesystem::equivalent(a, b, ec);
  }
  const auto ca = std::filesystem::weakly_canonical(a, ec);
  if (ec) return a == b;
  const auto cb = std::filesystem::weakly_canonical(b, ec);
  if (ec) return a == b;
  return ca == cb;
}

// "" when `output` is none of `inputs`, else the one-line refusal.
inline std::string OverwritesInput(const std::string& output,
                                   const std::vector<std::string>& inputs) {
  for (const std::string& in : inputs) {
    if (SameFile(output, in)) return absl::StrCat(output, ": output would overwrite the input ", in);
  }
  return "";
}

// Whether `path` is (or, once written, will be) a regular file: a device
// such as /dev/null may take several outputs.
inline bool RegularOrNew(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  return ec || !std::filesystem::exists(st) || std::filesystem::is_regular_file(st);
}

// InvalidArgument naming the first of `outputs` (empty ones skipped) that is
// one of `inputs`, or that another output names too (issue 29, D30: the
// second write replaced the first), checked before anything is read or
// written.
inline absl::Status CheckOutputs(const std::vector<std::string>& outputs,
                                 const std::vector<std::string>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& out = outputs[i];
    if (out.empty()) continue;
    if (std::string why = OverwritesInput(out, inputs); !why.empty()) {
      return absl::InvalidArgumentError(why);
    }
    for (size_t j = 0; j < i; ++j) {
      if (!outputs[j].empty() && RegularOrNew(out) && SameFile(out, outputs[j])) {
        return absl::InvalidArgumentError(absl::StrCat(
            out, ": two outputs would be written to this file (", outputs[j], " and ", out,
            "); give each its own"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace reverie::cli

#endif  // REVERIE_CLI_PATHS_H_
