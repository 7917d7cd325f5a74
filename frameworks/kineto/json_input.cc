#include "frameworks/kineto/json_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "simdjson.h"

#ifdef REVERIE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

namespace reverie::kineto {
namespace {

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING, "padding must cover simdjson's");

std::unique_ptr<char[]> AllocatePadded(size_t size) {
  // Uninitialized on purpose: the whole text is overwritten, and untouched
  // pages of a generous inflate buffer never become resident.
  std::unique_ptr<char[]> p(new char[size + kJsonPadding]);
  std::memset(p.get() + size, 0, kJsonPadding);
  return p;
}

// Reads the whole file. Regular files are read in one allocation of their
// size (+ padding, so plain JSON needs no second copy); pipes grow.
absl::Status ReadWholeFile(const std::string& path, std::unique_ptr<char[]>* data,
                           size_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot stat: ", std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a trace file"));
  }
  size_t capacity = S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : size_t{1} << 20;
  std::unique_ptr<char[]> buf = AllocatePadded(capacity);
  size_t used = 0;
  while (true) {
    if (used == capacity) {
      if (S_ISREG(st.st_mode)) {
        // A regular file that did not grow: probe one byte for EOF first.
        char probe;
        const ssize_t n = ::read(fd, &probe, 1);
        if (n == 0) break;
        if (n < 0) {
          if (errno == EINTR) continue;
          ::close(fd);
          return absl::DataLossError(absl::StrCat(path, ": read failed: ", std::strerror(errno)));
        }
        capacity = capacity * 2 + 1;
        std::unique_ptr<char[]> bigger = AllocatePadded(capacity);
        std::memcpy(bigger.get(), buf.get(), used);
        bigger[used++] = probe;
        buf = std::move(bigger);
        continue;
      }
      capacity *= 2;
      std::unique_ptr<char[]> bigger = AllocatePadded(capacity);
      std::memcpy(bigger.get(), buf.get(), used);
      buf = std::move(bigger);
    }
    const ssize_t n = ::read(fd, buf.get() + used, capacity - used);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return absl::DataLossError(absl::StrCat(path, ": read failed: ", std::strerror(errno)));
    }
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  std::memset(buf.get() + used, 0, kJsonPadding);
  *data = std::move(buf);
  *size = used;
  return absl::OkStatus();
}

// Streaming inflate of every gzip member; slower than libdeflate but needs
// no size up front and pinpoints where a damaged stream ends.
absl::StatusOr<JsonInput> InflateWithZlib(std::string_view in, const std::string& path,
                                          size_t size_hint) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(absl::StrCat(path, ": zlib initialisation failed"));
  }
  size_t capacity = std::max<size_t>({size_hint, in.size() * 4, 1 << 16});
  std::unique_ptr<char[]> out = AllocatePadded(capacity);
  size_t used = 0;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  size_t in_pos = 0;
  auto fail = [&](absl::Status s) {
    inflateEnd(&zs);
    return s;
  };
  while (true) {
    if (used == capacity) {
      capacity *= 2;
      std::unique_ptr<char[]> bigger = AllocatePadded(capacity);
      std::memcpy(bigger.get(), out.get(), used);
      out = std::move(bigger);
    }
    // zlib counts in uInt; feed at most 1 GiB at a time.
    const size_t in_chunk = std::min<size_t>(in.size() - in_pos, size_t{1} << 30);
    const size_t out_chunk = std::min<size_t>(capacity - used, size_t{1} << 30);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_pos));
    zs.avail_in = static_cast<uInt>(in_chunk);
    zs.next_out = reinterpret_cast<Bytef*>(out.get() + used);
    zs.avail_out = static_cast<uInt>(out_chunk);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_chunk - zs.avail_in;
    used += out_chunk - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Another member may follow (concatenated gzip files); trailing zero
      // bytes (tape padding) are ignored like gzip(1) does.
      const std::string_view rest = in.substr(in_pos);
      if (rest.size() >= 2 && LooksLikeGzip(rest)) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) {
      if (zs.avail_out == 0) continue;  // output full: grow and go on
      return fail(absl::DataLossError(absl::StrCat(
          path, ": truncated gzip data: the compressed stream ends at byte ", in.size(),
          " before its end marker (", used, " bytes of JSON recovered)")));
    }
    if (rc == Z_MEM_ERROR) {
      return fail(absl::ResourceExhaustedError(absl::StrCat(path, ": out of memory inflating")));
    }
    return fail(absl::DataLossError(absl::StrCat(path, ": corrupt gzip data at compressed byte ",
                                                 in_pos, ": ", zs.msg ? zs.msg : "inflate error")));
  }
  inflateEnd(&zs);
  std::memset(out.get() + used, 0, kJsonPadding);
  return JsonInput(std::move(out), used, /*was_gzip=*/true);
}

}  // namespace

bool LooksLikeGzip(std::string_view first_bytes) {
  return first_bytes.size() >= 2 && static_cast<unsigned char>(first_bytes[0]) == 0x1f &&
         static_cast<unsigned char>(first_bytes[1]) == 0x8b;
}

absl::StatusOr<JsonInput> InflateGzip(std::string_view in, const std::string& path) {
  // Smallest member: 10-byte header + 2-byte empty deflate block + 8-byte trailer.
  if (in.size() < 18) {
    return absl::DataLossError(
        absl::StrCat(path, ": truncated gzip data: only ", in.size(), " bytes"));
  }
  // ISIZE (uncompressed size mod 2^32) is the last 4 bytes of the last
  // member. Trust it only when plausible (deflate expands at most ~1032x), so
  // a damaged trailer cannot ask for gigabytes.
  const auto* tail = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
  const size_t isize = size_t{tail[0]} | size_t{tail[1]} << 8 | size_t{tail[2]} << 16 |
                       size_t{tail[3]} << 24;
  const bool plausible = isize <= in.size() * 1040 + (1 << 20);
#ifdef REVERIE_HAVE_LIBDEFLATE
  if (plausible) {
    std::unique_ptr<char[]> out = AllocatePadded(isize);
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    if (d == nullptr) return absl::ResourceExhaustedError(absl::StrCat(path, ": out of memory"));
    size_t in_used = 0, out_used = 0;
    const libdeflate_result r = libdeflate_gzip_decompress_ex(
        d, in.data(), in.size(), out.get(), isize, &in_used, &out_used);
    libdeflate_free_decompressor(d);
    // Success on the whole input = one member. Anything else (several
    // members, a size that wrapped past 4 GiB, damage) goes to zlib, which
    // streams and reports precisely where the data ends.
    if (r == LIBDEFLATE_SUCCESS && in_used == in.size() && out_used == isize) {
      return JsonInput(std::move(out), out_used, /*was_gzip=*/true);
    }
  }
#endif
  return InflateWithZlib(in, path, plausible ? isize : 0);
}

absl::StatusOr<JsonInput> ReadJsonInput(const std::string& path) {
  std::unique_ptr<char[]> raw;
  size_t size = 0;
  if (absl::Status s = ReadWholeFile(path, &raw, &size); !s.ok()) return s;
  if (size == 0) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  const std::string_view bytes(raw.get(), size);
  if (!LooksLikeGzip(bytes)) return JsonInput(std::move(raw), size, /*was_gzip=*/false);
  return InflateGzip(bytes, path);
}

}  // namespace reverie::kineto
