// File: base/atomic_file.h
//
// Outputs written atomically: the bytes go to a temporary file in the
// destination's folder, which replaces the destination (rename(2), atomic on
// one file system) only once everything was written and synced. A failed
// write (a full disk, a size limit, a crash) leaves the destination as it
// was and removes the temporary, so no reader ever sees half a file
// (issue 17, D10: a truncated .pb used to be read as a valid, shorter trace).
//
// A destination that exists and is not a regular file (/dev/null, a FIFO, a
// terminal) cannot be replaced and is written in place.
//
// Invariants of AtomicFile: between Open() and Commit()/destruction, fd()
// is the temporary (or the special file); the temporary never outlives the
// object unless committed under the destination's name.
#ifndef REVERIE_BASE_ATOMIC_FILE_H_
#define REVERIE_BASE_ATOMIC_FILE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace reverie {

class AtomicFile {
 public:
  // Errors name `path`: kPermissionDenied when no temporary can be created
  // beside it (or the special file cannot be opened).
  static absl::StatusOr<std::unique_ptr<AtomicFile>> Open(const std::string& path) {
    std::unique_ptr<AtomicFile> f(new AtomicFile(path));
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
      }
      f->fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      if (f->fd_ < 0) return Error(path, "cannot open for writing");
      return f;
    }
    // O_EXCL: never follows a link or reuses a file someone else made.
    std::random_device rd;
    for (int attempt = 0; attempt < 16 && f->fd_ < 0; ++attempt) {
      f->temp_ = absl::StrCat(path, ".tmp-", ::getpid(), "-", rd() % 1000000);
      f->fd_ = ::open(f->temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (f->fd_ < 0 && errno != EEXIST) break;
    }
    if (f->fd_ < 0) {
      f->temp_.clear();
      return Error(path, "cannot create a temporary file beside it");
    }
    return f;
  }

  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty()) ::unlink(temp_.c_str());
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  int fd() const { return fd_; }

  // Writes all of `bytes` (retrying short writes); on failure the error is
  // remembered and returned by Commit() too.
  absl::Status Write(std::string_view bytes) {
    while (!bytes.empty() && error_.ok()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = Error(path_, "write failed");
        break;
      }
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return error_;
  }

  // For writers that use fd() directly (a protobuf FileOutputStream): a
  // failure they saw, so that Commit() refuses.
  void Fail(absl::Status s) {
    if (error_.ok()) error_ = std::move(s);
  }

  // Syncs and renames the temporary over the destination. After a failure
  // (here or before) the destination is untouched and the temporary gone.
  absl::Status Commit() {
    if (error_.ok() && !temp_.empty() && ::fsync(fd_) != 0) error_ = Error(path_, "sync failed");
    if (::close(fd_) != 0 && error_.ok()) error_ = Error(path_, "write failed");
    fd_ = -1;
    if (!error_.ok() || temp_.empty()) return error_;
    if (::rename(temp_.c_str(), path_.c_str()) != 0) {
      error_ = Error(path_, "cannot replace it with the new file");
      return error_;
    }
    temp_.clear();
    return absl::OkStatus();
  }

 private:
  explicit AtomicFile(std::string path) : path_(std::move(path)) {}

  static absl::Status Error(const std::string& path, const char* what) {
    const int e = errno;
    const std::string m = absl::StrCat(path, ": ", what, ": ", std::strerror(e));
    if (e == EACCES || e == EPERM || e == EROFS) return absl::PermissionDeniedError(m);
    return absl::DataLossError(m);
  }

  std::string path_;
  std::string temp_;  // empty: writing the destination in place (or committed)
  int fd_ = -1;
  absl::Status error_;
};

// `contents` as the whole of `path`, atomically (see the file comment).
inline absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> f, AtomicFile::Open(path));
  if (absl::Status s = f->Write(contents); !s.ok()) return s;
  return f->Commit();
}

}  // namespace reverie

#endif  // REVERIE_BASE_ATOMIC_FILE_H_
