// File: export/chakra_io.h
//
// The Chakra execution-trace (ET) file format both exports write
// (proto/chakra_et.proto has the schema subset and the framing): a writer
// that frames messages, the per-rank file names ASTRA-sim opens, writing
// them, and a reader for tests and tools.
#ifndef REVERIE_EXPORT_CHAKRA_IO_H_
#define REVERIE_EXPORT_CHAKRA_IO_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/chakra_et.pb.h"

namespace reverie::exporter {

// The GlobalMetadata.version we write: the Chakra release whose schema
// proto/chakra_et.proto mirrors (its generator writes the same string).
inline constexpr char kChakraSchemaVersion[] = "1.0.0";

// Appends a GlobalMetadata (version, "producer" attribute) to `out` on
// construction, then one Node per Add(), each varint-length-prefixed.
class ChakraStreamWriter {
 public:
  ChakraStreamWriter(std::string* out, std::string_view producer);
  ~ChakraStreamWriter();
  void Add(const chakra_et::Node& node);
  // Flushes; kInternal when serialisation failed.
  absl::Status Finish();

 private:
  struct Streams;
  std::unique_ptr<Streams> streams_;
};

// Chakra times are whole microseconds: ns rounded to the nearest, negatives
// to 0. Durations are written as rounded end - rounded start, so a chain of
// back-to-back nodes keeps its total to within 1 us.
inline int64_t RoundUs(int64_t ns) { return ns <= 0 ? 0 : (ns + 500) / 1000; }

// "<prefix>.<rank>.et", the name ASTRA-sim opens for each rank.
std::string ChakraRankPath(std::string_view prefix, int rank);

// Writes bytes_of_rank(r) to ChakraRankPath(prefix, r) for r in [0, ranks).
// Returns the paths written; an error names the file that failed.
absl::StatusOr<std::vector<std::string>> WriteChakraFiles(
    std::string_view prefix, int ranks, const std::function<const std::string&(int)>& bytes_of_rank);

// A parsed Chakra ET stream (the reader's side of the framing).
struct ChakraFile {
  chakra_et::GlobalMetadata metadata;
  std::vector<chakra_et::Node> nodes;
};

// Parses `bytes` as written above. kDataLoss on a truncated or malformed
// message (naming its index), kInvalidArgument when there is no metadata.
absl::StatusOr<ChakraFile> ReadChakra(std::string_view bytes);

// Attribute helpers: the attribute `name` of `node`, added / looked up.
chakra_et::AttributeProto* AddAttr(chakra_et::Node* node, const char* name);
// nullptr when absent.
const chakra_et::AttributeProto* FindAttr(const chakra_et::Node& node, std::string_view name);

}  // namespace reverie::exporter

#endif  // REVERIE_EXPORT_CHAKRA_IO_H_
