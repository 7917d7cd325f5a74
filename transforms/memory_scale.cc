// File: transforms/memory_scale.cc
#include "transforms/memory_scale.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hardware/math_type.h"
#include "transforms/structure.h"

namespace reverie::transforms {
namespace {

using depgraph::Graph;
using depgraph::OpId;
using depgraph::Phase;
using depgraph::TaskId;
using depgraph::TaskKind;

int64_t RoundToBlock(double bytes) {
  const double blocks = std::ceil(std::max(bytes, 1.0) / static_cast<double>(kAllocatorBlock));
  return static_cast<int64_t>(std::min(blocks, 1e15)) * kAllocatorBlock;
}

bool InCompute(Phase p) { return p == Phase::kForward || p == Phase::kBackward; }

// An allocation of `current` bytes resized from batch `from` to `to`: still
// at its size for `from`, from `at_trace` (its raw size at the trace's
// batch), so changes compose exactly (x2 then x0.5 gives it back); resized
// by another script since (amp.lua's half activations), by the factor.
int64_t Rescaled(int64_t current, double at_trace, double from, double to) {
  return current == RoundToBlock(at_trace * from)
             ? RoundToBlock(at_trace * to)
             : RoundToBlock(static_cast<double>(current) * to / from);
}

// Block size -> the largest raw tensor size that rounds to it, over the
// inputs of the ops that launched forward and backward kernels that are
// not parameters.
absl::flat_hash_map<int64_t, int64_t> BatchTensorSizes(const Graph& g, const CostModel& m) {
  absl::flat_hash_map<int64_t, int64_t> out;
  absl::flat_hash_set<uint32_t> seen;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kKernel) continue;
    if (!InCompute(g.phase(t))) continue;
    const TaskId call = LauncherOf(g, t);
    if (!call.valid()) continue;
    for (OpId o = g.op_of(call); o.valid() && seen.insert(o.value()).second; o = g.op(o).parent) {
      const hardware::OpArgs* in = g.op_inputs(o);
      if (in == nullptr) continue;
      const std::string_view name = g.op_name(o);
      for (size_t a = 0; a < in->size(); ++a) {
        const int32_t element = hardware::ElementBytes((*in)[a].type);
        if (element == 0) continue;
        for (const std::vector<int64_t>& shape : (*in)[a].shapes) {
          if (shape.empty()) continue;
          double n = element;
          for (int64_t d : shape) n *= static_cast<double>(std::max<int64_t>(d, 0));
          if (n <= 0 || n > 1e15 || m.IsParameter(name, a, shape)) continue;
          int64_t& raw = out[RoundToBlock(n)];
          raw = std::max(raw, static_cast<int64_t>(n));
        }
      }
    }
  }
  return out;
}

// Without recorded shapes nothing names the batch's tensors: the estimate
// takes every GPU allocation the forward or backward made and freed again
// (its free tied by address) as one: activations, their gradients and the
// temporaries of both, which grow with the batch, but also the weights'
// gradients where the backward frees them (the estimate is high there).
// What lives past the backward (weights, optimizer state, gradients kept
// for the update) keeps its size.
std::vector<std::pair<uint32_t, int64_t>> EstimatedBatchEvents(const Graph& measured,
                                                               MemoryScaleStats* st) {
  const std::span<const depgraph::MemoryEvent> all = measured.memory_events();
  std::vector<bool> transient(all.size(), false);
  for (const depgraph::MemoryEvent& e : all) {
    if (e.alloc != 0 && InCompute(e.phase)) transient[e.alloc - 1] = true;
  }
  std::vector<std::pair<uint32_t, int64_t>> out;
  for (uint32_t i = 0; i < all.size(); ++i) {
    const depgraph::MemoryEvent& e = all[i];
    if (e.device < 0 || e.bytes <= 0) continue;
    if (transient[i] && InCompute(e.phase)) {
      out.push_back({i, e.bytes});
    } else {
      ++st->kept;
    }
  }
  st->estimated = true;
  return out;
}

