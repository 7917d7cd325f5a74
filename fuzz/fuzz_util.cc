#include "fuzz/fuzz_util.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "whatif/pipeline.h"

namespace reverie::fuzz {

MemFile::MemFile() {
  fd_ = ::memfd_create("reverie-fuzz", MFD_CLOEXEC);
  if (fd_ < 0) {
    std::perror("memfd_create");
    std::abort();
  }
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemFile::~MemFile() { ::close(fd_); }

void MemFile::Set(const uint8_t* data, size_t size) {
  if (::ftruncate(fd_, 0) != 0) std::abort();
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
}

void CheckOneLine(const absl::Status& s, std::string_view who) {
  const std::string_view m(s.message().data(), s.message().size());
  if (m.empty() || m.find('\n') != std::string_view::npos || m.find(who) == std::string_view::npos) {
    std::fprintf(stderr, "not one line naming %.*s: [%.*s]\n", static_cast<int>(who.size()),
                 who.data(), static_cast<int>(m.size()), m.data());
    std::abort();
  }
}

void LoadBuildSimulate(const uint8_t* data, size_t size) {
  static auto* file = new MemFile();  // one per process, never freed
  file->Set(data, size);
  absl::StatusOr<std::unique_ptr<whatif::LoadedTrace>> loaded =
      whatif::LoadAndSimulate(file->path());
  if (!loaded.ok()) {
    CheckOneLine(loaded.status(), file->path());
    return;
  }
  // What every report reads: the per-step times and their mean.
  volatile double mean = (*loaded)->baseline.mean_step_ns();
  (void)mean;
}

}  // namespace reverie::fuzz
