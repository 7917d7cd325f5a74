// File: collector/wire.h
//
// The protobuf wire format, by hand, so that libreverie_collector.so never
// links libprotobuf (the host process, PyTorch say, may bundle another one).
//
// WireBuffer is a growable byte buffer with the few encodings trace.proto
// needs: varint (uint32/uint64/int32/int64/enum/bool), fixed64 (double) and
// length-delimited (string, nested message, packed repeated). Proto3
// default values (0, "", false) are skipped as a real encoder would.
//
// Nested messages are written in place: BeginMessage() writes the tag and
// reserves one length byte, the caller appends the fields, EndMessage()
// writes the length -- moving the body up in the rare case (>= 128 bytes)
// that the length needs more than one byte. No scratch copy per record.
//
// Invariants: between calls the buffer holds whole fields (an open
// BeginMessage excepted), so a finished buffer is a valid message. Negative
// int32/int64 values are 10-byte two's complement varints, as in protobuf.
#ifndef REVERIE_COLLECTOR_WIRE_H_
#define REVERIE_COLLECTOR_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

namespace reverie::collector {

enum class WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

// Bytes a varint encoding of `v` takes (1..10).
constexpr size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes the varint encoding of `v` to `out` (room for 10 bytes); returns
// the number of bytes written.
inline size_t EncodeVarint(uint64_t v, uint8_t* out) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<uint8_t>(v);
  return n;
}

// Length of the valid UTF-8 sequence at s[i] (1-4 bytes), 0 when invalid.
// proto3 readers refuse a string field that is not UTF-8.
inline size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  // Overlong, surrogate and beyond-U+10FFFF forms.
  if ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) > 0x9F) ||
      (c == 0xF0 && b(i + 1) < 0x90) || (c == 0xF4 && b(i + 1) > 0x8F)) {
    return 0;
  }
  return n;
}

class WireBuffer {
 public:
  WireBuffer() = default;
  ~WireBuffer() { std::free(data_); }
  WireBuffer(const WireBuffer&) = delete;
  WireBuffer& operator=(const WireBuffer&) = delete;

  std::string_view view() const {
    return {reinterpret_cast<const char*>(data_), size_};
  }
  std::string str() const { return std::string(view()); }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n > capacity_) Grow(n);
  }

  void Raw(const void* bytes, size_t n) {
    Ensure(n);
    if (n > 0) std::memcpy(data_ + size_, bytes, n);
    size_ += n;
  }
  void Raw(std::string_view bytes) { Raw(bytes.data(), bytes.size()); }
  void Varint(uint64_t v) {
    Ensure(10);
    size_ += EncodeVarint(v, data_ + size_);
  }
  void Tag(uint32_t field, WireType type) {
    Varint((static_cast<uint64_t>(field) << 3) | static_cast<uint32_t>(type));
  }

  // Scalar fields; zero is the proto3 default and is not written.
  void U64(uint32_t field, uint64_t v) {
    if (v == 0) return;
    Tag(field, WireType::kVarint);
    Varint(v);
  }
  void I64(uint32_t field, int64_t v) { U64(field, static_cast<uint64_t>(v)); }
  void U32(uint32_t field, uint32_t v) { U64(field, v); }
  // int32 and enums sign-extend to 64 bits on the wire.
  void I32(uint32_t field, int32_t v) { U64(field, static_cast<uint64_t>(static_cast<int64_t>(v))); }
  void Double(uint32_t field, double v) {
    if (v == 0.0) return;
    Tag(field, WireType::kFixed64);
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    uint8_t le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(bits >> (8 * i));
    Raw(le, 8);
  }

  // A string field; empty strings are skipped unless `keep_empty` (repeated
  // string elements must always be written: their position is their id).
  // Bytes that are not UTF-8 (an NVTX range named in Latin-1, a path) are
  // written as '?', so that the file stays readable.
  void String(uint32_t field, std::string_view s, bool keep_empty = false) {
    if (s.empty() && !keep_empty) return;
    Tag(field, WireType::kLen);
    Varint(s.size());
    size_t i = 0;
    while (i < s.size()) {
      const size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        Raw("?");
        ++i;
      } else {
        Raw(s.substr(i, n));
        i += n;
      }
    }
  }

  // Opens a nested message (written even when empty, as a repeated element
  // must be); returns the position EndMessage needs.
  size_t BeginMessage(uint32_t field) {
    Tag(field, WireType::kLen);
    Ensure(1);
    return size_++;
  }
  void EndMessage(size_t length_pos) {
    const size_t body = size_ - length_pos - 1;
    const size_t need = VarintSize(body);
    if (need > 1) {
      Ensure(need - 1);
      std::memmove(data_ + length_pos + need, data_ + length_pos + 1, body);
      size_ += need - 1;
    }
    EncodeVarint(body, data_ + length_pos);
  }

  // Packed repeated uint32 (proto3's default encoding for repeated scalars).
  template <typename Container>
  void PackedU32(uint32_t field, const Container& values) {
    if (values.empty()) return;
    size_t len = 0;
    for (uint32_t v : values) len += VarintSize(v);
    Tag(field, WireType::kLen);
    Varint(len);
    for (uint32_t v : values) Varint(v);
  }

 private:
  void Ensure(size_t extra) {
    if (size_ + extra > capacity_) Grow(size_ + extra);
  }
  void Grow(size_t at_least) {
    size_t capacity = capacity_ == 0 ? 256 : capacity_ * 2;
    while (capacity < at_least) capacity *= 2;
    auto* grown = static_cast<uint8_t*>(std::realloc(data_, capacity));
    if (grown == nullptr) throw std::bad_alloc();  // caught at the C boundary
    data_ = grown;
    capacity_ = capacity;
  }

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_WIRE_H_
