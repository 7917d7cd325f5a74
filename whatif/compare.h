// File: whatif/compare.h
//
// `reverie compare A B`: how far trace A (typically a prediction, exported
// with a timeline flag, or any trace) is from trace B (typically a measured
// run of the optimized program). Works on raw traces, so either side can be
// a Kineto JSON or a reverie .pb.
//
// All times are per step: a trace's totals are divided by its number of
// steps (ProfilerStep markers; 1 when it has none), so traces that
// profiled different numbers of steps compare fairly. The step time is
// the step time of depgraph/step_time.h (the profiler overview's step, mean
// over counted steps), measured on the trace (or the one pid of a timeline),
// or the span of all events when no graph can be built from it.
//
// Kernel classes are depgraph's TaskClass on the trace's graph, as every
// other command reports them: by name, then by context (a generic kernel
// launched inside Optimizer.step is "optimizer"). Where no graph can be
// built, by name alone: the first matching rule on the lower-cased name (GPU
// activity kind first: memcpy / memset activities are their own classes):
//   communication  nccl, rccl, allreduce, all_reduce, allgather, all_gather,
//                  reducescatter, reduce_scatter, alltoall, sendrecv
//   optimizer      adam, sgd, lamb, adagrad, rmsprop, multi_tensor_apply,
//                  fused_optim
//   normalization  batch_norm, batchnorm, bn_fw, bn_bw, layer_norm, layernorm,
//                  group_norm, groupnorm, rms_norm, rmsnorm, instance_norm
//   conv           conv, cudnn, winograd, fprop, dgrad, wgrad, implicit_gemm
//   gemm           gemm, gemv, cublas, cutlass, matmul, xmma, bmm
//   reduction      reduce, softmax, sum_kernel, mean_kernel, argmax, max_kernel,
//                  min_kernel, cross_entropy, nll_loss, norm_kernel
//   elementwise    elementwise, vectorized, unrolled, pointwise, fill, copy,
//                  relu, gelu, silu, sigmoid, tanh, dropout, where, clamp,
//                  cat_array, catarray, index, add, mul, div
//   memcpy / memset  also matched by "memcpy" / "memset" in the name
//   other          everything else
#ifndef REVERIE_WHATIF_COMPARE_H_
#define REVERIE_WHATIF_COMPARE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "depgraph/kernel_class.h"
#include "proto/trace.h"
#include "report/diff.h"

namespace reverie::whatif {

// Kernel classes are depgraph's (depgraph/kernel_class.h), shared with the
// critical-path summary.
using depgraph::KernelClass;
using depgraph::KernelClassName;
using depgraph::kKernelClassCount;
KernelClass ClassifyKernel(std::string_view name,
                           proto::GpuActivity::Kind kind = proto::GpuActivity::KERNEL);

// The step time of `trace` (of process `pid` when >= 0) by the one
// definition; 0 when no graph can be built from it.
double StepTimeNs(const Trace& trace, int64_t pid);

using report::Diff;
using report::TimeByName;
using report::TimeCount;

// What compare needs from one trace.
struct TraceProfile {
  std::string path;
  int64_t steps = 0;   // ProfilerStep markers (0: none)
  double step_ns = 0;  // mean step time
  double gpu_busy_ns = 0;   // per step, summed over activities
  // By name and context (depgraph::TaskClass) where the trace carries the
  // context (op spans such as Optimizer.step), else by name alone.
  TimeCount classes[kKernelClassCount];
  TimeCount name_classes[kKernelClassCount];  // by name alone
  // Whether `classes` read context: false for a reverie timeline, whose
  // runs keep their tasks but not the op spans around them.
  bool classes_in_context = false;
  absl::flat_hash_map<std::string, TimeCount> kernels;  // by GPU activity name
  absl::flat_hash_map<std::string, TimeCount> layers;   // by module path (LAYER ranges)
};

// `pid` >= 0 keeps one process only: its API calls, ranges and steps,
// and the GPU activities whose correlation id matches one of its calls. That
// selects one run of a timeline written by export/timeline.h (pid 1 =
// measured, 2 = simulated baseline, 3 = predicted), where every run shares
// the devices and streams but correlation ids are unique per run.
TraceProfile ProfileTrace(const Trace& trace, std::string_view path, int64_t pid = -1);

// A run of a reverie timeline with the steps reverie reported for it
// (export/timeline.h writes them; empty for any other trace).
struct RecordedRun {
  int64_t pid = 0;
  std::string label;               // "measured", "predicted (simulated)"
  std::vector<double> step_us;     // every step, in order
  std::vector<bool> counted;
};
std::vector<RecordedRun> RecordedRuns(const Trace& trace);

// The process of `trace` to compare when none was given: -1 (all of it) for
// a profiler trace; for a reverie timeline its one predicted run, else
// kInvalidArgument naming the runs it holds (`path` names the file).
absl::StatusOr<int64_t> DefaultRun(const Trace& trace, std::string_view path);


struct CompareResult {
  std::string a_path, b_path;
  int64_t a_steps = 0, b_steps = 0;
  double a_step_ns = 0, b_step_ns = 0;
  double relative_error = 0;    // (A - B) / B; 0 when B is 0
  std::vector<Diff> classes;    // every class, fixed order
  // The classes read by name alone on both sides (one side could not read
  // the op spans around its kernels: a reverie timeline).
  bool classes_by_name_only = false;
  std::vector<Diff> layers;     // sorted by |diff|, descending
  std::vector<Diff> kernels;    // present in both, sorted by |diff|
  std::vector<Diff> only_in_a;  // sorted by time, descending
  std::vector<Diff> only_in_b;
};

CompareResult Compare(const TraceProfile& a, const TraceProfile& b);

// Human-readable table; lists show at most `top_n` rows each.
std::string CompareText(const CompareResult& r, int top_n = 10);
// One JSON object (times in ms); lists capped at `top_n` rows each.
std::string CompareJson(const CompareResult& r, int top_n = 50);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_COMPARE_H_
