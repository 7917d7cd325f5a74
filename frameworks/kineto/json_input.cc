#include "frameworks/kineto/json_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/huge_pages.h"
#include "base/status_macros.h"
#include "simdjson.h"

#ifdef REVERIE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

namespace reverie::kineto {
namespace {

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING, "padding must cover simdjson's");

// Output per zlib call, so that the bomb check runs at least this often.
constexpr size_t kInflateStep = size_t{16} << 20;

std::string MiB(size_t bytes) { return absl::StrFormat("%.1f MiB", bytes / 1048576.0); }

absl::Status OutOfMemory(const std::string& path, size_t bytes) {
  return absl::ResourceExhaustedError(
      absl::StrCat(path, ": out of memory: cannot hold ", MiB(bytes), " of JSON text"));
}

// The most a gzip stream whose first `consumed` compressed bytes have been
// read may inflate to (see kMaxInflateRatio).
size_t InflateLimit(size_t consumed) {
  return std::max(kMinInflateLimit, kMaxInflateRatio * consumed);
}

absl::Status Bomb(const std::string& path, size_t limit, size_t consumed) {
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": refused as a likely gzip bomb: its first ", MiB(consumed),
      " of compressed data inflate to more than ", MiB(limit), " (over ", kMaxInflateRatio,
      "x; real traces compress 10-30x); if the trace is genuine, decompress it first "
      "(zcat FILE > trace.json) and give reverie the .json"));
}

// Reads a regular file to its end into `buf`; `size_hint` is its size from
// fstat (it may still grow while being read).
absl::Status ReadAll(int fd, const std::string& path, size_t size_hint, TextBuffer* buf,
                     size_t* used) {
  if (!buf->Reserve(std::max<size_t>(size_hint, 1))) return OutOfMemory(path, size_hint);
  *used = 0;
  while (true) {
    if (*used == buf->room() && !buf->Reserve(buf->room() * 2)) {
      return OutOfMemory(path, buf->room() * 2);
    }
    const ssize_t n = ::read(fd, buf->data() + *used, buf->room() - *used);
    if (n == 0) return absl::OkStatus();
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::DataLossError(absl::StrCat(path, ": read failed: ", std::strerror(errno)));
    }
    *used += static_cast<size_t>(n);
  }
}

JsonInput Finish(TextBuffer buf, size_t size, bool was_gzip) {
  std::memset(buf.data() + size, 0, kJsonPadding);
  return JsonInput(std::move(buf), size, was_gzip);
}

bool AllZero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == '\0'; });
}

// Streaming inflate of every gzip member; slower than libdeflate but needs
// no size up front, stops at the limit, and pinpoints where damage is.
absl::StatusOr<JsonInput> InflateWithZlib(std::string_view in, const std::string& path,
                                          size_t size_hint, size_t max_inflated) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(absl::StrCat(path, ": zlib initialisation failed"));
  }
  struct Ender {
    z_stream* zs;
    ~Ender() { inflateEnd(zs); }
  } ender{&zs};
  TextBuffer out;
  const size_t first = std::max<size_t>({size_hint, in.size() * 4, 1 << 16});
  if (!out.Reserve(std::min(first, max_inflated + 1))) return OutOfMemory(path, first);
  size_t used = 0, in_pos = 0;
  while (true) {
    if (used == out.room()) {
      const size_t bigger = std::min(out.room() * 2, max_inflated + 1);
      if (!out.Reserve(bigger)) return OutOfMemory(path, bigger);
    }
    // zlib counts in uInt; feed at most 1 GiB at a time.
    const size_t in_chunk = std::min<size_t>(in.size() - in_pos, size_t{1} << 30);
    const size_t out_chunk = std::min(out.room() - used, kInflateStep);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_pos));
    zs.avail_in = static_cast<uInt>(in_chunk);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    zs.avail_out = static_cast<uInt>(out_chunk);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_chunk - zs.avail_in;
    used += out_chunk - zs.avail_out;
    const size_t limit = std::min(max_inflated, InflateLimit(in_pos));
    if (used > limit) return Bomb(path, limit, in_pos);
    if (rc == Z_STREAM_END) {
      // Members are concatenated as gzip(1) does (a second JSON document
      // is then refused by the parser); zero bytes after the last member
      // (tape padding) are ignored like gzip(1) does; anything else is not
      // part of the stream.
      const std::string_view rest = in.substr(in_pos);
      if (rest.size() >= 2 && LooksLikeGzip(rest)) {
        inflateReset(&zs);
        continue;
      }
      if (!AllZero(rest)) {
        return absl::DataLossError(absl::StrCat(
            path, ": ", rest.size(), " bytes after the end of the gzip data (compressed byte ",
            in_pos, ") are not gzip: the file is damaged or something was appended to it"));
      }
      break;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) {
      if (zs.avail_out == 0) continue;  // output full: grow and go on
      return absl::DataLossError(absl::StrCat(
          path, ": truncated gzip data: the compressed stream ends at byte ", in.size(),
          " before its end marker (", used, " bytes of JSON recovered)"));
    }
    if (rc == Z_MEM_ERROR) return OutOfMemory(path, used);
    return absl::DataLossError(absl::StrCat(path, ": corrupt gzip data at compressed byte ",
                                            in_pos, ": ", zs.msg ? zs.msg : "inflate error"));
  }
  return Finish(std::move(out), used, /*was_gzip=*/true);
}

}  // namespace

TextBuffer::TextBuffer(TextBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), mapped_(std::exchange(other.mapped_, 0)) {}

