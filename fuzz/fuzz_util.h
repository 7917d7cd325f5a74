// File: fuzz/fuzz_util.h
//
// What the fuzz targets share: a memory-backed file the pipeline opens by
// path (whatif::LoadAndSimulate takes a path, and a fuzzer must not litter
// the disk), and the checks of reverie's promises that turn a broken one
// into a crash the fuzzer reports (docs/RELIABILITY.md).
#ifndef REVERIE_FUZZ_FUZZ_UTIL_H_
#define REVERIE_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace reverie::fuzz {

// Invariants: path() names a file whose content is exactly the last Set()'s
// bytes; the file lives in memory (memfd) and disappears with the process.
class MemFile {
 public:
  MemFile();
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  void Set(const uint8_t* data, size_t size);
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// Aborts unless `s` is one line that names `who` (a bad input's message).
void CheckOneLine(const absl::Status& s, std::string_view who);

// The trace targets' body: `data` as a file through
// whatif::LoadAndSimulate (what every command runs first: load, build the
// graph, simulate the baseline); a rejected input must be one line naming
// the file.
void LoadBuildSimulate(const uint8_t* data, size_t size);

}  // namespace reverie::fuzz

#endif  // REVERIE_FUZZ_FUZZ_UTIL_H_
