#include "collector/host_event_processor.h"

#include <algorithm>

namespace reverie::collector {
namespace {

uint64_t ThreadKey(int64_t pid, int64_t tid) {
  return (static_cast<uint64_t>(pid) << 32) ^ static_cast<uint64_t>(tid);
}

}  // namespace

size_t HostEventProcessor::pending_ranges() const {
  size_t n = started_.size();
  for (const auto& [key, t] : threads_) n += t.pending.size();
  return n;
}

void HostEventProcessor::Process(const HostEvent& e) {
  switch (e.type) {
    case HostEventType::kPush: return Push(e);
    case HostEventType::kPop: return Pop(e);
    case HostEventType::kStart: return Start(e);
    case HostEventType::kEnd: return End(e);
    case HostEventType::kStepBegin: return StepBegin(e);
    case HostEventType::kStepEnd: return StepEnd(e);
    case HostEventType::kParameter: return Parameter(e);
    case HostEventType::kBucket: return Bucket(e);
    case HostEventType::kMetadata: return sink_->SetMetadata(e.name, e.layer);
  }
}

RangeRecord HostEventProcessor::MakeRange(const HostEvent& e, uint32_t depth) {
  RangeRecord r;
  r.kind = e.kind;
  r.name_sid = sink_->writer().Intern(e.name);
  if (e.kind == RangeKind::kLayer) r.module_path_sid = r.name_sid;
  r.phase = e.phase;
  r.pid = e.pid;
  r.tid = e.tid;
  r.start_ns = e.time_ns;
  r.end_ns = e.time_ns;
  r.depth = depth;
  r.external_id = e.id;
  return r;
}

void HostEventProcessor::Push(const HostEvent& e) {
  ThreadRanges& t = threads_[ThreadKey(e.pid, e.tid)];
  PendingRange p;
  p.record = MakeRange(e, static_cast<uint32_t>(t.open.size()));
  p.parent_pos = t.open.empty() ? -1 : static_cast<int64_t>(t.open.back());
  t.open.push_back(t.pending.size());
  t.pending.push_back(std::move(p));
}

void HostEventProcessor::Pop(const HostEvent& e) {
  auto it = threads_.find(ThreadKey(e.pid, e.tid));
  if (it == threads_.end() || it->second.open.empty()) {
    sink_->Count(TraceCounter::range_unbalanced_pop, 1);
    return;
  }
  ThreadRanges& t = it->second;
  PendingRange& p = t.pending[t.open.back()];
  t.open.pop_back();
  p.record.end_ns = std::max(e.time_ns, p.record.start_ns);
  p.complete = true;
  if (t.open.empty() || t.pending.size() > kMaxPendingPerThread) Emit(&t);
  if (t.pending.empty()) threads_.erase(it);
}

void HostEventProcessor::Emit(ThreadRanges* t) {
  const size_t n = t->pending.size();
  std::vector<uint32_t> ids(n, 0);
  std::vector<int64_t> new_pos(n, -1);
  std::vector<PendingRange> still_open;
  for (size_t i = 0; i < n; ++i) {
    const PendingRange& p = t->pending[i];
    if (!p.complete) {
      // Open ranges stay; their ancestors are open too, so the remap holds.
      new_pos[i] = static_cast<int64_t>(still_open.size());
      PendingRange kept = p;
      kept.parent_pos = p.parent_pos >= 0 ? new_pos[p.parent_pos] : -1;
      still_open.push_back(std::move(kept));
      continue;
    }
    RangeRecord r = p.record;
    if (p.parent_pos >= 0) {
      r.parent = ids[p.parent_pos];
      if (r.parent == 0 && !t->pending[p.parent_pos].complete) {
        sink_->Count(TraceCounter::range_parent_unknown, 1);
      }
    }
    if (sink_->window().KeepSpan(r.start_ns, r.end_ns)) {
      ids[i] = sink_->Range(r);
    } else {
      sink_->Dropped();
    }
  }
  t->pending = std::move(still_open);
  t->open.clear();
  for (size_t i = 0; i < t->pending.size(); ++i) t->open.push_back(i);
}

void HostEventProcessor::Start(const HostEvent& e) {
  started_[e.id] = MakeRange(e, 0);
}

void HostEventProcessor::End(const HostEvent& e) {
  auto it = started_.find(e.id);
  if (it == started_.end()) {
    sink_->Count(TraceCounter::range_unbalanced_end, 1);
    return;
  }
  RangeRecord r = it->second;
  started_.erase(it);
  r.end_ns = std::max(e.time_ns, r.start_ns);
  // The NVTX id is not an external correlation id.
  r.external_id = 0;
  if (sink_->window().KeepSpan(r.start_ns, r.end_ns)) {
    sink_->Range(r);
  } else {
    sink_->Dropped();
  }
}

void HostEventProcessor::StepBegin(const HostEvent& e) {
  if (step_open_) sink_->Count(TraceCounter::step_unclosed, 1);
  step_open_ = true;
  step_ = StepRecord{};
  step_.index = static_cast<int64_t>(e.id);
  step_.pid = e.pid;
  step_.tid = e.tid;
  step_.start_ns = e.time_ns;
  sink_->window().OnStepBegin(step_.index, e.time_ns);
}

void HostEventProcessor::StepEnd(const HostEvent& e) {
  if (!step_open_ || static_cast<int64_t>(e.id) != step_.index) {
    sink_->Count(TraceCounter::step_end_without_begin, 1);
    return;
  }
  step_open_ = false;
  step_.end_ns = std::max(e.time_ns, step_.start_ns);
  if (sink_->window().WantStep(step_.index)) {
    step_.name_sid =
        sink_->writer().Intern("Step#" + std::to_string(static_cast<long long>(step_.index)));
    sink_->Step(step_);
  }
  sink_->window().OnStepEnd(step_.index, step_.end_ns);
}

void HostEventProcessor::Parameter(const HostEvent& e) {
  ParameterRecord p;
  p.name_sid = sink_->writer().Intern(e.name);
  p.layer_sid = sink_->writer().Intern(e.layer);
  p.bytes = e.bytes;
  p.dtype_sid = sink_->writer().Intern(e.dtype);
  parameter_layer_[e.name] = p.layer_sid;
  sink_->Parameter(p);
}

void HostEventProcessor::Bucket(const HostEvent& e) {
  GradientBucketRecord b;
  b.index = e.index;
  b.bytes = e.bytes;
  for (const std::string& name : e.names) {
    b.parameter_sids.push_back(sink_->writer().Intern(name));
    auto it = parameter_layer_.find(name);
    if (it == parameter_layer_.end()) {
      sink_->Count(TraceCounter::bucket_parameter_unknown, 1);
      continue;
    }
    if (std::find(b.layer_sids.begin(), b.layer_sids.end(), it->second) == b.layer_sids.end()) {
      b.layer_sids.push_back(it->second);
    }
  }
  sink_->GradientBucket(b);
}

void HostEventProcessor::Finish(int64_t now_ns) {
  for (auto& [key, t] : threads_) {
    while (!t.open.empty()) {
      PendingRange& p = t.pending[t.open.back()];
      t.open.pop_back();
      p.record.end_ns = std::max(now_ns, p.record.start_ns);
      p.complete = true;
      sink_->Count(TraceCounter::range_unclosed, 1);
    }
    Emit(&t);
  }
  threads_.clear();
  for (auto& [unused_id, r] : started_) {
    sink_->Count(TraceCounter::range_unclosed, 1);
    RangeRecord copy = r;
    copy.end_ns = std::max(now_ns, copy.start_ns);
    copy.external_id = 0;
    if (sink_->window().KeepSpan(copy.start_ns, copy.end_ns)) sink_->Range(copy);
  }
  started_.clear();
  // A step still open at the end is dropped without a count: with the
  // usual "step() ends one step and begins the next" loop the last one
  // begun is always empty.
  step_open_ = false;
}

}  // namespace reverie::collector
