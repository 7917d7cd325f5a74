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
  // Workers serializing chunks (0: every core); the bytes are the same.
  int threads = 1;
};

// Writes `trace` to `path` atomically (base/atomic_file.h: a failed write
// leaves `path` as it was), in the current schema, ending with the end
// marker. Errors name the path.
absl::Status WriteTrace(const Trace& trace, const std::string& path,
                        const WriteOptions& options = {});

struct ReadOptions {
  // Keep the complete chunks of a file that is truncated, damaged after
  // them, or from schema 1 (no end marker), instead of refusing it; counted
  // as `missing_end_marker` (and `truncated_chunk` when a chunk was cut or
  // damaged). For `reverie import
  // --salvage` (a crashed collector run), never for analysis.
  bool salvage = false;
};

// Reads a whole .pb trace, checks that it is complete (the end marker and
// its counts, nothing after it) and validates its events like the importer
// does (proto/trace_validate.h: anomalies counted, out-of-range numbers
// clamped). Errors are one line naming the file: kNotFound (missing),
// kInvalidArgument (not a reverie trace, damaged header, a string that is
// not UTF-8 in the header), kDataLoss (truncated, damaged chunk, schema 1
// without an end marker; the message says how to get a complete file),
// kUnimplemented (a newer schema).
absl::StatusOr<Trace> ReadTrace(const std::string& path, const ReadOptions& options = {});

// True when the first bytes of a file look like our framing + magic.
bool LooksLikeReverieTrace(std::string_view first_bytes);

}  // namespace reverie

#endif  // REVERIE_PROTO_TRACE_IO_H_
