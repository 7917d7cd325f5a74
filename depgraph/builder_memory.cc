// File: depgraph/builder_memory.cc
//
// The trace's allocations and frees (trace.proto MemoryEvent) into the
// graph: each takes the layer and phase of the op that encloses it, read up
// its range's parents as tasks take theirs (a child op without a module path
// or phase inherits the enclosing one's).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/checked_math.h"
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

// The CPU tasks (API calls and stretches of op and framework time) of each
// traced thread, and of all threads together, in time order: the task a
// memory event happened in, or the last one before it, is its anchor.
class AnchorIndex {
 public:
  explicit AnchorIndex(const Context& ctx) {
    for (uint32_t t = 0; t < ctx.threads.size(); ++t) thread_of_[{ctx.threads[t].pid, ctx.threads[t].tid}] = t;
    by_thread_.resize(ctx.threads.size());
    for (const CpuPiece& p : ctx.pieces) {
      if (p.thread != kNone && p.end > p.start) by_thread_[p.thread].push_back({p.start, p.task});
    }
    std::vector<size_t> pieces(by_thread_.size());
    for (size_t t = 0; t < by_thread_.size(); ++t) pieces[t] = by_thread_[t].size();
    for (const CpuCall& c : ctx.calls) by_thread_[c.thread].push_back({c.start, c.task});
    std::vector<size_t> runs;
    for (size_t t = 0; t < by_thread_.size(); ++t) {
      SortRuns(by_thread_[t], {0, pieces[t]}, StartsBefore);
      runs.push_back(all_.size());
      all_.insert(all_.end(), by_thread_[t].begin(), by_thread_[t].end());
    }
    if (runs.empty()) runs.push_back(0);
    SortRuns(all_, std::move(runs), StartsBefore);
  }
  // The last task of thread (pid, tid) starting at or before t; without
  // one, the last task of any thread; nullptr when t precedes every task.
  const Timed* Find(int64_t pid, int64_t tid, int64_t t) const {
    auto it = thread_of_.find({pid, tid});
    if (it != thread_of_.end()) {
      if (const Timed* x = LastBy(by_thread_[it->second], t)) return x;
    }
    return LastBy(all_, t);
  }

 private:
  static const Timed* LastBy(const std::vector<Timed>& v, int64_t t) {
    auto next = std::upper_bound(v.begin(), v.end(), t, [](int64_t x, const Timed& p) { return x < p.start; });
    return next == v.begin() ? nullptr : &*(next - 1);
  }
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> thread_of_;
  std::vector<std::vector<Timed>> by_thread_;
  std::vector<Timed> all_;
};

}  // namespace

void AddMemory(Context& ctx) {
  const proto::TraceChunk& ev = ctx.trace.events();
  if (ev.memory_events_size() == 0) return;
  const AnchorIndex anchors(ctx);
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
    if (const Timed* a = anchors.Find(m.pid(), m.tid(), g.measured_ns)) {
      g.anchor = a->task;
      g.anchor_offset_ns = std::max<int64_t>(0, SatSubNs(g.measured_ns, a->start));
    }
    ctx.g.AddMemoryEvent(g);
  }
}

}  // namespace reverie::depgraph::internal
