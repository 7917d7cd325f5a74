#include "proto/trace_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"

namespace reverie {
namespace {

using google::protobuf::RepeatedPtrField;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::FileInputStream;
using google::protobuf::io::OstreamOutputStream;

bool WriteDelimited(const google::protobuf::MessageLite& m, CodedOutputStream* out) {
  const size_t size = m.ByteSizeLong();
  if (size > static_cast<size_t>(INT32_MAX)) return false;
  out->WriteVarint32(static_cast<uint32_t>(size));
  return m.SerializeWithCachedSizes(out), !out->HadError();
}

// Copies up to `*budget` elements of `src` starting at `*pos` into `dst`.
template <typename T>
void TakeSome(const RepeatedPtrField<T>& src, int* pos, RepeatedPtrField<T>* dst,
              size_t* budget) {
  while (*pos < src.size() && *budget > 0) {
    *dst->Add() = src.Get((*pos)++);
    --*budget;
  }
}

}  // namespace

absl::Status WriteTrace(const Trace& trace, const std::string& path,
                        const WriteOptions& options) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot open for writing: ", std::strerror(errno)));
  }
  {
    OstreamOutputStream zero_copy(&file);
    CodedOutputStream out(&zero_copy);
    bool ok = WriteDelimited(trace.header(), &out);

    const proto::TraceChunk& all = trace.events();
    // The first chunk carries the string table and the small tables, so a
    // reader that stops early still resolves every name it has seen.
    proto::TraceChunk chunk;
    *chunk.mutable_strings() = all.strings();
    *chunk.mutable_processes() = all.processes();
    *chunk.mutable_threads() = all.threads();
    *chunk.mutable_counters() = all.counters();
    *chunk.mutable_gradient_buckets() = all.gradient_buckets();
    *chunk.mutable_parameters() = all.parameters();

    int api = 0, gpu = 0, sync = 0, ev = 0, range = 0, iter = 0, coll = 0, flow = 0;
    const size_t per_chunk = options.events_per_chunk == 0 ? 1 : options.events_per_chunk;
    bool first = true;
    while (ok) {
      size_t budget = per_chunk;
      TakeSome(all.ranges(), &range, chunk.mutable_ranges(), &budget);
      TakeSome(all.iterations(), &iter, chunk.mutable_iterations(), &budget);
      TakeSome(all.api_calls(), &api, chunk.mutable_api_calls(), &budget);
      TakeSome(all.gpu_activities(), &gpu, chunk.mutable_gpu_activities(), &budget);
      TakeSome(all.syncs(), &sync, chunk.mutable_syncs(), &budget);
      TakeSome(all.event_records(), &ev, chunk.mutable_event_records(), &budget);
      TakeSome(all.collectives(), &coll, chunk.mutable_collectives(), &budget);
      TakeSome(all.flows(), &flow, chunk.mutable_flows(), &budget);
      if (budget == per_chunk && !first) break;  // nothing left
      ok = WriteDelimited(chunk, &out);
      chunk.Clear();
      first = false;
    }
    if (!ok) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  }
  file.flush();
  if (!file) {
    return absl::DataLossError(absl::StrCat(path, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

bool LooksLikeReverieTrace(std::string_view first_bytes) {
  // varint length, then field 1 (magic, wire type 2) = 0x0a, its length, magic.
  size_t i = 0;
  while (i < first_bytes.size() && i < 5 && (first_bytes[i] & 0x80)) ++i;
  ++i;
  const std::string_view magic = kTraceMagic;
  if (first_bytes.size() < i + 2 + magic.size()) return false;
  if (first_bytes[i] != 0x0a || static_cast<size_t>(first_bytes[i + 1]) != magic.size()) {
    return false;
  }
  return first_bytes.substr(i + 2, magic.size()) == magic;
}

absl::StatusOr<Trace> ReadTrace(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  FileInputStream raw(fd);
  raw.SetCloseOnDelete(true);

  Trace trace;
  int64_t offset = 0;
  auto read_one = [&](google::protobuf::MessageLite* m, bool* eof) -> bool {
    // A fresh CodedInputStream per message: its byte limit applies per chunk.
    CodedInputStream in(&raw);
    in.SetTotalBytesLimit(INT32_MAX);
    uint32_t size = 0;
    *eof = false;
    if (!in.ReadVarint32(&size)) {
      *eof = in.ExpectAtEnd() || in.CurrentPosition() == 0;
      return false;
    }
    const auto limit = in.PushLimit(static_cast<int>(size));
    const bool ok = m->ParseFromCodedStream(&in) && in.BytesUntilLimit() == 0;
    in.PopLimit(limit);
    offset += in.CurrentPosition();
    return ok;
  };

  bool eof = false;
  proto::TraceHeader& header = trace.header();
  header.Clear();
  if (!read_one(&header, &eof)) {
    if (eof && offset == 0) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a reverie trace (unreadable header at byte 0)"));
  }
  if (header.magic() != kTraceMagic) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a reverie trace (bad magic)"));
  }
  if (header.schema_version() > kTraceSchemaVersion) {
    return absl::UnimplementedError(absl::StrCat(path, ": schema version ", header.schema_version(),
                                                 " is newer than this reverie (",
                                                 kTraceSchemaVersion, ")"));
  }

  proto::TraceChunk& all = trace.events();
  all.Clear();
  proto::TraceChunk chunk;
  int64_t truncated = 0;
  while (true) {
    chunk.Clear();
    const int64_t at = offset;
    if (!read_one(&chunk, &eof)) {
      if (!eof) {
        truncated = 1;
        (void)at;
      }
      break;
    }
    all.MergeFrom(chunk);
  }
  if (all.strings_size() == 0 || !all.strings(0).empty()) {
    // A producer that forgot the empty string at id 0 would shift every name.
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": damaged trace (string table does not start with \"\")"));
  }
  trace.Reindex();
  if (truncated) trace.AddCounter("truncated_chunk", 1);
  return trace;
}

}  // namespace reverie
