// File: frameworks/trace_loader.h
//
// LoadTraceFile: any trace reverie understands -> Trace, chosen by content
// (never by file name): a reverie .pb stream (proto/trace_io.h), or a Kineto
// JSON trace, plain or gzip-compressed (frameworks/kineto/kineto_importer.h,
// which also documents what the imported Trace contains).
#ifndef REVERIE_FRAMEWORKS_TRACE_LOADER_H_
#define REVERIE_FRAMEWORKS_TRACE_LOADER_H_

#include <string>

#include "absl/status/statusor.h"
#include "frameworks/kineto/kineto_importer.h"
#include "proto/trace.h"

namespace reverie {

// Errors are one line naming the file: kNotFound for a missing file,
// kInvalidArgument for an empty file, something that is not a regular file
// (refused without blocking on it), unknown content, invalid JSON, JSON
// that is not a profiler trace or a likely gzip bomb, kDataLoss for
// truncated or damaged gzip, kResourceExhausted when memory runs out.
// `options` apply to JSON traces.
absl::StatusOr<Trace> LoadTraceFile(const std::string& path, const ImportOptions& options = {});

}  // namespace reverie

#endif  // REVERIE_FRAMEWORKS_TRACE_LOADER_H_
