#include "collector/chunk_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace reverie::collector {
namespace {

// "dir/trace.pb" -> "dir/trace.<pid>.pb"; "trace" -> "trace.<pid>".
std::string PerProcessPath(const std::string& path) {
  const std::string pid = std::to_string(static_cast<long long>(::getpid()));
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) ||
      dot == (slash == std::string::npos ? 0 : slash + 1)) {
    return path + "." + pid;
  }
  return path.substr(0, dot) + "." + pid + path.substr(dot);
}

// Opens `path` for writing and takes an exclusive advisory lock without
// truncating first, so that a file another live process is writing is never
// clobbered. Returns the fd or -1 (errno set; EWOULDBLOCK when locked).
int OpenLocked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  if (::ftruncate(fd, 0) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

}  // namespace

ChunkWriter::~ChunkWriter() { Close(); }

bool ChunkWriter::Open(const std::string& path, const HeaderInfo& header, const Options& options,
                       std::string* error) {
  options_ = options;
  path_ = path;
  fd_ = OpenLocked(path_);
  if (fd_ < 0 && errno == EWOULDBLOCK) {
    path_ = PerProcessPath(path);
    fd_ = OpenLocked(path_);
  }
  if (fd_ < 0) {
    *error = path_ + ": cannot open for writing: " + std::strerror(errno);
    return false;
  }
  std::string region;
  if (!EncodeHeaderRegion(header, options_.header_region_bytes, &region) ||
      !WriteAll(region.data(), region.size(), 0)) {
    *error = path_ + ": cannot write the trace header";
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  offset_ = static_cast<int64_t>(region.size());
  Intern("");  // string id 0, first string of the first chunk
  if (!FlushChunk(false)) {
    *error = path_ + ": cannot write the first chunk: " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  return true;
}

uint32_t ChunkWriter::Intern(std::string_view s) {
  auto it = strings_.find(std::string(s));
  if (it != strings_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace(std::string(s), id);
  chunk_.String(kChunkStrings, s, /*keep_empty=*/true);
  return id;
}

uint32_t ChunkWriter::AddRange(const RangeRecord& r) {
  AddEncoded(kChunkRanges, r, EncodeRange);
  return ++next_range_;
}

void ChunkWriter::AddCounter(TraceCounter counter, int64_t delta) {
  // Per record for some counters (records outside the window, filtered
  // calls): an array add, no string.
  if (delta == 0) return;
  pending_counters_[static_cast<size_t>(counter)] += delta;
  counters_pending_ = true;
}

bool ChunkWriter::UpdateHeader(const HeaderInfo& header) {
  if (fd_ < 0) return false;
  std::string region;
  if (!EncodeHeaderRegion(header, options_.header_region_bytes, &region)) {
    AddCounter(TraceCounter::header_overflow, 1);
    return false;
  }
  return WriteAll(region.data(), region.size(), 0);
}

void ChunkWriter::MaybeFlush() {
  if (chunk_.size() >= options_.chunk_bytes) FlushChunk(options_.fsync_each_chunk);
}

bool ChunkWriter::FlushChunk(bool sync) {
  if (fd_ < 0 || failed_) return false;
  if (counters_pending_) {
    for (size_t c = 0; c < kTraceCounterCount; ++c) {
      if (pending_counters_[c] == 0) continue;
      const size_t at = chunk_.BeginMessage(kChunkCounters);
      EncodeCounter(std::string(kTraceCounterSpecs[c].name), pending_counters_[c], &chunk_);
      chunk_.EndMessage(at);
      pending_counters_[c] = 0;
    }
    counters_pending_ = false;
  }
  if (!chunk_.empty() || chunks_written_ == 0) {
    // One write per chunk (length + body) so a crash never leaves a length
    // without at least the start of its body.
    uint8_t length[10];
    const size_t n = EncodeVarint(chunk_.size(), length);
    struct iovec parts[2] = {{length, n}, {const_cast<uint8_t*>(chunk_.data()), chunk_.size()}};
    if (!WriteVec(parts, offset_)) {
      failed_ = true;
      return false;
    }
    offset_ += static_cast<int64_t>(n + chunk_.size());
    ++chunks_written_;
    chunk_.clear();
  }
  if (sync) ::fdatasync(fd_);
  return true;
}

bool ChunkWriter::WriteVec(struct iovec (&parts)[2], int64_t offset) {
  size_t total = parts[0].iov_len + parts[1].iov_len;
  while (total > 0) {
    const ssize_t n = ::pwritev(fd_, parts, 2, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    // Partial write: advance through the two parts.
    size_t done = static_cast<size_t>(n);
    offset += n;
    total -= done;
    for (struct iovec& p : parts) {
      const size_t take = done < p.iov_len ? done : p.iov_len;
      p.iov_base = static_cast<char*>(p.iov_base) + take;
      p.iov_len -= take;
      done -= take;
    }
  }
  return true;
}

bool ChunkWriter::WriteAll(const void* data, size_t size, int64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, p, size, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return true;
}

// The end marker (proto/trace.proto): without it a reader refuses the file
// as truncated, which is what a crash or a failed write leaves.
bool ChunkWriter::WriteEnd() {
  if (fd_ < 0 || failed_) return false;
  WireBuffer end;
  const size_t at = end.BeginMessage(kChunkEnd);
  end.U64(1, static_cast<uint64_t>(chunks_written_));
  end.U64(2, static_cast<uint64_t>(events_added_));
  end.EndMessage(at);
  uint8_t length[10];
  const size_t n = EncodeVarint(end.size(), length);
  struct iovec parts[2] = {{length, n}, {const_cast<uint8_t*>(end.data()), end.size()}};
  if (!WriteVec(parts, offset_)) {
    failed_ = true;
    return false;
  }
  offset_ += static_cast<int64_t>(n + end.size());
  return true;
}

void ChunkWriter::Close() {
  if (fd_ < 0) return;
  if (FlushChunk(false)) WriteEnd();
  ::fdatasync(fd_);
  ::close(fd_);  // also releases the advisory lock
  fd_ = -1;
}

}  // namespace reverie::collector
