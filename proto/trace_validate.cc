#include "proto/trace_validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/checked_math.h"

namespace reverie {
namespace {

// Largest group size, rank or world size taken at face value.
constexpr int64_t kMaxRanks = int64_t{1} << 20;
constexpr int64_t kMaxRegistersPerThread = 65536;
constexpr int64_t kMaxSharedMemoryBytes = int64_t{1} << 40;

struct Counts {
  int64_t module_paths = 0;
  int64_t negative = 0;
  int64_t out_of_range = 0;
  int64_t geometry = 0;
  int64_t bytes = 0;
  int64_t device = 0;
  int64_t index = 0;
};

// The times a trace may hold: kMaxDurationNs wide, around the median start
// of its events (so a few wild timestamps cannot move it).
struct Window {
  int64_t lo = -kMaxAbsTimestampNs;
  int64_t hi = kMaxAbsTimestampNs;
};

template <typename Events, typename StartFn>
void CollectStarts(const Events& events, StartFn start, std::vector<int64_t>* out) {
  for (const auto& e : events) out->push_back(ClampTo(start(e), -kMaxAbsTimestampNs, kMaxAbsTimestampNs));
}

Window WindowOf(const proto::TraceChunk& ev) {
  std::vector<int64_t> starts;
  auto start = [](const auto& e) { return e.start_ns(); };
  CollectStarts(ev.api_calls(), start, &starts);
  CollectStarts(ev.gpu_activities(), start, &starts);
  CollectStarts(ev.syncs(), start, &starts);
  CollectStarts(ev.ranges(), start, &starts);
  CollectStarts(ev.steps(), start, &starts);
  CollectStarts(ev.collectives(), start, &starts);
  Window w;
  if (starts.empty()) return w;
  const size_t mid = starts.size() / 2;
  std::nth_element(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(mid), starts.end());
  // |median| <= 2^62 and the half width is 2^49: no overflow.
  w.lo = std::max(-kMaxAbsTimestampNs, starts[mid] - kMaxDurationNs / 2);
  w.hi = std::min(kMaxAbsTimestampNs, starts[mid] + kMaxDurationNs / 2);
  return w;
}

// Clamps one time into the window; true when it had to.
bool FixTime(int64_t* t, const Window& w) {
  if (*t >= w.lo && *t <= w.hi) return false;
  *t = ClampTo(*t, w.lo, w.hi);
  return true;
}

// An event's [start, end]: clamped into the window, end >= start.
template <typename E>
void FixSpan(E* e, const Window& w, Counts* c) {
  int64_t s = e->start_ns(), end = e->end_ns();
  const bool moved_start = FixTime(&s, w);
  const bool moved_end = FixTime(&end, w);
  if (moved_start || moved_end) ++c->out_of_range;
  if (end < s) {
    end = s;
    ++c->negative;
  }
  if (s != e->start_ns()) e->set_start_ns(s);
  if (end != e->end_ns()) e->set_end_ns(end);
}

// v clamped into [0, hi]; counts when it had to.
int64_t FixRange(int64_t v, int64_t hi, int64_t* count) {
  if (v >= 0 && v <= hi) return v;
  ++*count;
  return v < 0 ? 0 : hi;
}

bool GeometryOk(const proto::GpuActivity& a) {
  if (a.grid_x() < 0 || a.grid_y() < 0 || a.grid_z() < 0 || a.block_x() < 0 || a.block_y() < 0 ||
      a.block_z() < 0) {
    return false;
  }
  // Unset y/z count as 1, as the graph builder reads them.
  int64_t blocks = 0, threads = 0;
  if (!CheckedMul(a.grid_x(), std::max(a.grid_y(), 1), &blocks) ||
      !CheckedMul(blocks, std::max(a.grid_z(), 1), &blocks) || blocks > kMaxGridBlocks) {
    return false;
  }
  if (!CheckedMul(a.block_x(), std::max(a.block_y(), 1), &threads) ||
      !CheckedMul(threads, std::max(a.block_z(), 1), &threads) || threads > kMaxBlockThreads) {
    return false;
  }
  return a.registers_per_thread() >= 0 && a.registers_per_thread() <= kMaxRegistersPerThread &&
         a.shared_memory_bytes() >= 0 && a.shared_memory_bytes() <= kMaxSharedMemoryBytes;
}

void FixGpuActivity(proto::GpuActivity* a, const Window& w, Counts* c) {
  FixSpan(a, w, c);
  if (a->bytes() != 0) a->set_bytes(FixRange(a->bytes(), kMaxBytes, &c->bytes));
  if (!GeometryOk(*a)) {
    ++c->geometry;
    a->set_grid_x(0);
    a->set_grid_y(0);
    a->set_grid_z(0);
    a->set_block_x(0);
    a->set_block_y(0);
    a->set_block_z(0);
    a->set_registers_per_thread(0);
    a->set_shared_memory_bytes(0);
  }
}

void FixCollective(proto::Collective* x, const Window& w, Counts* c) {
  FixSpan(x, w, c);
  x->set_bytes(FixRange(x->bytes(), kMaxBytes, &c->bytes));
  x->set_in_nelems(FixRange(x->in_nelems(), kMaxBytes, &c->bytes));
  x->set_out_nelems(FixRange(x->out_nelems(), kMaxBytes, &c->bytes));
  x->set_element_bytes(static_cast<int32_t>(FixRange(x->element_bytes(), 64, &c->bytes)));
  x->set_group_size(static_cast<int32_t>(FixRange(x->group_size(), kMaxRanks, &c->device)));
}

// Signed bytes (a free is negative) clamped into [-hi, hi].
int64_t FixSigned(int64_t v, int64_t hi, int64_t* count) {
  if (v >= -hi && v <= hi) return v;
  ++*count;
  return v < 0 ? -hi : hi;
}

// A memory event's time, sizes and indexes: a range or allocation index that
// points nowhere (or, for `alloc`, not at an earlier allocation) is none.
void FixMemoryEvents(proto::TraceChunk* ev, const Window& w, Counts* c) {
  const int ranges = ev->ranges_size();
  auto& mem = *ev->mutable_memory_events();
  for (int i = 0; i < mem.size(); ++i) {
    proto::MemoryEvent& m = mem[i];
    int64_t t = m.time_ns();
    if (FixTime(&t, w)) {
      ++c->out_of_range;
      m.set_time_ns(t);
    }
    m.set_bytes(FixSigned(m.bytes(), kMaxBytes, &c->bytes));
    if (m.has_total_allocated()) m.set_total_allocated(FixRange(m.total_allocated(), kMaxBytes, &c->bytes));
    if (m.has_total_reserved()) m.set_total_reserved(FixRange(m.total_reserved(), kMaxBytes, &c->bytes));
    if (m.range() > static_cast<uint32_t>(ranges)) {
      ++c->index;
      m.set_range(0);
    }
    if (m.alloc() != 0 && (m.alloc() > static_cast<uint32_t>(i) || mem[static_cast<int>(m.alloc()) - 1].bytes() <= 0)) {
      ++c->index;
      m.set_alloc(0);
    }
  }
}

// A GPU property read as an integer: [0, hi], else unknown (0).
template <typename T>
T Property(T v, int64_t hi, int64_t* count) {
  if (v >= 0 && static_cast<int64_t>(v) <= hi) return v;
  ++*count;
  return 0;
}

void FixHeader(proto::TraceHeader* h, Counts* c) {
  for (proto::Device& d : *h->mutable_devices()) {
    constexpr int64_t kCount = int64_t{1} << 24;  // SMs, threads, registers...
    constexpr int64_t kLarge = int64_t{1} << 50;  // bytes, kHz
    d.set_sm_count(Property(d.sm_count(), kCount, &c->device));
    d.set_compute_major(Property(d.compute_major(), 1000, &c->device));
    d.set_compute_minor(Property(d.compute_minor(), 1000, &c->device));
    d.set_total_memory_bytes(Property(d.total_memory_bytes(), kLarge, &c->device));
    d.set_sm_clock_khz(Property(d.sm_clock_khz(), kLarge, &c->device));
    d.set_memory_clock_khz(Property(d.memory_clock_khz(), kLarge, &c->device));
    d.set_memory_bus_width_bits(Property(d.memory_bus_width_bits(), kCount, &c->device));
    d.set_max_threads_per_sm(Property(d.max_threads_per_sm(), kCount, &c->device));
    d.set_registers_per_sm(Property(d.registers_per_sm(), kCount, &c->device));
    d.set_shared_memory_per_sm_bytes(Property(d.shared_memory_per_sm_bytes(), kLarge, &c->device));
    d.set_warp_size(Property(d.warp_size(), 1024, &c->device));
    const double bw = d.memory_bandwidth_gbps();
    if (!std::isfinite(bw) || bw < 0 || bw > 1e9) {
      ++c->device;
      d.set_memory_bandwidth_gbps(0);
    }
  }
  if (h->has_distributed()) {
    proto::DistributedInfo* di = h->mutable_distributed();
    di->set_world_size(Property(di->world_size(), kMaxRanks, &c->device));
    di->set_rank(Property(di->rank(), kMaxRanks, &c->device));
    for (proto::ProcessGroup& g : *di->mutable_groups()) {
      g.set_size(Property(g.size(), kMaxRanks, &c->device));
    }
  }
}

// Every range's module path within kMaxModulePathDepth / kMaxModulePathBytes
// (a .pb holds whatever its writer put there).
void FixModulePaths(Trace* trace, Counts* c) {
  absl::flat_hash_map<uint32_t, uint32_t> within;  // a path's id -> its capped path's
  for (proto::Range& r : *trace->events().mutable_ranges()) {
    const uint32_t sid = r.module_path_sid();
    if (sid == 0) continue;
    auto [it, fresh] = within.try_emplace(sid, sid);
    if (fresh) {
      const std::string_view path = trace->String(sid);
      const std::string_view cut = CapModulePath(path);
      if (cut.size() != path.size()) it->second = trace->Intern(std::string(cut));
    }
    if (it->second != sid) {
      r.set_module_path_sid(it->second);
      ++c->module_paths;
    }
  }
}

}  // namespace

std::string_view CapModulePath(std::string_view path) {
  size_t end = std::min(path.size(), kMaxModulePathBytes);
  int dots = 0;
  for (size_t i = 0; i < end; ++i) {
    if (path[i] == '.' && ++dots == kMaxModulePathDepth) {
      end = i;
      break;
    }
  }
  if (end == path.size()) return path;
  if (path[end] != '.') {
    // Cut inside a level: end at the level before it, or, for a first
    // level too long by itself, between two UTF-8 characters (a .pb
    // string must stay valid UTF-8).
    const size_t dot = path.rfind('.', end);
    if (dot != std::string_view::npos && dot > 0) {
      end = dot;
    } else {
      while (end > 0 && (static_cast<unsigned char>(path[end]) & 0xC0) == 0x80) --end;
    }
  }
  return path.substr(0, end);
}

void ValidateTrace(Trace* trace) {
  proto::TraceChunk& ev = trace->events();
  const Window w = WindowOf(ev);
  Counts c;
  for (proto::ApiCall& a : *ev.mutable_api_calls()) FixSpan(&a, w, &c);
  for (proto::GpuActivity& a : *ev.mutable_gpu_activities()) FixGpuActivity(&a, w, &c);
  for (proto::Sync& s : *ev.mutable_syncs()) FixSpan(&s, w, &c);
  for (proto::Range& r : *ev.mutable_ranges()) FixSpan(&r, w, &c);
  for (proto::Step& i : *ev.mutable_steps()) FixSpan(&i, w, &c);
  for (proto::Collective& x : *ev.mutable_collectives()) FixCollective(&x, w, &c);
  for (proto::Flow& f : *ev.mutable_flows()) {
    int64_t from = f.from_ns(), to = f.to_ns();
    if (FixTime(&from, w) | FixTime(&to, w)) {
      ++c.out_of_range;
      f.set_from_ns(from);
      f.set_to_ns(to);
    }
  }
  for (proto::GradientBucket& b : *ev.mutable_gradient_buckets()) {
    b.set_bytes(FixRange(b.bytes(), kMaxBytes, &c.bytes));
  }
  for (proto::Parameter& p : *ev.mutable_parameters()) {
    p.set_bytes(FixRange(p.bytes(), kMaxBytes, &c.bytes));
  }
  FixMemoryEvents(&ev, w, &c);
  FixHeader(&trace->header(), &c);
  FixModulePaths(trace, &c);
  if (c.module_paths > 0) trace->AddCounter(TraceCounter::module_path_out_of_range, c.module_paths);
  if (c.negative > 0) trace->AddCounter(TraceCounter::negative_duration, c.negative);
  if (c.out_of_range > 0) trace->AddCounter(TraceCounter::time_out_of_range, c.out_of_range);
  if (c.geometry > 0) trace->AddCounter(TraceCounter::kernel_geometry_out_of_range, c.geometry);
  if (c.bytes > 0) trace->AddCounter(TraceCounter::bytes_out_of_range, c.bytes);
  if (c.device > 0) trace->AddCounter(TraceCounter::device_property_out_of_range, c.device);
  if (c.index > 0) trace->AddCounter(TraceCounter::memory_index_out_of_range, c.index);
}

}  // namespace reverie
