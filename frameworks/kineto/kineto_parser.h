// File: frameworks/kineto/kineto_parser.h
//
// Walks a Kineto JSON document with simdjson On-Demand (no DOM): header keys
// go to the builder's TraceHeader, each trace event is decoded into a
// RawEvent and handed to the builder. A first pass (json_scan.h) finds the
// event array, so that simdjson indexes it one chunk of about 1 MiB at a
// time rather than the whole text at once.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_PARSER_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_PARSER_H_

#include <string>

#include "absl/status/status.h"
#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_builder.h"

namespace reverie::kineto {

// Accepts the JSON Object form ({"traceEvents": [...], ...}) and the JSON
// Array form ([event, ...], whose closing ']' may be missing: every complete
// event is kept and one cut in the middle is counted as truncated_event).
// Errors (kInvalidArgument) name `path` and, for malformed JSON, the byte
// offset in the (decompressed) text; content after the top-level value is
// an error. Documents that are JSON but not a profiler trace get a message
// saying what they are instead (a PyTorch execution trace, an array without
// trace events, an object without traceEvents).
//
// The text is only read: each chunk of events is parsed from a copy, so a
// mapped file is never written. `chunk_bytes`
// (about how much of the event array simdjson indexes at a time) changes
// speed and memory only, never the result; tests vary it. So does `threads`
// (0: $REVERIE_THREADS, else every core): runs of chunks are decoded on that
// many threads at once and appended in file order, giving the Trace, and
// the first error in file order, of one thread.
inline constexpr size_t kDefaultChunkBytes = size_t{256} << 10;
absl::Status ParseKinetoJson(const JsonInput& input, const std::string& path,
                             KinetoTraceBuilder* builder, size_t chunk_bytes = kDefaultChunkBytes,
                             int threads = 1);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_PARSER_H_
