// File: frameworks/kineto/kineto_ranges.h
//
// Range post-processing for the Kineto importer: per-thread nesting
// (parent/depth), layer module paths, phase inference and the attribution of
// backward ops to the layer of their forward op. See kineto_importer.h for
// the contract this gives the dependency-graph builder.
//
// Invariants of the output: ranges are emitted sorted by (stream-or-thread,
// start, longer first), so a parent always precedes its children and
// `parent` (global index + 1) is smaller than the child's own index + 1.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_RANGES_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_RANGES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/huge_pages.h"
#include "proto/trace.h"

namespace reverie::kineto {

// The profiler's name for a module's range ("nn.Module: Linear_0").
inline constexpr std::string_view kModulePrefix = "nn.Module: ";

// A range as collected from the events, before nesting.
struct RangeRec {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t pid = 0;
  int64_t tid = 0;  // the stream for GPU annotations
  uint64_t external_id = 0;
  int64_t sequence_number = -1;
  uint32_t name_sid = 0;
  uint32_t module_path_sid = 0;
  uint32_t order = 0;  // tie-break among identical intervals (file order / Python id)
  int32_t device = 0;
  proto::Range::Kind kind = proto::Range::KIND_UNSPECIFIED;
  bool is_gpu = false;
  bool is_profiler_step = false;
  bool starts_fwdbwd_flow = false;  // a forward op that an autograd node came from
  bool order_is_python_id = false;  // else `order` is the file order
  uint32_t inputs_begin = 0;        // into OpInputStore::inputs (CPU ops with recorded shapes)
  uint32_t inputs_count = 0;
};

// The recorded inputs of every CPU op, kept apart from the RangeRecs so
// that ranges without them (most) stay small; strings are interned.
struct OpInputStore {
  struct Input {
    uint32_t dims_begin = 0, dims_count = 0, ranks_begin = 0, ranks_count = 0;
    uint32_t type_sid = 0, concrete_sid = 0;
    bool is_list = false;
  };
  std::vector<Input> inputs;
  std::vector<int64_t> dims;
  std::vector<int32_t> ranks;
};

// Ranges of a large trace: tens of MB, grown one event at a time.
using RangeRecs = std::vector<RangeRec, HugePageAllocator<RangeRec>>;

// A forward -> backward link from a fwdbwd flow.
struct FwdBwdLink {
  int64_t from_tid;
  int64_t from_ns;
  int64_t to_tid;
  int64_t to_ns;
};

// Ranges in the order EmitRanges emits them: by (CPU before GPU, pid, tid,
// start, longer first, nesting rank, external id, file order). Sorting is
// the costly part and reads nothing but the ranges, so the importer runs it
// beside its other whole-trace checks.
struct SortedRanges {
  RangeRecs recs;
  std::vector<uint32_t> order;  // indexes into recs
};
SortedRanges SortRanges(RangeRecs ranges);

// Nests, infers phases and module paths, and appends the ranges to
// trace->events().ranges() (and ProfilerStep steps to steps()), their
// messages made on `threads` workers (0: every core; the result is the
// same). Anomalies go to trace counters (range_overlap,
// duplicate_profiler_step, backward_op_without_forward).
// `inputs` (may be null) holds the ops' recorded inputs RangeRec points into.
void EmitRanges(SortedRanges ranges, const std::vector<FwdBwdLink>& links, Trace* trace,
                const OpInputStore* inputs = nullptr, int threads = 1);

// Phase from a range's name alone (markers such as "## backward ##",
// "Optimizer.step#Adam.step", "autograd::engine::evaluate_function: ...").
proto::Phase ExplicitPhase(std::string_view name);

// N of "ProfilerStep#N", or -1.
int64_t ProfilerStepIndex(std::string_view name);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_RANGES_H_
