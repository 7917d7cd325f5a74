// File: frameworks/kineto/kineto_importer.h
//
// ImportKinetoJson: a PyTorch-profiler (Kineto) Chrome-trace JSON file,
// plain or gzip-compressed, -> reverie Trace. Handles the current schema
// (cpu_op, cuda_runtime, kernel, ac2g, ...), the 2021 schema (Operator,
// Runtime, Kernel, Memcpy, Memset, async) and AMD/HIP traces (same
// categories). Timestamps (us, possibly with ns decimals) become int64 ns
// exactly.
//
// What the importer produces, and the CONTRACT it gives the dependency-graph
// builder:
// - ApiCall (cuda_runtime / cuda_driver), GpuActivity (kernel / gpu_memcpy /
//   gpu_memset), Sync (cuda_sync, pid/tid taken from the runtime call with the
//   same correlation), EventRecord (cuda_event), Flow (fwdbwd), Collective
//   (record_param_comms with "Collective name" args, else "nccl:X"/"gloo:X"
//   annotations), Step (one per distinct ProfilerStep#N on a CPU thread).
// - Range: cpu_op/Operator -> CPU_OP, user_annotation -> USER_ANNOTATION,
//   gpu_user_annotation -> GPU_ANNOTATION (tid = stream, device set),
//   python_function "nn.Module: X_N" -> LAYER with module_path
//   "Outer_0.Inner_3.X_N" built from the nesting of nn.Module ranges on the
//   thread. Other python_function events are dropped and counted
//   (skipped_python_function).
// - Ranges nest per thread (per stream for GPU annotations): `parent` is the
//   innermost enclosing range, ranges are stored parents-first.
// - module_path_sid is set on LAYER ranges and inherited by every range
//   nested in one; backward ops (autograd::engine::evaluate_function ...) get
//   the module path of their forward op (fwdbwd flow, else the autograd
//   sequence number), and their nested ops inherit it.
// - phase: explicit markers win ("## forward ##"/"## backward ##"/
//   "## optimizer ##" annotations, evaluate_function -> BACKWARD,
//   Optimizer.step#/Optimizer.zero_grad# -> UPDATE, enumerate(DataLoader) ->
//   DATA_LOADING); otherwise a range inherits its parent's phase; otherwise
//   LAYER ranges and ops that start a fwdbwd flow are FORWARD, fused/foreach
//   optimizer ops UPDATE, and top-level ops on autograd's own thread
//   BACKWARD. Unknown stays PHASE_UNKNOWN.
// => The graph builder gives each CPU API call
//      layer = module_path_sid of the innermost enclosing range on its thread
//              (pid, tid) whose module_path_sid != 0, and
//      phase = phase of the innermost enclosing range whose phase !=
//              PHASE_UNKNOWN.
//    Because phase and module path are inherited downwards here, the innermost
//    enclosing range already carries both when known.
// - Anomalies are counted, never fatal (Trace counters): unmatched_correlation
//   (GPU activity whose correlation matches no runtime/driver call),
//   gpu_activity_without_correlation, launch_without_kernel (a kernel launch
//   call with no GPU activity), memory_call_without_gpu_activity (a cudaMemcpy*/
//   cudaMemset* call with none), duplicate_correlation,
//   gpu_starts_before_launch, range_overlap (ranges partially overlapping on
//   a thread), unbalanced_annotation (B/E events that do not pair),
//   negative_duration, missing_field, unknown_category, unknown_sync_kind,
//   sync_without_api_call, unmatched_flow, duplicate_profiler_step,
//   backward_op_without_forward_layer, malformed_event,
//   non_numeric_thread_id, unsupported_event_phase; and skipped_* for known
//   events the trace model has no place for.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_IMPORTER_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_IMPORTER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "proto/trace.h"

namespace reverie {

// Errors name the file: kNotFound (missing), kInvalidArgument (empty,
// invalid JSON with byte offset, JSON that is not a profiler trace — e.g. a
// PyTorch execution trace), kDataLoss (truncated / corrupt gzip). A trace
// without GPU events is valid.
struct ImportOptions {
  // Threads decoding the JSON at once (0: $REVERIE_THREADS, else every
  // core); the Trace is the same whatever the count.
  int threads = 0;
};
absl::StatusOr<Trace> ImportKinetoJson(const std::string& path, const ImportOptions& options = {});

}  // namespace reverie

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_IMPORTER_H_
