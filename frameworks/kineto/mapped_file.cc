#include "frameworks/kineto/mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/huge_pages.h"

namespace reverie::kineto {
namespace {

// Live mappings the SIGBUS handler may repair. A fixed table: the handler
// may not allocate or lock, and a process maps few trace files at once.
constexpr int kSlots = 64;

struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> truncated{false};
};

Slot g_slots[kSlots];
struct sigaction g_previous;
bool g_installed = false;
uintptr_t g_page = 4096;  // the system's page size, read once (sysconf is no signal-safe call)

// A page of a live mapping read past the file's end (BUS_ADRERR): zeroes are
// mapped over it and the mapping is marked, so the reader goes on and
// Check() reports it. Any other SIGBUS is given back to the action there
// before, as if this handler had never been installed.
void OnSigbus(int sig, siginfo_t* info, void* /*context*/) {
  if (info != nullptr && info->si_code == BUS_ADRERR) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
    for (Slot& s : g_slots) {
      const uintptr_t begin = s.begin.load(std::memory_order_acquire);
      if (begin == 0 || at < begin || at >= s.end.load(std::memory_order_acquire)) continue;
      void* page = reinterpret_cast<void*>(at & ~(g_page - 1));
      if (::mmap(page, g_page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
          MAP_FAILED) {
        s.truncated.store(true, std::memory_order_release);
        return;  // the read is retried and sees zeroes
      }
    }
  }
  ::sigaction(SIGBUS, &g_previous, nullptr);
  // A fault recurs on return under the previous action; a SIGBUS sent by
  // kill() or raise() would not, so it is sent again.
  if (info == nullptr || info->si_code <= 0) ::raise(sig);
}

bool InstallHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page = static_cast<uintptr_t>(page);
    struct sigaction action {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    g_installed = ::sigaction(SIGBUS, &action, &g_previous) == 0;
  });
  return g_installed;
}

int TakeSlot() {
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_slots[i].taken.compare_exchange_strong(expected, true)) return i;
  }
  return -1;
}

bool SameTime(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

}  // namespace

std::optional<MappedFile> MappedFile::Map(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return std::nullopt;
  if (!InstallHandler()) return std::nullopt;
  const int slot = TakeSlot();
  if (slot < 0) return std::nullopt;
  const size_t size = static_cast<size_t>(st.st_size);
  const size_t mapped = RoundUpToPages(size);
  void* p = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    g_slots[slot].taken.store(false);
    return std::nullopt;
  }
  // Read ahead of the parse when the file is not in the page cache yet.
  ::madvise(p, mapped, MADV_WILLNEED);
  MappedFile m;
  m.fd_ = fd;
  m.data_ = static_cast<char*>(p);
  m.size_ = size;
  m.mapped_ = mapped;
  m.slot_ = slot;
  m.mtime_ = st.st_mtim;
  Slot& s = g_slots[slot];
  s.truncated.store(false);
  s.end.store(reinterpret_cast<uintptr_t>(p) + mapped, std::memory_order_release);
  s.begin.store(reinterpret_cast<uintptr_t>(p), std::memory_order_release);
  return m;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)),
      slot_(std::exchange(other.slot_, -1)),
      mtime_(other.mtime_) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    slot_ = std::exchange(other.slot_, -1);
    mtime_ = other.mtime_;
  }
  return *this;
}

MappedFile::~MappedFile() { Reset(); }

void MappedFile::Reset() {
  if (slot_ >= 0) {
    Slot& s = g_slots[slot_];
    s.begin.store(0, std::memory_order_release);
    s.end.store(0, std::memory_order_release);
    s.taken.store(false, std::memory_order_release);
  }
  if (data_ != nullptr) ::munmap(data_, mapped_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  data_ = nullptr;
  size_ = mapped_ = 0;
  slot_ = -1;
}

absl::Status MappedFile::Check(const std::string& path) const {
  if (slot_ >= 0 && g_slots[slot_].truncated.load(std::memory_order_acquire)) {
    return absl::DataLossError(
        absl::StrCat(path, ": the file was truncated while it was read (it had ", size_,
                     " bytes): read it again once nothing writes to it"));
  }
  struct stat st {};
  if (fd_ >= 0 && (::fstat(fd_, &st) != 0 || static_cast<size_t>(st.st_size) != size_ ||
                   !SameTime(st.st_mtim, mtime_))) {
    return absl::DataLossError(absl::StrCat(path, ": the file changed while it was read (", size_,
                                            " bytes when opened, ", st.st_size,
                                            " now): read it again once nothing writes to it"));
  }
  return absl::OkStatus();
}

}  // namespace reverie::kineto
