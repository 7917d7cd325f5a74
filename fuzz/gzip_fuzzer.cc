// Fuzz target: the gzip layer. Bytes that start like gzip (1f 8b) go through
// the public loading API, which inflates them (every member, with the
// decompressed-size limit) and imports the JSON inside; anything else is not
// this target's business. A rejected input must come back as one line
// naming the file.
//
// Under libFuzzer a custom mutator keeps half of the mutations meaningful:
// it inflates the input, mutates the JSON and compresses it again, as one
// member, as two, or with trailing bytes (what issue 17's D13 is about);
// the other half mutates the compressed bytes themselves (headers, CRCs,
// sizes).
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) return -1;  // not added to the corpus
  reverie::fuzz::LoadBuildSimulate(data, size);
  return 0;
}

#ifdef REVERIE_LIBFUZZER
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// The first gzip member of `in`, inflated (at most `limit` bytes); empty
// when it does not inflate.
std::string Inflate(const uint8_t* in, size_t size, size_t limit) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return "";
  std::string out(limit, '\0');
  zs.next_in = const_cast<Bytef*>(in);
  zs.avail_in = static_cast<uInt>(size);
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(limit);
  const int rc = inflate(&zs, Z_FINISH);
  out.resize(rc == Z_STREAM_END ? zs.total_out : 0);
  inflateEnd(&zs);
  return out;
}

std::string Deflate(const std::string& in) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return "";
  std::string out(deflateBound(&zs, in.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::minstd_rand rng(seed);
  std::string text = rng() % 2 == 0 ? Inflate(data, size, 4 * max_size) : std::string();
  if (text.empty()) return LLVMFuzzerMutate(data, size, max_size);
  const size_t room = std::max(text.size() * 2, size_t{64});
  text.resize(room);
  text.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(text.data()), text.size() / 2, room));
  std::string out;
  switch (rng() % 4) {
    case 0: {  // two members, split anywhere
      const size_t cut = text.empty() ? 0 : rng() % text.size();
      out = Deflate(text.substr(0, cut)) + Deflate(text.substr(cut));
      break;
    }
    case 1:  // trailing bytes after the member
      out = Deflate(text) + std::string(1 + rng() % 8, static_cast<char>(rng()));
      break;
    default:
      out = Deflate(text);
      break;
  }
  if (out.size() > max_size || out.empty()) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
#endif  // REVERIE_LIBFUZZER
