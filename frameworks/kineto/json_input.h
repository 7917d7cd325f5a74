// File: frameworks/kineto/json_input.h
//
// Reads a JSON trace file: plain text is mapped as it is (mapped_file.h: no
// copy into fresh memory), gzip (detected by its magic bytes 1f 8b, never by
// the file name) is inflated into a buffer of its own that carries
// simdjson's required padding past the end. A file that cannot be mapped is
// read into such a buffer.
//
// Only regular files are read: a FIFO, socket or device is refused before
// anything blocks on it. A gzip stream may inflate to at most
// max(kMinInflateLimit, kMaxInflateRatio x its compressed size): more is
// refused as a likely decompression bomb, without ever holding more than the
// limit in memory.
//
// Invariants of JsonInput: the text is never written (nothing the user gave
// is modified; parsers copy what they parse in place); when padded(),
// data()[size() .. size()+kJsonPadding) are zero; the text never moves
// after ReadJsonInput returns.
#ifndef REVERIE_FRAMEWORKS_KINETO_JSON_INPUT_H_
#define REVERIE_FRAMEWORKS_KINETO_JSON_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frameworks/kineto/mapped_file.h"

namespace reverie::kineto {

// Bytes of zeroes kept after a padded text (and after each chunk the parser
// copies): at least simdjson's SIMDJSON_PADDING, 64 in 3.x (a static_assert
// in json_input.cc keeps it so).
inline constexpr size_t kJsonPadding = 80;

// Real Kineto traces compress 10-30x; deflate itself reaches ~1000x.
inline constexpr size_t kMaxInflateRatio = 100;
inline constexpr size_t kMinInflateLimit = size_t{64} << 20;

// Text memory mapped straight from the kernel (never the malloc heap, so it
// is returned at once when freed), with transparent huge pages asked for
// when large: filling 50 MB then costs ~25 page faults instead of ~13,000.
// Grows in place (mremap) without copying.
class TextBuffer {
 public:
  TextBuffer() = default;
  TextBuffer(TextBuffer&& other) noexcept;
  TextBuffer& operator=(TextBuffer&& other) noexcept;
  TextBuffer(const TextBuffer&) = delete;
  TextBuffer& operator=(const TextBuffer&) = delete;
  ~TextBuffer();

  // Makes room for `size` bytes of text plus kJsonPadding, keeping the bytes
  // already there; false when the memory cannot be had.
  bool Reserve(size_t size);
  // Room for text, padding excluded.
  size_t room() const { return mapped_ >= kJsonPadding ? mapped_ - kJsonPadding : 0; }
  char* data() const { return data_; }
  void Reset();

 private:
  char* data_ = nullptr;
  size_t mapped_ = 0;
};

class JsonInput {
 public:
  JsonInput() = default;
  JsonInput(TextBuffer buffer, size_t size, bool was_gzip);
  explicit JsonInput(MappedFile mapped);

  const char* data() const { return text_.data(); }
  size_t size() const { return text_.size(); }
  std::string_view text() const { return text_; }
  bool was_gzip() const { return was_gzip_; }
  // Whether kJsonPadding zero bytes follow the text (simdjson can then
  // parse it where it is); a mapped file has none.
  bool padded() const { return mapped_ == std::nullopt; }
  // OK unless a mapped file was truncated or written while it was read
  // (MappedFile::Check): then what was parsed is not the file.
  absl::Status Check(const std::string& path) const {
    return mapped_ ? mapped_->Check(path) : absl::OkStatus();
  }
  // Frees the text early (the importer drops it before post-processing).
  void Release() {
    buffer_.Reset();
    mapped_.reset();
    text_ = {};
  }

 private:
  TextBuffer buffer_;
  std::optional<MappedFile> mapped_;
  std::string_view text_;
  bool was_gzip_ = false;
};

// True when `first_bytes` start with the gzip magic 1f 8b.
bool LooksLikeGzip(std::string_view first_bytes);

// Refuses what is not a regular file (kInvalidArgument: a directory, FIFO,
// socket or device) without blocking on it; kNotFound, kPermissionDenied.
// Returns an open descriptor (O_CLOEXEC) on a regular file.
absl::StatusOr<int> OpenRegularFile(const std::string& path);

// How ReadJsonInput gets the bytes: mapped where it can (the default), or
// always read() into a buffer (tests compare the two).
enum class ReadMethod : uint8_t { kMapOrRead, kRead };

// Reads `path`, inflating gzip. Errors name the path: kNotFound (missing),
// kPermissionDenied (unreadable), kInvalidArgument (empty file, not a
// regular file, bad gzip header, a decompression bomb), kDataLoss
// (truncated or corrupt gzip data, bytes after the gzip data, with the
// compressed byte offset where known; a gzip file truncated or written
// while it was inflated), kResourceExhausted (out of memory). A mapped
// text is checked by JsonInput::Check once parsed.
absl::StatusOr<JsonInput> ReadJsonInput(const std::string& path,
                                        ReadMethod method = ReadMethod::kMapOrRead);

// Inflates an in-memory gzip stream (all members, concatenated as gzip(1)
// does); `path` only names the input in errors. Exposed for tests.
absl::StatusOr<JsonInput> InflateGzip(std::string_view compressed, const std::string& path);

// The same with an explicit limit on the inflated size (tests).
absl::StatusOr<JsonInput> InflateGzip(std::string_view compressed, const std::string& path,
                                      size_t max_inflated);

// A copy of `text` in a padded buffer (text already in memory).
absl::StatusOr<JsonInput> CopyJsonText(std::string_view text, const std::string& path);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_JSON_INPUT_H_
