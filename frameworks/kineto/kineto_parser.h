// File: frameworks/kineto/kineto_parser.h
//
// Walks a Kineto JSON document once with simdjson On-Demand (no DOM of the
// whole document): header keys go to the builder's TraceHeader, each entry of
// traceEvents is decoded into a RawEvent and handed to the builder.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_PARSER_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_PARSER_H_

#include <string>

#include "absl/status/status.h"
#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_builder.h"

namespace reverie::kineto {

// Errors (kInvalidArgument) name `path` and, for malformed JSON, the byte
// offset in the (decompressed) text. Documents that are JSON but not a
// profiler trace get a message saying what they are instead (a PyTorch
// execution trace, a bare array, an object without traceEvents).
absl::Status ParseKinetoJson(const JsonInput& input, const std::string& path,
                             KinetoTraceBuilder* builder);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_PARSER_H_