// The trace's batch tensors: each allocation (and each untied free that
// returns one) of `measured` that holds one, by event index, with the
// tensor's recorded raw size (without recorded shapes, the estimate above).
std::vector<std::pair<uint32_t, int64_t>> RecordedBatchEvents(const Graph& measured,
                                                              const CostModel& m,
                                                              MemoryScaleStats* st) {
  const absl::flat_hash_map<int64_t, int64_t> sizes = BatchTensorSizes(measured, m);
  st->batch_sizes = static_cast<int64_t>(sizes.size());
  if (sizes.empty()) return EstimatedBatchEvents(measured, st);
  std::vector<std::pair<uint32_t, int64_t>> out;
  const std::span<const depgraph::MemoryEvent> all = measured.memory_events();
  // Allocations a free is tied to (by address); the others' frees, when the
  // trace has them, are found by size below.
  std::vector<bool> tied(all.size(), false);
  for (const depgraph::MemoryEvent& e : all) {
    if (e.alloc != 0) tied[e.alloc - 1] = true;
  }
  // Per (device, block size): the raw size of that block size's batch
  // allocations and how many of them no free is tied to and none has
  // returned yet. A trace without addresses (Kineto's 2021 schema) ties no
  // free to its allocation; a free of a batch size returns one of them, so
  // a resized tensor is not kept for ever (Kineto's ResNet-50 sample at
  // batch x2 once peaked at 40 GiB for 2.6).
  struct Untied {
    int64_t raw = 0;
    int64_t live = 0;
  };
  absl::flat_hash_map<std::pair<int32_t, int64_t>, Untied> untied;
  for (uint32_t i = 0; i < all.size(); ++i) {
    const depgraph::MemoryEvent& e = all[i];
    if (e.device < 0 || e.bytes == 0) continue;
    if (e.bytes < 0) {
      if (e.alloc != 0) continue;  // follows its allocation (Graph::ResizeAllocations)
      auto u = untied.find({e.device, -e.bytes});
      if (u == untied.end() || u->second.live == 0) continue;
      out.push_back({i, u->second.raw});
      --u->second.live;
      ++st->frees_by_size;
      continue;
    }
    auto it = e.phase == Phase::kUpdate ? sizes.end() : sizes.find(e.bytes);
    if (it == sizes.end()) {
      ++st->kept;
      continue;
    }
    out.push_back({i, it->second});
    if (!tied[i]) {
      Untied& u = untied[{e.device, e.bytes}];
      u.raw = it->second;
      ++u.live;
    }
  }
  return out;
}

}  // namespace

MemoryScaleStats ScaleBatchMemory(Graph& g, const Graph& measured, const CostModel& m, double from,
                                  double to_batch) {
  MemoryScaleStats st;
  if (!(from > 0) || !(to_batch > 0) || measured.memory_events().empty()) return st;
  const std::span<const depgraph::MemoryEvent> now = g.memory_events();
  std::vector<std::pair<uint32_t, int64_t>> resize;
  // Per allocation resized: its size before (what a stash's copies of it
  // are measured against).
  std::vector<int64_t> before(now.size(), 0);
  for (const auto& [i, raw] : RecordedBatchEvents(measured, m, &st)) {
    if (i >= now.size() || now[i].bytes == 0) continue;
    const bool free = now[i].bytes < 0;
    const int64_t current = free ? -now[i].bytes : now[i].bytes;
    const int64_t to = Rescaled(current, static_cast<double>(raw), from, to_batch);
    resize.push_back({i, to});
    if (free) continue;
    before[i] = current;
    ++st.scaled;
    st.bytes_before += current;
    st.bytes_after += to;
  }
  // Allocations scripts made, in order (a copy follows what it copies):
  // batch tensors (Allocate's `batch`) from the size each was made with, at
  // the batch it was made for; a stash's copy of a resized allocation
  // (checkpointing's recomputed activation) at that allocation's new size,
  // its stand-in in proportion.
  std::vector<int64_t> after(now.size(), 0);
  for (const auto& [i, to] : resize) after[i] = to;
  for (uint32_t i = static_cast<uint32_t>(measured.memory_events().size()); i < now.size(); ++i) {
    const depgraph::MemoryEvent& e = now[i];
    if (e.bytes <= 0) continue;
    const uint32_t of = e.stands_for;
    int64_t to = 0;
    if (of != 0 && of - 1 < i && before[of - 1] > 0) {
      to = e.bytes == before[of - 1]
               ? after[of - 1]
               : RoundToBlock(static_cast<double>(e.bytes) * static_cast<double>(after[of - 1]) /
                              static_cast<double>(before[of - 1]));
    } else if (e.batch > 0) {
      // Made at batch e.batch with recorded_bytes.
      to = Rescaled(e.bytes, static_cast<double>(e.recorded_bytes) / e.batch, from, to_batch);
    } else {
      continue;
    }
    before[i] = e.bytes;
    after[i] = to;
    resize.push_back({i, to});
    ++st.scaled;
    ++st.made_by_scripts;
    st.bytes_before += e.bytes;
    st.bytes_after += to;
  }
  g.ResizeAllocations(resize);
  if (st.estimated && st.scaled > 0) {
    g.AddMemoryEstimate(
        "an estimate, likely high: no op recorded its input shapes (record_shapes) to tell the "
        "batch's tensors, so every allocation the forward and backward freed again (library "
        "workspaces and weight gradients too) was taken as one");
  } else if (st.estimated) {
    g.set_memory_unknown(
        "no op recorded its input shapes (record_shapes) and no free is tied to its "
        "allocation: nothing tells the batch's tensors");
  }
  return st;
}

}  // namespace reverie::transforms
