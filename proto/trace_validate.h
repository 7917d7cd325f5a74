// File: proto/trace_validate.h
//
// ValidateTrace: the checks every loaded trace gets, whatever wrote it. The
// .pb reader runs it, and LoadTraceFile runs it after the Kineto importer, so
// that a .pb event is held to the same rules as a JSON one (issue 17, D12:
// a .pb with end < start reported "GPU busy -19222168.7%" and no anomaly)
// and no number from a trace can overflow the arithmetic downstream (D7).
//
// Problems are data anomalies: counted by name (`reverie info` shows them)
// and repaired, never fatal:
//   negative_duration             an event that ends before it starts:
//                                 its end becomes its start
//   time_out_of_range             a time farther than kMaxDurationNs / 2 (6.5
//                                 days) from the trace's median start, or
//                                 beyond +-kMaxAbsTimestampNs: clamped
//   kernel_geometry_out_of_range  negative grid or block sizes, more than
//                                 kMaxGridBlocks blocks or kMaxBlockThreads
//                                 threads per block, registers or shared
//                                 memory out of range: geometry unknown (0)
//   bytes_out_of_range            a negative payload, element count or size
//                                 beyond kMaxBytes: clamped
//   device_property_out_of_range  a GPU property negative, not finite or
//                                 absurd, a group size or rank beyond 2^20:
//                                 made unknown (0)
//   module_path_out_of_range      a module path (a layer range's) deeper
//                                 than kMaxModulePathDepth levels or longer
//                                 than kMaxModulePathBytes: cut to its outer
//                                 levels (CapModulePath)
// (bounds: base/checked_math.h and below).
//
// Invariants afterwards: every event starts no later than it ends; every
// time lies in one window kMaxDurationNs wide, so any duration and any
// difference of two times is at most kMaxDurationNs; geometry products fit
// in int64 with room to spare.
#ifndef REVERIE_PROTO_TRACE_VALIDATE_H_
#define REVERIE_PROTO_TRACE_VALIDATE_H_

#include <cstddef>
#include <string_view>

#include "proto/trace.h"

namespace reverie {

// The module paths a trace may hold ("encoder.layers.11.attention"): the
// graph builder makes a layer of every ancestor of a path, so a path of n
// levels and b bytes costs about n * b / 2 bytes of layer paths (issue 29,
// D22: one path of 100,000 levels took 8 GB). Real models stay far below.
inline constexpr int kMaxModulePathDepth = 32;
inline constexpr size_t kMaxModulePathBytes = 1024;

// The longest prefix of `path` within both bounds that ends between two
// levels (or, when its first level alone is too long, at a UTF-8 character
// boundary); `path` itself when it is within them.
std::string_view CapModulePath(std::string_view path);

// Idempotent: a validated trace passes again unchanged, counting nothing.
void ValidateTrace(Trace* trace);

}  // namespace reverie

#endif  // REVERIE_PROTO_TRACE_VALIDATE_H_
