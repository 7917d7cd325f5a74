// File: transforms/memory_scale.h
//
// What a batch change does to device memory: the allocations of tensors
// that carry the batch grow with it, those of parameters, their gradients
// and optimizer state, library workspaces and scalars do not.
//
// The trace records an allocation's size, not its tensor. A size is a
// batch tensor's when it is the size (rounded up to the caching
// allocator's 512-byte blocks) of a tensor some forward or backward op
// recorded as an input (`record_shapes`) that is not a parameter
// (CostModel::IsParameter): activations are the next op's inputs. Such an
// allocation on a GPU outside the optimizer step becomes that tensor's
// bytes x factor, rounded to a block; every other allocation keeps its size
// (a parameter-sized weight gradient, cuBLAS's workspace, a loss scalar).
// A size that is both an activation's and a parameter's counts as an
// activation: the prediction then errs towards more memory, the side a
// "will it fit?" answer can afford. Ignored: allocations the allocator
// served from a larger cached block (their recorded size is the block's),
// and tensors whose sizes no op recorded (the trace has no shapes: nothing
// is scaled, and the stats say so). A free follows its allocation when the
// trace ties them (by address); without addresses (Kineto's 2021 schema) a
// free of a resized block size returns one resized allocation of
// that size not yet returned on its device (frees_by_size).
#ifndef REVERIE_TRANSFORMS_MEMORY_SCALE_H_
#define REVERIE_TRANSFORMS_MEMORY_SCALE_H_

#include <cstdint>

#include "depgraph/graph.h"
#include "transforms/cost_model.h"

namespace reverie::transforms {

// The caching allocator's block: sizes round up to a multiple of it.
inline constexpr int64_t kAllocatorBlock = 512;

struct MemoryScaleStats {
  int64_t scaled = 0;         // allocations resized
  int64_t kept = 0;           // GPU allocations left as they were
  int64_t batch_sizes = 0;    // distinct batch-tensor sizes the ops recorded
  int64_t bytes_before = 0;   // of the resized allocations
  int64_t bytes_after = 0;
  // Frees no address tied to an allocation, resized as the resized
  // allocations of their size (still outstanding on their device) were.
  int64_t frees_by_size = 0;
  // Of `scaled`: allocations scripts made (amp.lua's half copies, a
  // stash's copies of a batch tensor).
  int64_t made_by_scripts = 0;
  // No op recorded its input shapes: the batch tensors were estimated (the
  // forward's and backward's allocations freed within them) and the graph
  // says so (Graph::memory_estimate).
  bool estimated = false;
};

// Resizes the batch tensors' allocations of `g` from batch `from` to batch
// `to` (multiples of the trace's, > 0: Graph::batch_factor). The tensors
// are recognised on `measured` (the trace as built, whose memory events
// `g` holds at the same indexes: scripts only append), and an allocation
// still at its size for `from` becomes its recorded size x `to`, so changes
// compose exactly (x2 then x0.5 gives the trace's allocations back); one
// another script resized keeps that change, x to / from. Allocations a
// script made for a batch tensor (Allocate's `batch`) are resized from the
// size each was made with, and a stash's copies of a resized allocation
// (Stash: checkpointing's recomputed activations) with it. Where no op
// recorded its input shapes, the batch tensors are estimated (see
// MemoryScaleStats::estimated).
MemoryScaleStats ScaleBatchMemory(depgraph::Graph& g, const depgraph::Graph& measured,
                                  const CostModel& m, double from, double to);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_MEMORY_SCALE_H_
