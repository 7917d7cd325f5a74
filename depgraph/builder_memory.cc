// File: depgraph/builder_memory.cc
//
// The trace's allocations and frees (trace.proto MemoryEvent) into the
// graph: each takes the layer and phase of the op that encloses it, read up
// its range's parents as tasks take theirs (a child op without a module path
// or phase inherits the enclosing one's).
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "depgraph/builder_internal.h"

namespace reverie::depgraph::internal {
namespace {

// Enough for any real nesting; a hostile .pb's parent cycle stops here.
constexpr int kMaxParentWalk = 256;

struct Owner {
  LayerId layer;
  Phase phase = Phase::kUnknown;
  uint32_t op_name = 0;
};

}  // namespace

void AddMemory(Context& ctx) {
  const proto::TraceChunk& ev = ctx.trace.events();
  if (ev.memory_events_size() == 0) return;
  absl::flat_hash_map<uint32_t, Owner> owner_of;  // range index + 1 -> owner
  absl::flat_hash_map<uint32_t, LayerId> layer_of_sid;
  auto owner = [&](uint32_t range) -> Owner {
    auto [it, fresh] = owner_of.try_emplace(range);
    if (!fresh) return it->second;
    Owner o;
    o.op_name = ctx.g.InternName(ctx.trace.String(ev.ranges(static_cast<int>(range) - 1).name_sid()));
    uint32_t r = range;
    for (int k = 0; k < kMaxParentWalk && r != 0 && r <= static_cast<uint32_t>(ev.ranges_size()); ++k) {
      const proto::Range& x = ev.ranges(static_cast<int>(r) - 1);
      if (!o.layer.valid() && x.module_path_sid() != 0) {
        auto [lit, new_sid] = layer_of_sid.try_emplace(x.module_path_sid(), LayerId::Invalid());
        if (new_sid) lit->second = LayerFor(ctx.g, ctx.trace.String(x.module_path_sid()));
        o.layer = lit->second;
      }
      if (o.phase == Phase::kUnknown && x.phase() != proto::PHASE_UNKNOWN && x.phase() <= proto::OTHER) {
        o.phase = static_cast<Phase>(x.phase());
      }
      if (o.layer.valid() && o.phase != Phase::kUnknown) break;
      r = x.parent();
    }
    it->second = o;
    return o;
  };
  // Validation made `alloc` point at an earlier allocation; the importer
  // sorted by time, but a .pb from elsewhere may not be: such an event is
  // moved to the latest time so far (its order is kept).
  int64_t last = INT64_MIN;
  for (const proto::MemoryEvent& m : ev.memory_events()) {
    MemoryEvent g;
    last = std::max(last, m.time_ns());
    g.measured_ns = last;
    g.bytes = m.bytes();
    if (m.has_total_allocated()) g.total_allocated = m.total_allocated();
    if (m.has_total_reserved()) g.total_reserved = m.total_reserved();
    g.device = m.device_type() == 0 ? -1 : m.device();
    g.alloc = m.alloc();
    g.has_addr = m.addr() != 0;
    if (m.range() != 0 && m.range() <= static_cast<uint32_t>(ev.ranges_size())) {
      const Owner o = owner(m.range());
      g.layer = o.layer;
      g.phase = o.phase;
      g.op_name = o.op_name;
    }
    ctx.g.AddMemoryEvent(g);
  }
}

}  // namespace reverie::depgraph::internal
