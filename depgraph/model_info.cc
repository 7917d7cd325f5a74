#include "depgraph/model_info.h"

#include <algorithm>

namespace reverie::depgraph {

ModelInfo ModelInfoFromTrace(const Trace& trace) {
  ModelInfo info;
  const proto::TraceChunk& ev = trace.events();
  const auto in_range = [&](uint32_t sid) { return sid < trace.string_count(); };
  for (const proto::Parameter& p : ev.parameters()) {
    if (p.bytes() < 0 || !in_range(p.name_sid()) || !in_range(p.layer_sid())) {
      ++info.skipped;
      continue;
    }
    info.parameters.push_back({std::string(trace.String(p.name_sid())),
                               std::string(trace.String(p.layer_sid())), p.bytes()});
  }
  for (const proto::GradientBucket& b : ev.gradient_buckets()) {
    if (b.bytes() < 0) {
      ++info.skipped;
      continue;
    }
    BucketInfo out;
    out.index = b.index();
    out.bytes = b.bytes();
    for (uint32_t sid : b.parameter_sids()) out.parameters.emplace_back(trace.String(sid));
    for (uint32_t sid : b.layer_sids()) out.layers.emplace_back(trace.String(sid));
    info.buckets.push_back(std::move(out));
  }
  std::stable_sort(info.buckets.begin(), info.buckets.end(),
                   [](const BucketInfo& a, const BucketInfo& b) { return a.index < b.index; });
  for (const proto::Collective& c : ev.collectives()) {
    if (c.bytes() < 0 || !in_range(c.name_sid())) {
      ++info.skipped;
      continue;
    }
    info.collectives.push_back({std::string(trace.String(c.name_sid())), c.bytes(),
                                c.group_size(), c.start_ns(), c.end_ns(), c.pid(), c.tid()});
  }
  std::stable_sort(info.collectives.begin(), info.collectives.end(),
                   [](const CollectiveInfo& a, const CollectiveInfo& b) { return a.start_ns < b.start_ns; });
  if (trace.header().has_distributed()) info.world_size = trace.header().distributed().world_size();
  for (const proto::Device& d : trace.header().devices()) {
    DeviceInfo& o = info.devices.emplace_back();
    o.id = d.id();
    o.name = d.name();
    o.vendor = d.vendor();
    o.sm_count = d.sm_count();
    o.compute_major = d.compute_major();
    o.compute_minor = d.compute_minor();
    o.total_memory_bytes = d.total_memory_bytes();
    o.max_threads_per_sm = d.max_threads_per_sm();
    o.registers_per_sm = d.registers_per_sm();
    o.shared_memory_per_sm_bytes = d.shared_memory_per_sm_bytes();
  }
  return info;
}

}  // namespace reverie::depgraph
