// File: frameworks/kineto/json_input.h
//
// Reads a JSON trace file into one buffer that simdjson can parse in place:
// plain text is read as is, gzip (detected by its magic bytes 1f 8b, never by
// the file name) is inflated. The buffer carries simdjson's required padding
// past the end, so no copy is needed before parsing.
//
// Invariants of JsonInput: data()[size() .. size()+kJsonPadding) are zero;
// the buffer is owned and never reallocated after ReadJsonInput returns.
#ifndef REVERIE_FRAMEWORKS_KINETO_JSON_INPUT_H_
#define REVERIE_FRAMEWORKS_KINETO_JSON_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace reverie::kineto {

// Bytes of zeroes kept after the text (simdjson's SIMDJSON_PADDING is 64 in
// 3.x; a static_assert in the .cc keeps the two in step).
inline constexpr size_t kJsonPadding = 64;

class JsonInput {
 public:
  JsonInput() = default;
  JsonInput(std::unique_ptr<char[]> data, size_t size, bool was_gzip)
      : data_(std::move(data)), size_(size), was_gzip_(was_gzip) {}

  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return size_ + kJsonPadding; }
  bool was_gzip() const { return was_gzip_; }
  std::string_view text() const { return std::string_view(data_.get(), size_); }
  // Frees the text early (the importer drops it before post-processing).
  void Release() {
    data_.reset();
    size_ = 0;
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  bool was_gzip_ = false;
};

// True when `first_bytes` start with the gzip magic 1f 8b.
bool LooksLikeGzip(std::string_view first_bytes);

// Reads `path`, inflating gzip. Errors name the path: kNotFound (missing),
// kPermissionDenied (unreadable), kInvalidArgument (empty file, a directory,
// bad gzip header), kDataLoss (truncated or corrupt gzip data, with the
// compressed byte offset where known).
absl::StatusOr<JsonInput> ReadJsonInput(const std::string& path);

// Inflates an in-memory gzip stream (all members); `path` only names the
// input in errors. Exposed for tests.
absl::StatusOr<JsonInput> InflateGzip(std::string_view compressed, const std::string& path);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_JSON_INPUT_H_
