// KinetoTraceBuilder's parts: a later stretch of one document's events
// built on another thread, then appended to the builder of the stretch
// before it (kineto_parser.cc decodes a large trace on every core).
//
// Appending must give what one builder taking every event in file order
// gives, byte for byte (tests/import/import_array_test.cc compares them):
// a part interned its own strings, counted its own counters and numbered its
// own ranges from 0, so each is renumbered here in the part's order after
// the owner's.
#include <utility>
#include <vector>

#include "frameworks/kineto/kineto_builder.h"

namespace reverie::kineto {
namespace {

// Moves every record of `from` to the end of `to` (both on one arena: only
// pointers move), calling fix(record) on each first.
template <typename T, typename Fix>
void MoveRecords(google::protobuf::RepeatedPtrField<T>* from,
                 google::protobuf::RepeatedPtrField<T>* to, Fix fix) {
  to->Reserve(to->size() + from->size());
  for (T& r : *from) {
    fix(r);
    to->UnsafeArenaAddAllocated(&r);
  }
  // `from` still points at them; it is on the arena and never destroyed.
}

}  // namespace

KinetoTraceBuilder KinetoTraceBuilder::PartOf(KinetoTraceBuilder& owner) {
  return KinetoTraceBuilder(owner.header().source_path(), Trace::SiblingOf(owner.trace_));
}

void KinetoTraceBuilder::Absorb(KinetoTraceBuilder&& part) {
  // The part's string ids, renumbered as this builder's table would have
  // given them: interned in the part's first-use order.
  std::vector<uint32_t> sid(part.trace_.string_count());
  for (size_t i = 0; i < sid.size(); ++i) {
    sid[i] = trace_.Intern(part.trace_.String(static_cast<uint32_t>(i)));
  }
  trace_.AddCountersOf(part.trace_);

  proto::TraceChunk& from = part.trace_.events();
  proto::TraceChunk& to = trace_.events();
  MoveRecords(from.mutable_api_calls(), to.mutable_api_calls(),
              [&](proto::ApiCall& a) { a.set_name_sid(sid[a.name_sid()]); });
  MoveRecords(from.mutable_gpu_activities(), to.mutable_gpu_activities(),
              [&](proto::GpuActivity& g) { g.set_name_sid(sid[g.name_sid()]); });
  MoveRecords(from.mutable_syncs(), to.mutable_syncs(), [](proto::Sync&) {});
  MoveRecords(from.mutable_event_records(), to.mutable_event_records(), [](proto::EventRecord&) {});
  MoveRecords(from.mutable_memory_events(), to.mutable_memory_events(), [](proto::MemoryEvent&) {});
  MoveRecords(from.mutable_collectives(), to.mutable_collectives(), [&](proto::Collective& c) {
    c.set_name_sid(sid[c.name_sid()]);
    c.set_dtype_sid(sid[c.dtype_sid()]);
    c.set_process_group_sid(sid[c.process_group_sid()]);
  });

  const auto inputs_base = static_cast<uint32_t>(op_inputs_.inputs.size());
  const auto dims_base = static_cast<uint32_t>(op_inputs_.dims.size());
  const auto ranks_base = static_cast<uint32_t>(op_inputs_.ranks.size());
  for (OpInputStore::Input in : part.op_inputs_.inputs) {
    in.dims_begin += dims_base;
    in.ranks_begin += ranks_base;
    in.type_sid = sid[in.type_sid];
    in.concrete_sid = sid[in.concrete_sid];
    op_inputs_.inputs.push_back(in);
  }
  op_inputs_.dims.insert(op_inputs_.dims.end(), part.op_inputs_.dims.begin(),
                         part.op_inputs_.dims.end());
  op_inputs_.ranks.insert(op_inputs_.ranks.end(), part.op_inputs_.ranks.begin(),
                          part.op_inputs_.ranks.end());
  ranges_.reserve(ranges_.size() + part.ranges_.size());
  for (RangeRec r : part.ranges_) {
    r.name_sid = sid[r.name_sid];
    r.module_path_sid = sid[r.module_path_sid];  // 0 until Finish, which sets it
    if (!r.order_is_python_id) r.order += file_order_;
    if (r.inputs_count > 0) r.inputs_begin += inputs_base;
    ranges_.push_back(r);
  }
  file_order_ += part.file_order_;
  for (CommAnnotation a : part.comm_annotations_) {
    a.name_sid = sid[a.name_sid];
    comm_annotations_.push_back(a);
  }

  // Tables keyed by thread, process or flow: what the part set last wins,
  // as it came later in the file.
  for (const auto& [id, ends] : part.fwdbwd_) {
    auto& mine = fwdbwd_[id];
    if (ends.first.seen) mine.first = ends.first;
    if (ends.second.seen) mine.second = ends.second;
  }
  for (const auto& [thread, unused] : part.cpu_threads_) cpu_threads_.try_emplace(thread, 0);
  for (const auto& [thread, name] : part.thread_names_) thread_names_[thread] = sid[name];
  for (const auto& [pid, names] : part.processes_) {
    ProcessNames& mine = processes_[pid];
    if (names.name) mine.name = sid[*names.name];
    if (names.label) mine.label = sid[*names.label];
  }
  events_seen_ += part.events_seen_;
  saw_hip_api_ |= part.saw_hip_api_;
}

}  // namespace reverie::kineto
