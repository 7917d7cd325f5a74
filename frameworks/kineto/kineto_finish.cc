// KinetoTraceBuilder's whole-trace steps (everything Finish() runs except
// range inference, which lives in kineto_ranges.cc).
#include <algorithm>
#include <iterator>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "base/sv.h"
#include "frameworks/kineto/kineto_builder.h"

namespace reverie::kineto {
namespace {

// Which runtime/driver calls must produce GPU activity: 1 = kernel launch,
// 2 = memcpy / memset, 0 = anything else.
int GpuWorkKind(std::string_view n) {
  if (absl::StrContains(Sv(n), "Launch")) return 1;  // cudaLaunchKernel, cuLaunchKernel, hip*, cudaGraphLaunch
  for (std::string_view p : {"cudaMemcpy", "cudaMemset", "hipMemcpy", "hipMemset", "cuMemcpy",
                             "cuMemset"}) {
    if (absl::StartsWith(Sv(n), Sv(p))) return 2;
  }
  return 0;
}

bool LooksAmd(std::string_view device_name) {
  return absl::StrContains(Sv(device_name), "AMD") ||
         absl::StrContains(Sv(device_name), "Radeon") ||
         absl::StrContains(Sv(device_name), "Instinct");
}

}  // namespace

void KinetoTraceBuilder::CheckCorrelations() {
  proto::TraceChunk& ev = trace_.events();
  api_by_correlation_.reserve(ev.api_calls_size());
  for (int i = 0; i < ev.api_calls_size(); ++i) {
    const uint64_t corr = ev.api_calls(i).correlation_id();
    if (corr == 0) continue;
    if (!api_by_correlation_.emplace(corr, i).second) trace_.AddCounter(TraceCounter::duplicate_correlation);
  }
  std::vector<uint8_t> launched(ev.api_calls_size(), 0);
  for (const proto::GpuActivity& g : ev.gpu_activities()) {
    if (g.correlation_id() == 0) continue;  // counted when read
    auto it = api_by_correlation_.find(g.correlation_id());
    if (it == api_by_correlation_.end()) {
      trace_.AddCounter(TraceCounter::unmatched_correlation);
      continue;
    }
    launched[it->second] = 1;
    if (g.start_ns() < ev.api_calls(it->second).start_ns()) {
      trace_.AddCounter(TraceCounter::gpu_starts_before_launch);
    }
  }
  absl::flat_hash_map<uint32_t, int> work_kind;  // name sid -> GpuWorkKind
  for (int i = 0; i < ev.api_calls_size(); ++i) {
    if (launched[i]) continue;
    const uint32_t sid = ev.api_calls(i).name_sid();
    auto [it, inserted] = work_kind.try_emplace(sid, 0);
    if (inserted) it->second = GpuWorkKind(trace_.String(sid));
    if (it->second == 1) trace_.AddCounter(TraceCounter::launch_without_kernel);
    if (it->second == 2) trace_.AddCounter(TraceCounter::memory_call_without_gpu_activity);
  }
}

void KinetoTraceBuilder::ResolveSyncThreads() {
  // Kineto puts sync records on the GPU row; the thread that blocked is the
  // one of the runtime call with the same correlation id.
  for (proto::Sync& s : *trace_.events().mutable_syncs()) {
    auto it = api_by_correlation_.find(s.correlation_id());
    if (s.correlation_id() == 0 || it == api_by_correlation_.end()) {
      trace_.AddCounter(TraceCounter::sync_without_api_call);
      continue;
    }
    const proto::ApiCall& a = trace_.events().api_calls(it->second);
    s.set_pid(a.pid());
    s.set_tid(a.tid());
  }
}

std::vector<FwdBwdLink> KinetoTraceBuilder::BuildFlows() {
  std::vector<std::pair<uint64_t, FwdBwdLink>> paired;
  paired.reserve(fwdbwd_.size());
  for (const auto& [id, ends] : fwdbwd_) {
    if (!ends.first.seen || !ends.second.seen) {
      trace_.AddCounter(TraceCounter::unmatched_flow);
      continue;
    }
    paired.push_back(
        {id, FwdBwdLink{ends.first.tid, ends.first.ts_ns, ends.second.tid, ends.second.ts_ns}});
  }
  std::sort(paired.begin(), paired.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<FwdBwdLink> links;
  links.reserve(paired.size());
  for (const auto& [id, link] : paired) {
    proto::Flow* f = trace_.events().add_flows();
    f->set_kind(proto::Flow::FWD_BWD);
    f->set_id(id);
    f->set_from_tid(link.from_tid);
    f->set_from_ns(link.from_ns);
    f->set_to_tid(link.to_tid);
    f->set_to_ns(link.to_ns);
    links.push_back(link);
  }
  fwdbwd_.clear();
  return links;
}

void KinetoTraceBuilder::BuildCollectivesFromAnnotations() {
  // Older traces have "nccl:all_reduce" annotations with a record_param_comms
  // op that carries no args; newer ones nest a record_param_comms with the
  // sizes inside, or (PyTorch 2.x, HTA's nccl_data) the annotation inside the
  // sized record_param_comms. Take the annotation only when no sized
  // collective on its thread lies in it or around it, so each call is
  // counted once.
  proto::TraceChunk& ev = trace_.events();
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // pid, tid, start, end
  std::vector<Key> sized;
  sized.reserve(ev.collectives_size());
  for (const proto::Collective& c : ev.collectives()) {
    sized.emplace_back(c.pid(), c.tid(), c.start_ns(), c.end_ns());
  }
  std::sort(sized.begin(), sized.end());
  auto same_thread = [](const Key& k, const CommAnnotation& a) {
    return std::get<0>(k) == a.pid && std::get<1>(k) == a.tid;
  };
  for (const CommAnnotation& a : comm_annotations_) {
    auto it = std::lower_bound(sized.begin(), sized.end(), Key{a.pid, a.tid, a.start_ns, 0});
    if (it != sized.end() && same_thread(*it, a) && std::get<2>(*it) <= a.end_ns) continue;
    if (it != sized.begin() && same_thread(*std::prev(it), a) &&
        std::get<3>(*std::prev(it)) >= a.end_ns) {
      continue;  // the latest sized call starting before the annotation encloses it
    }
    proto::Collective* c = ev.add_collectives();
    c->set_name_sid(a.name_sid);
    c->set_pid(a.pid);
    c->set_tid(a.tid);
    c->set_start_ns(a.start_ns);
    c->set_end_ns(a.end_ns);
    c->set_external_id(a.external_id);
  }
  comm_annotations_.clear();
}

void KinetoTraceBuilder::BuildThreadsAndProcesses() {
  std::vector<std::pair<int64_t, int64_t>> threads;
  threads.reserve(cpu_threads_.size());
  absl::flat_hash_set<int64_t> pids;
  for (const auto& [key, unused] : cpu_threads_) {
    threads.push_back(key);
    pids.insert(key.first);
  }
  std::sort(threads.begin(), threads.end());
  for (const auto& [pid, tid] : threads) {
    proto::Thread* t = trace_.events().add_threads();
    t->set_pid(pid);
    t->set_tid(tid);
    auto it = thread_names_.find(std::make_pair(pid, tid));
    if (it != thread_names_.end()) t->set_name(std::string(trace_.String(it->second)));
  }
  for (const auto& [pid, unused] : processes_) pids.insert(pid);
  std::vector<int64_t> sorted(pids.begin(), pids.end());
  std::sort(sorted.begin(), sorted.end());
  for (int64_t pid : sorted) {
    proto::Process* p = trace_.events().add_processes();
    p->set_pid(pid);
    auto it = processes_.find(pid);
    if (it != processes_.end()) {
      p->set_name(std::string(trace_.String(it->second.name.value_or(0))));
      p->set_label(std::string(trace_.String(it->second.label.value_or(0))));
    }
  }
}

void KinetoTraceBuilder::BuildDevices() {
  proto::TraceHeader& h = header();
  const bool amd_runtime = saw_hip_api_ || h.metadata().contains("hip_runtime_version") ||
                           h.metadata().contains("roctracer_version");
  absl::flat_hash_set<int32_t> known;
  for (proto::Device& d : *h.mutable_devices()) {
    known.insert(d.id());
    if (d.vendor().empty()) {
      d.set_vendor(LooksAmd(d.name()) || amd_runtime ? "amd" : "nvidia");
    }
    if (d.memory_bandwidth_gbps() == 0 && d.memory_clock_khz() > 0 &&
        d.memory_bus_width_bits() > 0) {
      // Double data rate: two transfers per memory clock.
      d.set_memory_bandwidth_gbps(2.0 * static_cast<double>(d.memory_clock_khz()) * 1e3 *
                                  d.memory_bus_width_bits() / 8.0 / 1e9);
    }
  }
  // GPUs that ran work but are missing from deviceProperties.
  std::vector<int32_t> extra;
  const int32_t only_id = h.devices_size() == 1 ? h.devices(0).id() : -1;
  bool only_ran = false;  // whether the one listed GPU ran work under its own id
  for (const proto::GpuActivity& g : trace_.events().gpu_activities()) {
    only_ran |= g.device() == only_id;  // read only when one GPU is listed
    if (known.insert(g.device()).second) extra.push_back(g.device());
  }
  std::sort(extra.begin(), extra.end());
  // A process that saw one GPU lists one in deviceProperties, numbered as
  // the process saw it (HIP's ordinal 0), while roctracer numbers its work
  // by the GPU's index in the machine (TraceLens' MI300X traces: kernels on
  // device 2). Work on one other id then ran on that GPU: the device takes
  // its properties (its own id kept), and a counter says so.
  const bool one_listed =
      h.devices_size() == 1 && extra.size() == 1 && !h.devices(0).name().empty() && !only_ran;
  const proto::Device listed = one_listed ? h.devices(0) : proto::Device();
  for (int32_t id : extra) {
    proto::Device* d = h.add_devices();
    if (one_listed) {
      *d = listed;
      trace_.AddCounter(TraceCounter::device_numbered_apart);
    }
    d->set_id(id);
    if (d->vendor().empty()) d->set_vendor(amd_runtime ? "amd" : "nvidia");
  }
}

}  // namespace reverie::kineto
