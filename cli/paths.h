// File: cli/paths.h
//
// Output paths checked against the inputs before anything is written, so that
// no command overwrites a trace or script the user gave it. Header-only:
// cli/ compiles its command files straight into the executable (command.h).
#ifndef REVERIE_CLI_PATHS_H_
#define REVERIE_CLI_PATHS_H_

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace reverie::cli {

// Whether `path` is (or, once written, will be) a regular file: a device
// such as /dev/null may take several outputs.
inline bool RegularOrNew(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  return ec || !std::filesystem::exists(st) || std::filesystem::is_regular_file(st);
}

// A path as one comparable value: an existing file by its device and
// inode (symlinks, hard links and spellings alike), a new one by its
// weakly canonical path, a path that cannot be resolved by its spelling.
inline std::string FileKey(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return absl::StrCat("i", st.st_dev, ":", st.st_ino);
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? absl::StrCat("r", path) : absl::StrCat("p", canonical.string());
}

// Whether two paths name the same file (or would, once the missing one is
// created): symlinks and "./" spellings included.
inline bool SameFile(const std::string& a, const std::string& b) {
  return FileKey(a) == FileKey(b);
}

// InvalidArgument naming the first of `outputs` (empty ones skipped) that is
// one of `inputs`, or that another output names too (issue 29, D30: the
// second write replaced the first), checked before anything is read or
// written. Each path is resolved once and looked up, so an export to 4096
// ranks checks 4096 files, not 4096 x 4096 pairs.
inline absl::Status CheckOutputs(const std::vector<std::string>& outputs,
                                 const std::vector<std::string>& inputs) {
  absl::flat_hash_map<std::string, const std::string*> input_keys, output_keys;
  for (const std::string& in : inputs) input_keys.try_emplace(FileKey(in), &in);
  for (const std::string& out : outputs) {
    if (out.empty()) continue;
    const std::string key = FileKey(out);
    if (const auto it = input_keys.find(key); it != input_keys.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(out, ": output would overwrite the input ", *it->second));
    }
    // A device such as /dev/null may take several outputs.
    if (!RegularOrNew(out)) continue;
    const auto [it, added] = output_keys.try_emplace(key, &out);
    if (!added) {
      return absl::InvalidArgumentError(
          absl::StrCat(out, ": two outputs would be written to this file (", *it->second, " and ",
                       out, "); give each its own"));
    }
  }
  return absl::OkStatus();
}

}  // namespace reverie::cli

#endif  // REVERIE_CLI_PATHS_H_
