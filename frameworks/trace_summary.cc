#include "frameworks/trace_summary.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace reverie {

namespace {

// The time covered by the union of [start, end) intervals.
int64_t UnionNs(std::vector<std::pair<int64_t, int64_t>> intervals) {
  if (intervals.empty()) return 0;
  std::sort(intervals.begin(), intervals.end());
  int64_t busy = 0;
  int64_t cur_start = intervals[0].first, cur_end = intervals[0].second;
  for (const auto& [start, end] : intervals) {
    if (start > cur_end) {
      busy += cur_end - cur_start;
      cur_start = start;
      cur_end = end;
    } else {
      cur_end = std::max(cur_end, end);
    }
  }
  return busy + cur_end - cur_start;
}

// Ranges by kind, the layers they name, and the threads they ran on.
void CountRanges(const proto::TraceChunk& ev, absl::flat_hash_set<std::pair<int64_t, int64_t>>* threads,
                 TraceSummary* s) {
  absl::flat_hash_set<uint32_t> layers;
  for (const proto::Range& r : ev.ranges()) {
    ++s->ranges;
    switch (r.kind()) {
      case proto::Range::CPU_OP: ++s->cpu_op_ranges; break;
      case proto::Range::USER_ANNOTATION: ++s->annotation_ranges; break;
      case proto::Range::LAYER:
        ++s->layer_ranges;
        if (r.module_path_sid() != 0) layers.insert(r.module_path_sid());
        break;
      case proto::Range::GPU_ANNOTATION: ++s->gpu_annotation_ranges; break;
      default: break;
    }
    if (r.kind() != proto::Range::GPU_ANNOTATION) threads->insert({r.pid(), r.tid()});
  }
  s->layers = static_cast<int64_t>(layers.size());
}

// The importer's non-zero counters: declared info counters are data reverie
// does not use; undeclared names (another version's file) are anomalies.
void ListCounters(const proto::TraceChunk& ev, TraceSummary* s) {
  for (const proto::Counter& c : ev.counters()) {
    if (c.value() == 0) continue;
    auto& list = IsTraceAnomaly(c.name()) ? s->anomalies : s->skipped;
    list.emplace_back(c.name(), c.value());
  }
  std::sort(s->anomalies.begin(), s->anomalies.end());
  std::sort(s->skipped.begin(), s->skipped.end());
}

}  // namespace

TraceSummary Summarize(const Trace& trace, size_t top_kernels) {
  TraceSummary s;
  const proto::TraceChunk& ev = trace.events();
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();

  absl::flat_hash_set<std::pair<int64_t, int64_t>> threads;
  for (const proto::ApiCall& a : ev.api_calls()) {
    (a.kind() == proto::ApiCall::DRIVER ? s.driver_calls : s.runtime_calls)++;
    threads.insert({a.pid(), a.tid()});
    first = std::min(first, a.start_ns());
    last = std::max(last, a.end_ns());
  }

  absl::flat_hash_set<std::pair<int32_t, int64_t>> streams;
  absl::flat_hash_set<int32_t> devices;
  absl::flat_hash_map<uint32_t, KernelStat> by_name;
  std::vector<std::pair<int64_t, int64_t>> intervals;
  intervals.reserve(ev.gpu_activities_size());
  for (const proto::GpuActivity& g : ev.gpu_activities()) {
    switch (g.kind()) {
      case proto::GpuActivity::KERNEL: {
        ++s.kernels;
        if (g.grid_x() > 0 && g.block_x() > 0) ++s.kernels_with_geometry;
        KernelStat& k = by_name[g.name_sid()];
        ++k.count;
        k.total_ns += g.end_ns() - g.start_ns();
        s.kernel_total_ns += g.end_ns() - g.start_ns();
        break;
      }
      case proto::GpuActivity::MEMCPY: ++s.memcpys; break;
      case proto::GpuActivity::MEMSET: ++s.memsets; break;
      default: break;
    }
    streams.insert({g.device(), g.stream()});
    devices.insert(g.device());
    intervals.emplace_back(g.start_ns(), g.end_ns());
    first = std::min(first, g.start_ns());
    last = std::max(last, g.end_ns());
  }
  s.syncs = ev.syncs_size();
  s.event_records = ev.event_records_size();
  s.collectives = ev.collectives_size();
  s.flows = ev.flows_size();
  s.streams = static_cast<int64_t>(streams.size());
  s.devices = static_cast<int64_t>(devices.size());

  CountRanges(ev, &threads, &s);
  s.threads = static_cast<int64_t>(threads.size());

  for (const proto::Step& it : ev.steps()) {
    s.steps.push_back({std::string(trace.String(it.name_sid())), it.index(),
                            it.end_ns() - it.start_ns()});
  }

  for (auto& [sid, k] : by_name) {
    k.name = std::string(trace.String(sid));
    s.top_kernels.push_back(std::move(k));
  }
  std::sort(s.top_kernels.begin(), s.top_kernels.end(),
            [](const KernelStat& a, const KernelStat& b) {
              if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
              return a.name < b.name;
            });
  if (s.top_kernels.size() > top_kernels) s.top_kernels.resize(top_kernels);

  s.has_gpu_events = !intervals.empty();
  s.gpu_busy_ns = UnionNs(std::move(intervals));
  if (last > first) s.span_ns = last - first;
  s.gpu_busy_fraction =
      s.span_ns > 0 ? static_cast<double>(s.gpu_busy_ns) / static_cast<double>(s.span_ns) : 0.0;

  ListCounters(ev, &s);
  return s;
}

}  // namespace reverie
