#include "export/chakra_io.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace reverie::exporter {

struct ChakraStreamWriter::Streams {
  explicit Streams(std::string* out) : sink(out), coded(&sink) {}
  google::protobuf::io::StringOutputStream sink;
  google::protobuf::io::CodedOutputStream coded;
};

namespace {

// Writes `msg` preceded by its length as a varint (Chakra's framing).
void WriteDelimited(const google::protobuf::MessageLite& msg,
                    google::protobuf::io::CodedOutputStream* out) {
  out->WriteVarint32(static_cast<uint32_t>(msg.ByteSizeLong()));
  msg.SerializeWithCachedSizes(out);
}

}  // namespace

ChakraStreamWriter::ChakraStreamWriter(std::string* out, std::string_view producer)
    : streams_(std::make_unique<Streams>(out)) {
  chakra_et::GlobalMetadata meta;
  meta.set_version(kChakraSchemaVersion);
  chakra_et::AttributeProto* a = meta.add_attr();
  a->set_name("producer");
  a->set_string_val(std::string(producer));
  WriteDelimited(meta, &streams_->coded);
}

ChakraStreamWriter::~ChakraStreamWriter() = default;

void ChakraStreamWriter::Add(const chakra_et::Node& node) { WriteDelimited(node, &streams_->coded); }

absl::Status ChakraStreamWriter::Finish() {
  streams_->coded.Trim();
  if (streams_->coded.HadError()) return absl::InternalError("cannot serialize the Chakra trace");
  return absl::OkStatus();
}

std::string ChakraRankPath(std::string_view prefix, int rank) {
  return absl::StrCat(Sv(prefix), ".", rank, ".et");
}

absl::StatusOr<std::vector<std::string>> WriteChakraFiles(
    std::string_view prefix, int ranks, const std::function<const std::string&(int)>& bytes_of_rank) {
  if (ranks < 1) return absl::InvalidArgumentError(absl::StrCat("ranks must be >= 1, got ", ranks));
  std::vector<std::string> paths;
  for (int r = 0; r < ranks; ++r) {
    std::string path = ChakraRankPath(prefix, r);
    // Atomically: a failed write leaves no half file behind (base/atomic_file.h).
    REVERIE_RETURN_IF_ERROR(WriteFileAtomically(path, bytes_of_rank(r)));
    paths.push_back(std::move(path));
  }
  return paths;
}

absl::StatusOr<ChakraFile> ReadChakra(std::string_view bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  ChakraFile file;
  auto read_one = [&](google::protobuf::MessageLite* msg) {
    uint32_t size = 0;
    if (!in.ReadVarint32(&size)) return false;
    const auto limit = in.PushLimit(static_cast<int>(size));
    const bool ok = msg->ParseFromCodedStream(&in) && in.BytesUntilLimit() == 0;
    in.PopLimit(limit);
    return ok;
  };
  if (bytes.empty()) return absl::InvalidArgumentError("empty Chakra trace: no GlobalMetadata");
  if (!read_one(&file.metadata)) return absl::DataLossError("malformed GlobalMetadata");
  while (in.CurrentPosition() < static_cast<int>(bytes.size())) {
    chakra_et::Node& node = file.nodes.emplace_back();
    if (!read_one(&node)) {
      return absl::DataLossError(
          absl::StrCat("malformed or truncated node message #", file.nodes.size() - 1));
    }
  }
  return file;
}

chakra_et::AttributeProto* AddAttr(chakra_et::Node* node, const char* name) {
  chakra_et::AttributeProto* a = node->add_attr();
  a->set_name(name);
  return a;
}

const chakra_et::AttributeProto* FindAttr(const chakra_et::Node& node, std::string_view name) {
  for (const chakra_et::AttributeProto& a : node.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

}  // namespace reverie::exporter
