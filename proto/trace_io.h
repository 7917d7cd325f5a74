// File: proto/trace_io.h
//
// Streaming reader and writer for .pb trace files (layout in trace.proto:
// a delimited TraceHeader, then delimited TraceChunks).
#ifndef REVERIE_PROTO_TRACE_IO_H_
#define REVERIE_PROTO_TRACE_IO_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/trace.h"

namespace reverie {

struct WriteOptions {
  // Events (of every kind together) per chunk. Smaller chunks lose less on a
  // crash; larger ones frame less.
  size_t events_per_chunk = 65536;
};

// Writes `trace` to `path` (replacing it). Errors name the path.
absl::Status WriteTrace(const Trace& trace, const std::string& path,
                        const WriteOptions& options = {});

// Reads a whole .pb trace. A missing file is kNotFound; a file that is not a
// reverie trace, or whose header is damaged, is kInvalidArgument with the
// byte offset. A damaged or truncated *chunk* keeps everything before it and
// counts `truncated_chunk` (a crashed producer's trace stays readable).
absl::StatusOr<Trace> ReadTrace(const std::string& path);

// True when the first bytes of a file look like our framing + magic.
bool LooksLikeReverieTrace(std::string_view first_bytes);

}  // namespace reverie

#endif  // REVERIE_PROTO_TRACE_IO_H_
