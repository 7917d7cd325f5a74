// File: transforms/memory_edit.h
//
// The allocations a script's change moves: each recorded allocation with the
// GPU task that wrote it and where the trace freed it, and the edits the
// memory-saving scripts make to them (activation checkpointing, vDNN's
// offloading, Gist's encodings, autocast's half-precision tensors).
//
// A tensor the forward saves for the backward is an allocation of a forward
// op freed by a backward one. Stashing it releases it after one task (the
// last forward kernel of a checkpointed segment, the offload copy, the
// encoding kernel) and allocates it again at the start of another (the
// recomputation of its producer, the prefetch copy, the decoding kernel),
// to be freed where the trace freed it; in between it may hold a smaller
// stand-in on its device (Gist's encoded map). The simulator places each
// event at its anchor's simulated time (depgraph/memory_replay.h), so the
// peak follows the predicted order.
//
// The producer of an allocation is the first GPU task launched by its op at
// or after it (an op allocates its output, then launches the kernel that
// writes it): found by walking its thread from the allocation's anchor while
// the calls belong to the same op (or one it encloses), at most
// kProducerSearch tasks. None when the op launched nothing (a CPU tensor, a
// view) or the trace records no ops (the allocation's own call is then the
// only candidate).
#ifndef REVERIE_TRANSFORMS_MEMORY_EDIT_H_
#define REVERIE_TRANSFORMS_MEMORY_EDIT_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "depgraph/graph.h"

namespace reverie::transforms {

inline constexpr int kProducerSearch = 32;

struct Allocation {
  uint32_t index = 0;  // into Graph::memory_events()
  int64_t bytes = 0;
  int32_t device = -1;  // GPU ordinal; -1 the host
  depgraph::Phase phase = depgraph::Phase::kUnknown;  // of the op that allocated it
  depgraph::LayerId layer;
  int32_t step = -1;          // its anchor's step; -1 unknown
  depgraph::TaskId producer;  // the GPU task that wrote it; invalid: none found
  uint32_t free = 0;          // 1 + index of its free; 0: live past the trace's end
  depgraph::Phase freed_in = depgraph::Phase::kUnknown;
  depgraph::TaskId freed_at;  // the free's anchor
  // Saved for the backward: allocated in the forward, freed in the backward.
  bool saved() const {
    return phase == depgraph::Phase::kForward && free != 0 && freed_in == depgraph::Phase::kBackward;
  }
};

// The allocations of live anchors (removed work's memory went with it), in
// the trace's order.
std::vector<Allocation> Allocations(const depgraph::Graph& g);

// Releases allocation `alloc` when `release` ends, allocates it again when
// `restore` starts, freed there where the trace freed it (an allocation the
// trace never freed stays allocated from `restore` on); with
// `stashed_bytes` > 0 a stand-in of that size is held from `release` to
// `restore`. kInvalidArgument for an index that is not a live allocation,
// removed tasks, or stashed_bytes < 0.
absl::Status Stash(depgraph::Graph& g, uint32_t alloc, depgraph::TaskId release,
                   depgraph::TaskId restore, int64_t stashed_bytes, int64_t* scanned = nullptr);

// A new allocation of `bytes` (> 0) on `device` when `at` starts, freed
// when `free_at` ends (invalid: never): a tensor a script's inserted work
// makes (autocast's half-precision copies). With `batch`, it holds a batch
// tensor sized for the batch the graph runs now: a later ScaleBatchMemory
// resizes it. Returns its index.
absl::StatusOr<uint32_t> Allocate(depgraph::Graph& g, int32_t device, int64_t bytes,
                                  depgraph::TaskId at, depgraph::TaskId free_at,
                                  bool batch = false);

// Gives allocation `alloc` (and its frees) `bytes` (> 0). Resize before
// stashing: a stash copies the size the allocation has then.
absl::Status ResizeAllocation(depgraph::Graph& g, uint32_t alloc, int64_t bytes);

// Many allocations at once, each (allocation, bytes) as above, in one pass
// over the memory events (one call per allocation is a pass each). Nothing
// changes unless every entry is valid; an allocation named twice is an
// error.
absl::Status ResizeAllocations(depgraph::Graph& g,
                               std::span<const std::pair<uint32_t, int64_t>> sizes);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_MEMORY_EDIT_H_