TextBuffer& TextBuffer::operator=(TextBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

TextBuffer::~TextBuffer() { Reset(); }

void TextBuffer::Reset() {
  UnmapPages(data_, mapped_);
  data_ = nullptr;
  mapped_ = 0;
}

bool TextBuffer::Reserve(size_t size) {
  if (size > (size_t{1} << 46)) return false;
  const size_t want = RoundUpToPages(size + kJsonPadding);
  if (want <= mapped_) return true;
  if (data_ == nullptr) {
    data_ = static_cast<char*>(MapPages(want));
    mapped_ = data_ == nullptr ? 0 : want;
    return data_ != nullptr;
  }
  void* p = ::mremap(data_, mapped_, want, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) return false;
  data_ = static_cast<char*>(p);
  mapped_ = want;
  AdviseHugePages(data_, want);
  return true;
}

JsonInput::JsonInput(TextBuffer buffer, size_t size, bool was_gzip)
    : buffer_(std::move(buffer)), text_(buffer_.data(), size), was_gzip_(was_gzip) {}

JsonInput::JsonInput(MappedFile mapped) : mapped_(std::move(mapped)), text_(mapped_->bytes()) {}

bool LooksLikeGzip(std::string_view first_bytes) {
  return first_bytes.size() >= 2 && static_cast<unsigned char>(first_bytes[0]) == 0x1f &&
         static_cast<unsigned char>(first_bytes[1]) == 0x8b;
}

absl::StatusOr<int> OpenRegularFile(const std::string& path) {
  auto refuse = [&](mode_t mode) -> absl::Status {
    if (S_ISDIR(mode)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a trace file"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is not a regular file (a FIFO, socket or device); reverie reads "
                           "trace files only (save the trace to a file first)"));
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return refuse(st.st_mode);
  // O_NONBLOCK: should the path become a FIFO after the check, open() still
  // does not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot stat: ", std::strerror(e)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return refuse(st.st_mode);
  }
  return fd;
}

absl::StatusOr<JsonInput> InflateGzip(std::string_view in, const std::string& path) {
  return InflateGzip(in, path, InflateLimit(in.size()));
}

absl::StatusOr<JsonInput> InflateGzip(std::string_view in, const std::string& path,
                                      size_t max_inflated) {
  // Smallest member: 10-byte header + 2-byte empty deflate block + 8-byte trailer.
  if (in.size() < 18) {
    return absl::DataLossError(
        absl::StrCat(path, ": truncated gzip data: only ", in.size(), " bytes"));
  }
  // ISIZE (uncompressed size mod 2^32) is the last 4 bytes of the last
  // member. Trust it only when plausible (deflate expands at most ~1032x)
  // and within the limit, so a damaged trailer cannot ask for gigabytes.
  const auto* tail = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
  const size_t isize = size_t{tail[0]} | size_t{tail[1]} << 8 | size_t{tail[2]} << 16 |
                       size_t{tail[3]} << 24;
  const bool plausible = isize <= in.size() * 1040 + (1 << 20) && isize <= max_inflated;
#ifdef REVERIE_HAVE_LIBDEFLATE
  if (plausible) {
    TextBuffer out;
    if (!out.Reserve(isize)) return OutOfMemory(path, isize);
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    if (d == nullptr) return OutOfMemory(path, isize);
    size_t in_used = 0, out_used = 0;
    const libdeflate_result r = libdeflate_gzip_decompress_ex(
        d, in.data(), in.size(), out.data(), isize, &in_used, &out_used);
    libdeflate_free_decompressor(d);
    // Success on the whole input = one member. Anything else (several
    // members, a size that wrapped past 4 GiB, bytes after the stream,
    // damage) goes to zlib, which streams and says precisely what is wrong.
    if (r == LIBDEFLATE_SUCCESS && in_used == in.size() && out_used == isize) {
      return Finish(std::move(out), out_used, /*was_gzip=*/true);
    }
  }
#endif
  return InflateWithZlib(in, path, plausible ? isize : 0, max_inflated);
}

absl::StatusOr<JsonInput> CopyJsonText(std::string_view text, const std::string& path) {
  TextBuffer buf;
  if (!buf.Reserve(text.size())) return OutOfMemory(path, text.size());
  std::memcpy(buf.data(), text.data(), text.size());
  return Finish(std::move(buf), text.size(), /*was_gzip=*/false);
}

absl::StatusOr<JsonInput> ReadJsonInput(const std::string& path, ReadMethod method) {
  REVERIE_ASSIGN_OR_RETURN(int fd, OpenRegularFile(path));
  struct stat st {};
  ::fstat(fd, &st);
  // Mapped, not read, where it can be: no copy into fresh memory (an empty
  // size, as /proc's files give, is read to its end).
  std::optional<MappedFile> mapped;
  if (method == ReadMethod::kMapOrRead) mapped = MappedFile::Map(fd);
  if (mapped) {
    if (!LooksLikeGzip(mapped->bytes())) return JsonInput(*std::move(mapped));
    absl::StatusOr<JsonInput> inflated = InflateGzip(mapped->bytes(), path);
    // A damaged stream may be the file changing under the inflation.
    REVERIE_RETURN_IF_ERROR(mapped->Check(path));
    return inflated;
  }
  TextBuffer raw;
  size_t size = 0;
  const absl::Status read = ReadAll(fd, path, static_cast<size_t>(st.st_size), &raw, &size);
  ::close(fd);
  if (!read.ok()) return read;
  if (size == 0) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  const std::string_view bytes(raw.data(), size);
  if (!LooksLikeGzip(bytes)) return Finish(std::move(raw), size, /*was_gzip=*/false);
  return InflateGzip(bytes, path);
}

}  // namespace reverie::kineto
