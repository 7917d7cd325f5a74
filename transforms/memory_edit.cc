// File: transforms/memory_edit.cc
#include "transforms/memory_edit.h"

#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace reverie::transforms {
namespace {

using depgraph::Graph;
using depgraph::MemoryEvent;
using depgraph::OpId;
using depgraph::TaskId;

// After the anchor's end: the replay caps an offset at the task's duration
// and gap (depgraph/memory_replay.h), so this is "when it ends", whatever
// a later script makes its duration.
constexpr int64_t kAtEnd = std::numeric_limits<int64_t>::max();

// Whether `op` is `outer` or inside it (parents have smaller ids, so the
// walk ends).
bool Encloses(const Graph& g, OpId outer, OpId op) {
  for (int depth = 0; op.valid() && depth < 64; ++depth, op = g.op(op).parent) {
    if (op == outer) return true;
  }
  return false;
}

TaskId LaunchedBy(const Graph& g, const depgraph::Adjacency& adj, TaskId call) {
  for (depgraph::EdgeId e : adj.out(call)) {
    if (g.edge(e).kind == depgraph::EdgeKind::kLaunch) return g.edge(e).dst;
  }
  return TaskId();
}

TaskId ProducerOf(const Graph& g, const depgraph::Adjacency& adj, TaskId anchor) {
  if (depgraph::IsGpuKind(g.kind(anchor))) return anchor;
  const OpId op = g.op_of(anchor);
  // Without an op only the allocation's own call and the next can be its.
  const int limit = op.valid() ? kProducerSearch : 2;
  TaskId t = anchor;
  for (int i = 0; i < limit && t.valid(); ++i, t = g.next_on_resource(t)) {
    if (g.step_mark(t) != depgraph::StepMark::kNone) break;
    if (i > 0 && op.valid() && !Encloses(g, op, g.op_of(t))) break;
    if (g.kind(t) != depgraph::TaskKind::kCpuApi) continue;
    const TaskId gpu = LaunchedBy(g, adj, t);
    if (gpu.valid()) return gpu;
  }
  return TaskId();
}

bool Standing(const Graph& g, const MemoryEvent& m) { return !m.anchor.valid() || !g.removed(m.anchor); }

// The first free of allocation `alloc` (frees come after their allocation),
// adding the events read to *scanned.
int64_t FreeOf(const Graph& g, uint32_t alloc, int64_t* scanned) {
  const std::span<const MemoryEvent> all = g.memory_events();
  for (size_t i = alloc + 1; i < all.size(); ++i) {
    ++*scanned;
    if (all[i].alloc == alloc + 1) return static_cast<int64_t>(i);
  }
  return -1;
}

// `m` tied to `anchor`, `offset_ns` after its start (kAtEnd: when it ends).
MemoryEvent TiedTo(MemoryEvent m, TaskId anchor, int64_t offset_ns) {
  m.anchor = anchor;
  m.anchor_offset_ns = offset_ns;
  return m;
}

// Appends allocation `alloc` and, unless `free` is null, `free` as its free
// (the allocation's bytes, returned). Returns the allocation's index.
uint32_t AppendPair(Graph& g, MemoryEvent alloc, const MemoryEvent* free) {
  alloc.alloc = 0;
  // A batch tensor's new allocation has its size for the batch run now.
  if (alloc.batch > 0) alloc.batch = g.batch_factor();
  const uint32_t k = g.AddScriptMemoryEvent(alloc);
  if (free != nullptr) {
    MemoryEvent f = *free;
    f.bytes = -alloc.bytes;
    f.alloc = k + 1;
    g.AddScriptMemoryEvent(f);
  }
  return k;
}

absl::Status CheckAllocation(const Graph& g, uint32_t alloc, const char* what) {
  const std::span<const MemoryEvent> all = g.memory_events();
  if (alloc >= all.size() || all[alloc].bytes <= 0 || !Standing(g, all[alloc])) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", alloc, " is not a live allocation (",
                                                   all.size(), " memory events)"));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<Allocation> Allocations(const Graph& g) {
  const std::span<const MemoryEvent> all = g.memory_events();
  if (all.empty()) return {};  // no adjacency to build for a trace without memory
  std::vector<uint32_t> free_of(all.size(), 0);
  for (uint32_t i = 0; i < all.size(); ++i) {
    if (all[i].alloc != 0 && free_of[all[i].alloc - 1] == 0) free_of[all[i].alloc - 1] = i + 1;
  }
  const depgraph::Adjacency& adj = g.adjacency();
  std::vector<Allocation> out;
  for (uint32_t i = 0; i < all.size(); ++i) {
    const MemoryEvent& m = all[i];
    if (m.bytes <= 0 || !Standing(g, m)) continue;
    Allocation a;
    a.index = i;
    a.bytes = m.bytes;
    a.device = m.device;
    a.phase = m.phase;
    a.layer = m.layer;
    if (m.anchor.valid()) {
      a.step = g.step_of(m.anchor);
      a.producer = ProducerOf(g, adj, m.anchor);
    }
    a.free = free_of[i];
    if (a.free != 0) {
      const MemoryEvent& f = all[a.free - 1];
      a.freed_in = f.phase;
      a.freed_at = f.anchor;
    }
    out.push_back(a);
  }
  return out;
}

absl::Status Stash(Graph& g, uint32_t alloc, TaskId release, TaskId restore, int64_t stashed_bytes,
                   int64_t* scanned) {
  int64_t scanned_here = 0;
  if (scanned == nullptr) scanned = &scanned_here;
  REVERIE_RETURN_IF_ERROR(CheckAllocation(g, alloc, "stash"));
  if (!g.live(release) || !g.live(restore)) {
    return absl::InvalidArgumentError("stash: release and restore must be live tasks");
  }
  if (stashed_bytes < 0) return absl::InvalidArgumentError("stash: stashed_bytes must be >= 0");
  MemoryEvent a = g.memory_events()[alloc];
  const int64_t f = FreeOf(g, alloc, scanned);
  // The copies stand for the tensor as the trace (or the script that made
  // it) allocated it: a batch change resizes them with it.
  a.stands_for = a.stands_for != 0 ? a.stands_for : alloc + 1;
  // The stand-in first, so that at `restore` its free comes before the
  // tensor's new allocation (ties replay in index order).
  if (stashed_bytes > 0) {
    MemoryEvent in = a;
    in.bytes = stashed_bytes;
    in.batch = 0;  // its size follows the tensor's (stands_for), not the batch's
    const MemoryEvent out = TiedTo(in, restore, 0);
    AppendPair(g, TiedTo(in, release, kAtEnd), &out);
  }
  if (f >= 0) {
    // The copy made again is freed where the trace freed the tensor.
    const MemoryEvent free = g.memory_events()[f];
    AppendPair(g, TiedTo(a, restore, 0), Standing(g, free) ? &free : nullptr);
    g.ReanchorMemoryEvent(static_cast<uint32_t>(f), release, kAtEnd);
  } else {
    // Never freed in the trace: freed at `release`, the copy lives on.
    AppendPair(g, TiedTo(a, restore, 0), nullptr);
    MemoryEvent free = TiedTo(a, release, kAtEnd);
    free.bytes = -a.bytes;
    free.alloc = alloc + 1;
    g.AddScriptMemoryEvent(free);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> Allocate(Graph& g, int32_t device, int64_t bytes, TaskId at,
                                  TaskId free_at, bool batch) {
  if (bytes <= 0) return absl::InvalidArgumentError("allocate: bytes must be > 0");
  if (!g.live(at) || (free_at.valid() && !g.live(free_at))) {
    return absl::InvalidArgumentError("allocate: at and free_at must be live tasks");
  }
  MemoryEvent m{.bytes = bytes, .device = device, .phase = g.phase(at), .layer = g.layer_of(at)};
  MemoryEvent free = m;
  if (batch) m.batch = g.batch_factor();
  if (free_at.valid()) {
    free.phase = g.phase(free_at);
    free.layer = g.layer_of(free_at);
  }
  const MemoryEvent tied_free = TiedTo(free, free_at, kAtEnd);
  return AppendPair(g, TiedTo(m, at, 0), free_at.valid() ? &tied_free : nullptr);
}

absl::Status ResizeAllocation(Graph& g, uint32_t alloc, int64_t bytes) {
  const std::pair<uint32_t, int64_t> one{alloc, bytes};
  return ResizeAllocations(g, std::span(&one, 1));
}

absl::Status ResizeAllocations(Graph& g, std::span<const std::pair<uint32_t, int64_t>> sizes) {
  absl::flat_hash_set<uint32_t> seen;
  for (const auto& [alloc, bytes] : sizes) {
    REVERIE_RETURN_IF_ERROR(CheckAllocation(g, alloc, "resize_allocation"));
    if (bytes <= 0) return absl::InvalidArgumentError("resize_allocation: bytes must be > 0");
    if (!seen.insert(alloc).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("resize_allocation: allocation ", alloc, " is named twice"));
    }
  }
  g.ResizeAllocations(sizes);
  return absl::OkStatus();
}

}  // namespace reverie::transforms
