#include "frameworks/kineto/kineto_builder.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "base/parallel.h"
#include "base/sv.h"
#include "frameworks/kineto/kineto_memory.h"

namespace reverie::kineto {
namespace {

struct CategoryName {
  std::string_view name;
  Category cat;
};

// Most frequent first: the lookup runs once per event.
constexpr CategoryName kCategories[] = {
    {"cpu_op", Category::kCpuOp},
    {"ac2g", Category::kAc2g},
    {"python_function", Category::kPythonFunction},
    {"cuda_runtime", Category::kCudaRuntime},
    {"kernel", Category::kKernel},
    {"cpu_instant_event", Category::kCpuInstantEvent},
    {"gpu_memcpy", Category::kGpuMemcpy},
    {"gpu_memset", Category::kGpuMemset},
    {"fwdbwd", Category::kFwdBwd},
    {"user_annotation", Category::kUserAnnotation},
    {"gpu_user_annotation", Category::kGpuUserAnnotation},
    {"cuda_driver", Category::kCudaDriver},
    {"cuda_sync", Category::kCudaSync},
    {"cuda_event", Category::kCudaEvent},
    // 2021 schema.
    {"Operator", Category::kCpuOp},
    {"Runtime", Category::kCudaRuntime},
    {"Kernel", Category::kKernel},
    {"Memcpy", Category::kGpuMemcpy},
    {"Memset", Category::kGpuMemset},
    {"async", Category::kAc2g},
    {"Driver", Category::kCudaDriver},
    // Known, but nothing in the trace model holds them.
    {"overhead", Category::kOverhead},
    {"Trace", Category::kTraceSpan},
    {"cuda_profiler_range", Category::kCudaProfilerRange},
    {"collective_comm", Category::kCollectiveComm},
    {"mtia_runtime", Category::kOtherKnown},
    {"mtia_ccp_events", Category::kOtherKnown},
    {"glow_runtime", Category::kOtherKnown},
    {"xpu_runtime", Category::kOtherKnown},
    {"privateuse1_runtime", Category::kOtherKnown},
    {"privateuse1_driver", Category::kOtherKnown},
};


proto::GpuActivity::CopyKind CopyKindOf(std::string_view name, std::string_view arg) {
  struct K {
    std::string_view text;
    proto::GpuActivity::CopyKind kind;
  };
  static constexpr K kKinds[] = {{"HtoD", proto::GpuActivity::HTOD},
                                 {"DtoH", proto::GpuActivity::DTOH},
                                 {"DtoD", proto::GpuActivity::DTOD},
                                 {"HtoH", proto::GpuActivity::HTOH},
                                 {"PtoP", proto::GpuActivity::PTOP}};
  for (const K& k : kKinds) {
    if (absl::StrContains(Sv(name), Sv(k.text))) return k.kind;
  }
  for (const K& k : kKinds) {
    if (arg == k.text) return k.kind;
  }
  return proto::GpuActivity::COPY_UNKNOWN;
}

proto::Sync::Kind SyncKindOf(std::string_view kind) {
  if (kind == "Stream Sync") return proto::Sync::STREAM;
  if (kind == "Context Sync") return proto::Sync::CONTEXT;
  if (kind == "Event Sync") return proto::Sync::EVENT;
  if (kind == "Stream Wait Event") return proto::Sync::STREAM_WAIT_EVENT;
  if (kind == "Device Sync") return proto::Sync::DEVICE;
  return proto::Sync::KIND_UNSPECIFIED;
}

// Bytes per element of a PyTorch dtype name as Kineto writes it.
int32_t ElementBytes(std::string_view dtype) {
  if (dtype == "Float" || dtype == "Int" || dtype == "UInt32" || dtype == "ComplexHalf") return 4;
  if (dtype == "Double" || dtype == "Long" || dtype == "ComplexFloat" || dtype == "UInt64") {
    return 8;
  }
  if (dtype == "Half" || dtype == "BFloat16" || dtype == "Short" || dtype == "UInt16") return 2;
  if (dtype == "Byte" || dtype == "Char" || dtype == "Bool" || absl::StartsWith(Sv(dtype), "Float8")) {
    return 1;
  }
  if (dtype == "ComplexDouble") return 16;
  return 0;
}

}  // namespace

Category CategoryFromName(std::string_view cat) {
  for (const CategoryName& c : kCategories) {
    if (c.name == cat) return c.cat;
  }
  return cat.empty() ? Category::kNone : Category::kUnknown;
}

TraceCounter SkippedCounter(Category c) {
  switch (c) {
    case Category::kCpuInstantEvent: return TraceCounter::skipped_cpu_instant_event;
    case Category::kOverhead: return TraceCounter::skipped_overhead;
    case Category::kTraceSpan: return TraceCounter::skipped_profiler_span;
    case Category::kCudaProfilerRange: return TraceCounter::skipped_cuda_profiler_range;
    case Category::kCollectiveComm: return TraceCounter::skipped_collective_comm;
    default: return TraceCounter::skipped_other_category;
  }
}

KinetoTraceBuilder::KinetoTraceBuilder(const std::string& source_path)
    : KinetoTraceBuilder(source_path, Trace()) {}

KinetoTraceBuilder::KinetoTraceBuilder(const std::string& source_path, Trace trace)
    : trace_(std::move(trace)) {
  header().set_producer(kKinetoProducer);
  header().set_framework("pytorch");
  header().set_source_path(source_path);
}

void KinetoTraceBuilder::AddEvent(const RawEvent& e) {
  ++events_seen_;
  switch (e.ph) {
    case 'X':
      AddComplete(e);
      return;
    case 'B':
      saw_begin_end_ = true;
      open_begins_[{e.pid, e.tid}].push_back(KeepStrings(e));
      return;
    case 'E': {
      saw_begin_end_ = true;
      auto it = open_begins_.find(std::make_pair(e.pid, e.tid));
      if (it == open_begins_.end() || it->second.empty()) {
        trace_.AddCounter(TraceCounter::unbalanced_annotation);
        return;
      }
      RawEvent begin = it->second.back();
      it->second.pop_back();
      begin.has_dur = e.has_ts && begin.has_ts;
      begin.dur_ns = e.ts_ns - begin.ts_ns;
      AddComplete(begin);
      return;
    }
    case 'M':
      AddMetadata(e);
      return;
    case 's':
    case 'f':
    case 't':
      if (e.cat == Category::kFwdBwd) {
        AddFlowEnd(e);
      } else if (e.cat != Category::kAc2g) {
        // ac2g flows repeat args.correlation; other flows have no meaning here.
        trace_.AddCounter(TraceCounter::skipped_flow);
      }
      return;
    case 'i':
    case 'I':
      if (e.name == "[memory]" && (e.cat == Category::kCpuInstantEvent || e.cat == Category::kNone)) {
        AddMemory(e);
        return;
      }
      trace_.AddCounter(e.cat == Category::kCpuInstantEvent ? TraceCounter::skipped_cpu_instant_event
                                                             : TraceCounter::skipped_instant_event);
      return;
    case 0:
      trace_.AddCounter(TraceCounter::missing_field);
      return;
    default:
      trace_.AddCounter(TraceCounter::unsupported_event_phase);
      return;
  }
}

void KinetoTraceBuilder::ExpectEvents(size_t n) {
  // Ranges are typically a quarter to a half of a trace's events; the
  // reservation is address space until used (HugePageAllocator).
  ranges_.reserve(n / 2);
}

void KinetoTraceBuilder::EndOfEvents() {
  for (auto& [thread, begins] : open_begins_) {
    if (!begins.empty()) trace_.AddCounter(TraceCounter::unbalanced_annotation, static_cast<int64_t>(begins.size()));
  }
  open_begins_.clear();
  kept_strings_.clear();
}

RawEvent KinetoTraceBuilder::KeepStrings(const RawEvent& e) {
  RawEvent kept = e;
  for (std::string_view* s : {&kept.cat_name, &kept.name, &kept.copy_kind_arg, &kept.sync_kind,
                              &kept.collective_name, &kept.dtype, &kept.process_group_name,
                              &kept.meta_name, &kept.meta_labels}) {
    if (!s->empty()) *s = kept_strings_.emplace_back(*s);
  }
  return kept;
}

void KinetoTraceBuilder::AddComplete(const RawEvent& e) {
  if (!e.has_ts || e.bad_number) {
    trace_.AddCounter(TraceCounter::missing_field);
    return;
  }
  int64_t dur = e.dur_ns;
  if (!e.has_dur) {
    trace_.AddCounter(TraceCounter::missing_field);
    dur = 0;
  } else if (dur < 0) {
    trace_.AddCounter(TraceCounter::negative_duration);
    dur = 0;
  }
  const int64_t end = e.ts_ns + dur;
  if (!e.has_name &&
      (e.cat != Category::kNone && e.cat != Category::kUnknown && e.cat != Category::kTraceSpan)) {
    trace_.AddCounter(TraceCounter::missing_field);
  }
  switch (e.cat) {
    case Category::kCudaRuntime:
    case Category::kCudaDriver:
      AddApiCall(e, end);
      return;
    case Category::kKernel:
    case Category::kGpuMemcpy:
    case Category::kGpuMemset:
      AddGpuActivity(e, end);
      return;
    case Category::kCudaSync:
      AddSync(e, end);
      return;
    case Category::kCudaEvent:
      AddEventRecord(e);
      return;
    case Category::kCpuOp:
      AddRange(e, end, proto::Range::CPU_OP);
      if (!e.collective_name.empty()) AddCollectiveFromArgs(e, end);
      return;
    case Category::kUserAnnotation:
      AddRange(e, end, proto::Range::USER_ANNOTATION);
      return;
    case Category::kGpuUserAnnotation:
      AddRange(e, end, proto::Range::GPU_ANNOTATION);
      return;
    case Category::kPythonFunction:
      if (e.name.substr(0, kModulePrefix.size()) == kModulePrefix) {
        AddRange(e, end, proto::Range::LAYER);
      } else {
        trace_.AddCounter(TraceCounter::skipped_python_function);
      }
      return;
    case Category::kCpuInstantEvent:
    case Category::kOverhead:
    case Category::kTraceSpan:
    case Category::kCudaProfilerRange:
    case Category::kCollectiveComm:
    case Category::kOtherKnown:
      trace_.AddCounter(SkippedCounter(e.cat));
      return;
    default:
      trace_.AddCounter(TraceCounter::unknown_category);
      return;
  }
}

void KinetoTraceBuilder::NoteCpuThread(int64_t pid, int64_t tid) {
  cpu_threads_.try_emplace(std::make_pair(pid, tid), 0);
}

void KinetoTraceBuilder::AddApiCall(const RawEvent& e, int64_t end_ns) {
  proto::ApiCall* a = trace_.events().add_api_calls();
  a->set_kind(e.cat == Category::kCudaDriver ? proto::ApiCall::DRIVER : proto::ApiCall::RUNTIME);
  a->set_name_sid(trace_.Intern(e.name));
  a->set_pid(e.pid);
  a->set_tid(e.tid);
  a->set_start_ns(e.ts_ns);
  a->set_end_ns(end_ns);
  a->set_correlation_id(e.correlation);
  a->set_external_id(e.external_id);
  a->set_cbid(e.cbid);
  if (e.name.substr(0, 3) == "hip") saw_hip_api_ = true;
  NoteCpuThread(e.pid, e.tid);
}

void KinetoTraceBuilder::AddGpuActivity(const RawEvent& e, int64_t end_ns) {
  proto::GpuActivity* g = trace_.events().add_gpu_activities();
  g->set_kind(e.cat == Category::kKernel      ? proto::GpuActivity::KERNEL
              : e.cat == Category::kGpuMemcpy ? proto::GpuActivity::MEMCPY
                                              : proto::GpuActivity::MEMSET);
  g->set_name_sid(trace_.Intern(e.name));
  g->set_device(e.has_device ? e.device : static_cast<int32_t>(e.pid));
  g->set_stream(e.has_stream ? e.stream : e.tid);
  g->set_start_ns(e.ts_ns);
  g->set_end_ns(end_ns);
  g->set_correlation_id(e.correlation);
  g->set_external_id(e.external_id);
  g->set_context(e.context);
  if (e.cat == Category::kKernel) {
    g->set_grid_x(e.grid[0]);
    g->set_grid_y(e.grid[1]);
    g->set_grid_z(e.grid[2]);
    g->set_block_x(e.block[0]);
    g->set_block_y(e.block[1]);
    g->set_block_z(e.block[2]);
    g->set_registers_per_thread(e.registers_per_thread);
    g->set_shared_memory_bytes(e.shared_memory);
  } else {
    g->set_bytes(e.bytes);
    if (e.cat == Category::kGpuMemcpy) g->set_copy_kind(CopyKindOf(e.name, e.copy_kind_arg));
  }
  g->set_graph_id(e.graph_id);
  if (e.correlation == 0) trace_.AddCounter(TraceCounter::gpu_activity_without_correlation);
}

void KinetoTraceBuilder::AddSync(const RawEvent& e, int64_t end_ns) {
  proto::Sync* s = trace_.events().add_syncs();
  const proto::Sync::Kind kind = SyncKindOf(e.sync_kind.empty() ? e.name : e.sync_kind);
  if (kind == proto::Sync::KIND_UNSPECIFIED) trace_.AddCounter(TraceCounter::unknown_sync_kind);
  s->set_kind(kind);
  s->set_start_ns(e.ts_ns);
  s->set_end_ns(end_ns);
  s->set_correlation_id(e.correlation);
  s->set_device(e.has_device ? e.device : static_cast<int32_t>(e.pid));
  s->set_stream(e.has_stream ? e.stream : e.tid);
  s->set_event_id(e.event_id);
  s->set_wait_on_stream(e.wait_on_stream);
  s->set_event_record_correlation_id(
      e.wait_on_event_record_corr > 0 ? static_cast<uint64_t>(e.wait_on_event_record_corr) : 0);
}

void KinetoTraceBuilder::AddEventRecord(const RawEvent& e) {
  proto::EventRecord* r = trace_.events().add_event_records();
  r->set_correlation_id(e.correlation);
  r->set_event_id(e.event_id);
  r->set_device(e.has_device ? e.device : static_cast<int32_t>(e.pid));
  r->set_stream(e.has_stream ? e.stream : e.tid);
  r->set_context(e.context);
}

void KinetoTraceBuilder::AddRange(const RawEvent& e, int64_t end_ns, proto::Range::Kind kind) {
  RangeRec r;
  r.kind = kind;
  r.is_gpu = kind == proto::Range::GPU_ANNOTATION;
  r.start_ns = e.ts_ns;
  r.end_ns = end_ns;
  r.pid = e.pid;
  r.tid = e.tid;
  r.device = r.is_gpu ? (e.has_device ? e.device : static_cast<int32_t>(e.pid)) : 0;
  r.external_id = e.external_id;
  r.sequence_number = e.has_sequence_number ? e.sequence_number : -1;
  r.name_sid = trace_.Intern(e.name);
  if (kind == proto::Range::CPU_OP && e.inputs != nullptr) KeepInputs(*e.inputs, &r);
  r.order_is_python_id = kind == proto::Range::LAYER && e.has_python_id;
  r.order = r.order_is_python_id ? static_cast<uint32_t>(e.python_id) : file_order_;
  ++file_order_;
  if (!r.is_gpu) {
    r.is_profiler_step = ProfilerStepIndex(e.name) >= 0;
    if (e.pid_is_text || e.tid_is_text) trace_.AddCounter(TraceCounter::non_numeric_thread_id);
    NoteCpuThread(e.pid, e.tid);
    const std::string_view n = e.name;
    if ((kind == proto::Range::USER_ANNOTATION || kind == proto::Range::CPU_OP) &&
        (n.substr(0, 5) == "nccl:" || n.substr(0, 5) == "gloo:")) {
      comm_annotations_.push_back(
          {e.pid, e.tid, e.ts_ns, end_ns, e.external_id, trace_.Intern(n.substr(5))});
    }
  }
  ranges_.push_back(r);
}

void KinetoTraceBuilder::KeepInputs(const OpInputsScratch& in, RangeRec* r) {
  if (in.truncated) trace_.AddCounter(TraceCounter::op_inputs_truncated);
  if (in.inputs.empty()) return;
  r->inputs_begin = static_cast<uint32_t>(op_inputs_.inputs.size());
  r->inputs_count = static_cast<uint32_t>(in.inputs.size());
  for (const OpInputsScratch::Input& x : in.inputs) {
    OpInputStore::Input o;
    o.dims_begin = static_cast<uint32_t>(op_inputs_.dims.size());
    o.dims_count = x.dims_count;
    o.ranks_begin = static_cast<uint32_t>(op_inputs_.ranks.size());
    o.ranks_count = x.ranks_count;
    o.is_list = x.is_list;
    o.type_sid = x.type.empty() ? 0 : trace_.Intern(x.type);
    o.concrete_sid = x.concrete.empty() ? 0 : trace_.Intern(x.concrete);
    op_inputs_.dims.insert(op_inputs_.dims.end(), in.dims.begin() + x.dims_begin,
                           in.dims.begin() + x.dims_begin + x.dims_count);
    op_inputs_.ranks.insert(op_inputs_.ranks.end(), in.ranks.begin() + x.ranks_begin,
                            in.ranks.begin() + x.ranks_begin + x.ranks_count);
    op_inputs_.inputs.push_back(o);
  }
}

void KinetoTraceBuilder::AddCollectiveFromArgs(const RawEvent& e, int64_t end_ns) {
  proto::Collective* c = trace_.events().add_collectives();
  c->set_name_sid(trace_.Intern(e.collective_name));
  c->set_pid(e.pid);
  c->set_tid(e.tid);
  c->set_start_ns(e.ts_ns);
  c->set_end_ns(end_ns);
  c->set_external_id(e.external_id);
  c->set_in_nelems(e.in_nelems);
  c->set_out_nelems(e.out_nelems);
  if (!e.dtype.empty()) c->set_dtype_sid(trace_.Intern(e.dtype));
  const int32_t element_bytes = ElementBytes(e.dtype);
  c->set_element_bytes(element_bytes);
  c->set_bytes(e.in_nelems * element_bytes);
  c->set_group_size(static_cast<int32_t>(e.group_size));
  if (!e.process_group_name.empty()) c->set_process_group_sid(trace_.Intern(e.process_group_name));
  c->set_seq(e.seq);
}

void KinetoTraceBuilder::AddMemory(const RawEvent& e) {
  if (!e.has_ts || !e.has_mem_bytes || !e.has_device_type || e.bad_number) {
    trace_.AddCounter(TraceCounter::missing_field);
    return;
  }
  // c10::DeviceType: 0 CPU, 1 CUDA (ROCm builds report CUDA as well).
  if (e.device_type != 0 && e.device_type != 1) {
    trace_.AddCounter(TraceCounter::memory_unknown_device);
    return;
  }
  proto::MemoryEvent* m = trace_.events().add_memory_events();
  m->set_time_ns(e.ts_ns);
  m->set_pid(e.pid);
  m->set_tid(e.tid);
  m->set_device_type(static_cast<int32_t>(e.device_type));
  m->set_device(e.device_type == 0 ? -1 : static_cast<int32_t>(e.device_id));
  m->set_addr(static_cast<uint64_t>(e.mem_addr));
  m->set_bytes(e.mem_bytes);
  if (e.has_total_allocated) m->set_total_allocated(e.total_allocated);
  if (e.has_total_reserved) m->set_total_reserved(e.total_reserved);
}

void KinetoTraceBuilder::AddMetadata(const RawEvent& e) {
  if (e.pid_is_text || e.tid_is_text) return;  // the profiler's own rows ("Spans")
  if (e.name == "process_name") {
    processes_[e.pid].name = trace_.Intern(e.meta_name);
  } else if (e.name == "process_labels") {
    processes_[e.pid].label = trace_.Intern(e.meta_labels);
  } else if (e.name == "thread_name") {
    thread_names_[{e.pid, e.tid}] = trace_.Intern(e.meta_name);
  }
}

void KinetoTraceBuilder::AddFlowEnd(const RawEvent& e) {
  if (!e.has_flow_id || !e.has_ts) {
    trace_.AddCounter(TraceCounter::missing_field);
    return;
  }
  auto& ends = fwdbwd_[e.flow_id];
  FlowEnd& end = e.ph == 's' ? ends.first : ends.second;
  end = FlowEnd{e.tid, e.ts_ns, true};
}

Trace KinetoTraceBuilder::Finish(int threads) {
  // The range sort reads only the ranges; the correlation, sync and flow
  // passes read and write only other records and the counters (in the
  // order one thread adds them): they run side by side.
  SortedRanges sorted;
  std::vector<FwdBwdLink> links;
  ParallelForRethrowing(2, threads, [&](size_t i) {
    if (i == 1) {
      sorted = SortRanges(std::move(ranges_));
      return;
    }
    CheckCorrelations();
    ResolveSyncThreads();
    links = BuildFlows();
  });
  EmitRanges(std::move(sorted), links, &trace_, &op_inputs_, threads);
  op_inputs_ = OpInputStore();
  LinkMemoryEvents(&trace_);
  BuildCollectivesFromAnnotations();
  BuildThreadsAndProcesses();
  BuildDevices();
  return std::move(trace_);
}

}  // namespace reverie::kineto
