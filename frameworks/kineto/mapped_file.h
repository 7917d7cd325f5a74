// File: frameworks/kineto/mapped_file.h
//
// A regular file's bytes mapped into memory, read-only. Reading a large
// trace with read() copies it into fresh memory, and on a virtual machine
// the first touch of fresh memory can cost more than parsing the text (the
// page zeroing was 40-60% of a 0.5 GB import's samples); a mapping shows the
// page cache's own pages instead.
//
// Mapping has two hazards that read() does not, and both are handled here:
// - A file truncated while mapped: reading a page past its new end raises
//   SIGBUS, which would kill the process. A SIGBUS handler, installed on the
//   first mapping, maps a page of zeroes over the faulting page of a live
//   mapping and records it; Check() then reports the truncation. Any other
//   SIGBUS goes to the handler that was there before (or the default action).
// - A file written while mapped: its bytes change under the reader. Readers
//   must never rely on reading the same byte twice (the Kineto parser copies
//   each chunk before simdjson parses it); Check() compares the file's size
//   and modification time with those at mapping.
#ifndef REVERIE_FRAMEWORKS_KINETO_MAPPED_FILE_H_
#define REVERIE_FRAMEWORKS_KINETO_MAPPED_FILE_H_

#include <time.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace reverie::kineto {

class MappedFile {
 public:
  // Maps the open regular file `fd`, which the result owns (closing it with
  // the mapping). nullopt when it cannot be mapped (empty, a file system
  // without mmap, too many mappings alive, no address space): `fd` is then
  // still the caller's, to read.
  static std::optional<MappedFile> Map(int fd);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view bytes() const { return std::string_view(data_, size_); }

  // OK while the bytes seen are the file's as mapped; kDataLoss naming
  // `path` when it was truncated (some pages then read as zeroes) or written
  // since. Call it after the bytes were used, before trusting the result.
  absl::Status Check(const std::string& path) const;

 private:
  MappedFile() = default;
  void Reset();

  int fd_ = -1;
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;
  int slot_ = -1;  // in the SIGBUS handler's table of live mappings
  timespec mtime_{};
};

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_MAPPED_FILE_H_
