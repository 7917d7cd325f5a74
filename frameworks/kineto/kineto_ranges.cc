#include "frameworks/kineto/kineto_ranges.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/parallel.h"
#include "base/sv.h"
#include "proto/trace_validate.h"

namespace reverie::kineto {
namespace {

constexpr uint32_t kNoRange = UINT32_MAX;

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Among ranges with identical intervals, which one encloses the others:
// the step, then annotations, then layers, then ops.
int NestingRank(const RangeRec& r) {
  if (r.is_profiler_step) return 0;
  switch (r.kind) {
    case proto::Range::USER_ANNOTATION:
    case proto::Range::GPU_ANNOTATION: return 1;
    case proto::Range::LAYER: return 2;
    default: return 3;
  }
}

// Optimizer kernels' host ops, recognisable even outside Optimizer.step.
bool IsOptimizerOp(std::string_view name) {
  return StartsWith(name, "aten::_fused_adam") || StartsWith(name, "aten::_fused_sgd") ||
         StartsWith(name, "aten::_foreach_") || StartsWith(name, "Optimizer.");
}

bool IsEvaluateFunction(std::string_view name) {
  return StartsWith(name, "autograd::engine::evaluate_function");
}

// An autograd node's op: "autograd::engine::evaluate_function: XBackward0"
// (current schema), "XBackward0"/"CudnnConvolutionBackward" (2021 schema,
// and nested in evaluate_function today), "torch::autograd::AccumulateGrad".
bool IsBackwardNode(std::string_view name) {
  if (IsEvaluateFunction(name) || absl::StrContains(Sv(name), "AccumulateGrad")) return true;
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  return end >= 8 && name.substr(end - 8, 8) == "Backward";
}

}  // namespace

int64_t ProfilerStepIndex(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!StartsWith(name, kPrefix) || name.size() == kPrefix.size() || name.size() > kPrefix.size() + 18) {
    return -1;
  }
  int64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

proto::Phase ExplicitPhase(std::string_view name) {
  if (IsBackwardNode(name)) return proto::BACKWARD;
  if (StartsWith(name, "Optimizer.")) return proto::UPDATE;  // Optimizer.step#Adam.step, .zero_grad#
  if (StartsWith(name, "enumerate(DataLoader)")) return proto::DATA_LOADING;
  // Wrapper annotations: "DistributedDataParallel.forward".
  if (absl::EndsWith(Sv(name), ".forward")) return proto::FORWARD;
  if (name.size() > 40) return proto::PHASE_UNKNOWN;
  // Marker annotations such as "## forward ##" or record_function("backward").
  std::string core;
  for (char c : name) {
    if (c == '#' || c == ' ' || c == '_' || c == '-') continue;
    core.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (core == "forward" || core == "fwd" || core == "forwardpass") return proto::FORWARD;
  if (core == "backward" || core == "bwd" || core == "backwardpass") return proto::BACKWARD;
  if (core == "optimizer" || core == "optimizerstep" || core == "optim" || core == "update" ||
      core == "zerograd") {
    return proto::UPDATE;
  }
  if (core == "dataloader" || core == "dataloading") return proto::DATA_LOADING;
  return proto::PHASE_UNKNOWN;
}

// Of two ops with the same span the one that started first (the lower
// external id: the outer op) comes first whatever the file's order (issue
// 29, metamorphic tests: aten::contiguous and the aten::clone inside it
// swapped). The keys are copied out first: sorting indexes that compare
// through the records misses the cache on every compare.
SortedRanges SortRanges(RangeRecs recs) {
  struct Key {
    bool is_gpu;
    int64_t pid, tid, start_ns, neg_end_ns;
    int rank;
    uint64_t external_id;
    uint32_t order, index;
    bool operator<(const Key& o) const {
      return std::tie(is_gpu, pid, tid, start_ns, neg_end_ns, rank, external_id, order) <
             std::tie(o.is_gpu, o.pid, o.tid, o.start_ns, o.neg_end_ns, o.rank, o.external_id,
                      o.order);
    }
  };
  std::vector<Key, HugePageAllocator<Key>> keys(recs.size());
  for (uint32_t i = 0; i < recs.size(); ++i) {
    const RangeRec& r = recs[i];
    keys[i] = Key{r.is_gpu,       r.pid,         r.tid,   r.start_ns, -r.end_ns,
                  NestingRank(r), r.external_id, r.order, i};
  }
  std::sort(keys.begin(), keys.end());
  SortedRanges sorted{std::move(recs), {}};
  sorted.order.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) sorted.order[i] = keys[i].index;
  return sorted;
}

namespace {

// The passes of EmitRanges over ranges in sorted order; position p stands
// for recs[order[p]]. Parents always come before their children.
class RangeInference {
 public:
  RangeInference(SortedRanges sorted, Trace* trace, const OpInputStore* inputs)
      : recs_(std::move(sorted.recs)),
        trace_(trace),
        order_(std::move(sorted.order)),
        inputs_(inputs) {
    const size_t n = recs_.size();
    parent_.assign(n, kNoRange);
    depth_.assign(n, 0);
    phase_.assign(n, proto::PHASE_UNKNOWN);
    fwd_tid_.assign(n, 0);
    facts_.resize(trace_->string_count());
  }

  void Run(const std::vector<FwdBwdLink>& links, int threads) {
    Nest();
    LinkFlows(links);
    InferPhasesAndLayers();
    AttributeBackward();
    Emit(threads);
  }

 private:
  RangeRec& rec(uint32_t p) { return recs_[order_[p]]; }
  std::string_view name(uint32_t p) { return trace_->String(rec(p).name_sid); }

  // What a range's name says, computed once per distinct name (names repeat
  // thousands of times in a trace).
  struct NameFacts {
    bool known = false;
    bool backward_node = false;
    bool optimizer_op = false;
    proto::Phase phase = proto::PHASE_UNKNOWN;
  };
  const NameFacts& Facts(uint32_t p) {
    NameFacts& f = facts_[rec(p).name_sid];
    if (!f.known) {
      const std::string_view n = name(p);
      f = NameFacts{true, IsBackwardNode(n), IsOptimizerOp(n), ExplicitPhase(n)};
    }
    return f;
  }
  uint32_t size() const { return static_cast<uint32_t>(order_.size()); }
  bool SameThread(uint32_t a, uint32_t b) {
    return rec(a).is_gpu == rec(b).is_gpu && rec(a).pid == rec(b).pid && rec(a).tid == rec(b).tid;
  }

  void Nest() {
    std::vector<uint32_t> stack;
    for (uint32_t p = 0; p < size(); ++p) {
      const RangeRec& r = rec(p);
      if (p > 0 && !SameThread(p - 1, p)) stack.clear();
      while (!stack.empty()) {
        const RangeRec& top = rec(stack.back());
        if (top.end_ns <= r.start_ns && !(top.start_ns == r.start_ns && r.end_ns <= top.end_ns)) {
          stack.pop_back();
          continue;
        }
        // r starts inside top. Ending after it is a partial overlap (clock
        // jitter between the Python tracer and the op profiler, or a bad
        // producer): keep r inside top so it keeps its layer, and count it.
        if (r.end_ns > top.end_ns) trace_->AddCounter(TraceCounter::range_overlap);
        break;
      }
      parent_[p] = stack.empty() ? kNoRange : stack.back();
      depth_[p] = static_cast<uint32_t>(stack.size());
      stack.push_back(p);
      if (r.is_gpu) continue;
      auto [span, inserted] = thread_span_.try_emplace(r.tid, p, p);
      if (!inserted) span->second.second = p;
      const auto thread = std::make_pair(r.pid, r.tid);
      if (r.is_profiler_step) has_step_.insert(thread);
      if (r.kind == proto::Range::CPU_OP && Facts(p).backward_node) {
        has_backward_.insert(thread);
        if (r.sequence_number >= 0) backward_seq_.insert({r.pid, r.sequence_number});
      }
      if (r.kind == proto::Range::USER_ANNOTATION) {
        const proto::Phase ph = Facts(p).phase;
        if (ph != proto::PHASE_UNKNOWN) markers_.push_back({r.pid, r.start_ns, r.end_ns, r.tid, ph});
      }
    }
    std::sort(markers_.begin(), markers_.end());
  }

  // Innermost CPU range on `tid` that contains `ts` (Kineto binds a flow end
  // to the enclosing slice).
  uint32_t InnermostAt(int64_t tid, int64_t ts) {
    auto span = thread_span_.find(tid);
    if (span == thread_span_.end()) return kNoRange;
    uint32_t lo = span->second.first, hi = span->second.second + 1;
    while (lo < hi) {  // first position starting after ts
      const uint32_t mid = lo + (hi - lo) / 2;
      if (rec(mid).start_ns <= ts) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == span->second.first) return kNoRange;
    uint32_t p = lo - 1;
    while (p != kNoRange && rec(p).end_ns < ts) p = parent_[p];
    return p;
  }

  // fwdbwd flows: the forward op is the innermost op at the flow start; the
  // backward side is lifted to its outermost autograd-node op.
  void LinkFlows(const std::vector<FwdBwdLink>& links) {
    for (const FwdBwdLink& l : links) {
      const uint32_t fwd = InnermostAt(l.from_tid, l.from_ns);
      uint32_t bwd = InnermostAt(l.to_tid, l.to_ns);
      if (fwd == kNoRange || bwd == kNoRange) continue;
      rec(fwd).starts_fwdbwd_flow = true;
      for (uint32_t p = bwd; p != kNoRange; p = parent_[p]) {
        if (Facts(p).backward_node) bwd = p;
      }
      forward_of_.emplace(bwd, fwd);
    }
  }

  // Phase of an explicit marker annotation on another thread of the process
  // covering `ts` (autograd's thread runs while the main thread sits in
  // "## backward ##").
  proto::Phase MarkerPhaseAt(int64_t pid, int64_t tid, int64_t ts) {
    auto it = std::upper_bound(markers_.begin(), markers_.end(),
                               Marker{pid, ts, INT64_MAX, INT64_MAX, proto::PHASE_UNKNOWN});
    for (int k = 0; k < 8 && it != markers_.begin(); ++k) {
      --it;
      if (it->pid != pid) break;
      if (it->tid != tid && it->start_ns <= ts && ts < it->end_ns) return it->phase;
    }
    return proto::PHASE_UNKNOWN;
  }

  proto::Phase WeakPhase(uint32_t p) {
    const RangeRec& r = rec(p);
    if (r.kind == proto::Range::LAYER || r.starts_fwdbwd_flow) return proto::FORWARD;
    if (r.kind == proto::Range::CPU_OP && r.sequence_number >= 0 &&
        backward_seq_.contains(std::make_pair(r.pid, r.sequence_number))) {
      return proto::FORWARD;  // its autograd node ran in the backward pass
    }
    if (Facts(p).optimizer_op) return proto::UPDATE;
    if (r.is_gpu) return proto::PHASE_UNKNOWN;
    const auto thread = std::make_pair(r.pid, r.tid);
    if (has_step_.contains(thread)) return proto::PHASE_UNKNOWN;
    if (parent_[p] == kNoRange) {
      const proto::Phase marked = MarkerPhaseAt(r.pid, r.tid, r.start_ns);
      if (marked != proto::PHASE_UNKNOWN) return marked;
    }
    return has_backward_.contains(thread) ? proto::BACKWARD : proto::PHASE_UNKNOWN;
  }

  void InferPhasesAndLayers() {
    for (uint32_t p = 0; p < size(); ++p) {
      RangeRec& r = rec(p);
      const uint32_t up = parent_[p];
      const std::string_view n = name(p);
      const proto::Phase own = r.kind == proto::Range::LAYER ? proto::PHASE_UNKNOWN : Facts(p).phase;
      if (own != proto::PHASE_UNKNOWN) {
        phase_[p] = own;
      } else if (up != kNoRange && phase_[up] != proto::PHASE_UNKNOWN) {
        phase_[p] = phase_[up];
      } else {
        phase_[p] = WeakPhase(p);
      }
      const uint32_t outer_module = up == kNoRange ? 0 : rec(up).module_path_sid;
      if (r.kind == proto::Range::LAYER) {
        any_layer_ = true;
        const std::string_view segment = n.substr(std::min(n.size(), kModulePrefix.size()));
        // Within the bounds here already: each nesting level interns its
        // whole path, so unbounded nesting took memory with the square of
        // the depth (issue 29, D22).
        const std::string path = outer_module == 0
                                     ? std::string(segment)
                                     : absl::StrCat(Sv(trace_->String(outer_module)), ".", Sv(segment));
        const std::string_view within = CapModulePath(path);
        if (within.size() != path.size()) trace_->AddCounter(TraceCounter::module_path_out_of_range);
        r.module_path_sid = trace_->Intern(within);
      } else {
        r.module_path_sid = outer_module;
      }
    }
  }

  // Backward nodes take the layer of their forward op (fwdbwd flow, else the
  // autograd sequence number). AccumulateGrad has no forward op; autograd
  // runs it right after the node that produced its gradient, so it takes
  // that node's layer. Ops nested in a backward node then inherit.
  void AttributeBackward() {
    absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> forward_by_seq;  // (pid, seq) -> pos
    for (uint32_t p = 0; p < size(); ++p) {
      const RangeRec& r = rec(p);
      if (r.kind == proto::Range::CPU_OP && r.sequence_number >= 0 &&
          phase_[p] == proto::FORWARD && r.module_path_sid != 0) {
        forward_by_seq.try_emplace(std::make_pair(r.pid, r.sequence_number), p);
      }
    }
    uint32_t last_module = 0;
    for (uint32_t p = 0; p < size(); ++p) {
      RangeRec& r = rec(p);
      if (p > 0 && !SameThread(p - 1, p)) last_module = 0;
      if (r.kind != proto::Range::CPU_OP || !Facts(p).backward_node) continue;
      if (parent_[p] != kNoRange && Facts(parent_[p]).backward_node) continue;  // inherits below
      if (r.module_path_sid != 0) {
        last_module = r.module_path_sid;
        continue;
      }
      uint32_t fwd = kNoRange;
      if (auto it = forward_of_.find(p); it != forward_of_.end() && rec(it->second).module_path_sid) {
        fwd = it->second;
      } else if (r.sequence_number >= 0) {
        auto s = forward_by_seq.find(std::make_pair(r.pid, r.sequence_number));
        if (s != forward_by_seq.end()) fwd = s->second;
      }
      if (fwd != kNoRange) {
        r.module_path_sid = rec(fwd).module_path_sid;
        fwd_tid_[p] = rec(fwd).tid;
        last_module = r.module_path_sid;
      } else if (absl::StrContains(Sv(name(p)), "AccumulateGrad") && last_module != 0) {
        r.module_path_sid = last_module;
      } else if (any_layer_) {
        trace_->AddCounter(TraceCounter::backward_op_without_forward_layer);
      }
    }
    for (uint32_t p = 0; p < size(); ++p) {
      RangeRec& r = rec(p);
      if (r.module_path_sid == 0 && parent_[p] != kNoRange && phase_[p] == proto::BACKWARD) {
        r.module_path_sid = rec(parent_[p]).module_path_sid;
      }
    }
  }

  void AddInputs(const RangeRec& r, proto::Range* out) const {
    const OpInputStore& st = *inputs_;
    out->mutable_inputs()->Reserve(static_cast<int>(r.inputs_count));
    for (uint32_t i = r.inputs_begin; i < r.inputs_begin + r.inputs_count; ++i) {
      const OpInputStore::Input& in = st.inputs[i];
      proto::OpInput* o = out->add_inputs();
      for (uint32_t d = in.dims_begin; d < in.dims_begin + in.dims_count; ++d) o->add_dims(st.dims[d]);
      for (uint32_t k = in.ranks_begin; k < in.ranks_begin + in.ranks_count; ++k) {
        o->add_list_ranks(st.ranks[k]);
      }
      o->set_is_list(in.is_list);
      o->set_type_sid(in.type_sid);
      o->set_concrete_sid(in.concrete_sid);
    }
  }

  // Appends the ranges in sorted order; ProfilerStep ranges also become
  // steps (one per distinct N). The messages are made and filled on
  // `threads` workers (the Trace's arena allocates from several threads:
  // most of the cost is first touches of fresh memory), then appended in
  // order.
  void Emit(int threads) {
    proto::TraceChunk& ev = trace_->events();
    const uint32_t base = static_cast<uint32_t>(ev.ranges_size());
    std::vector<proto::Range*> made(size());
    google::protobuf::Arena* arena = ev.GetArena();
    constexpr uint32_t kBlock = 1 << 14;
    ParallelForRethrowing((size() + kBlock - 1) / kBlock, threads, [&](size_t b) {
      const uint32_t end = std::min<uint32_t>(size(), static_cast<uint32_t>(b + 1) * kBlock);
      for (uint32_t p = static_cast<uint32_t>(b) * kBlock; p < end; ++p) {
        made[p] = google::protobuf::Arena::CreateMessage<proto::Range>(arena);
        Fill(p, base, made[p]);
      }
    });
    google::protobuf::RepeatedPtrField<proto::Range>* ranges = ev.mutable_ranges();
    ranges->Reserve(static_cast<int>(base + size()));
    for (proto::Range* r : made) ranges->AddAllocated(r);
    absl::flat_hash_set<int64_t> steps;
    for (uint32_t p = 0; p < size(); ++p) {
      const RangeRec& r = rec(p);
      if (!r.is_profiler_step) continue;
      const int64_t index = ProfilerStepIndex(name(p));
      if (!steps.insert(index).second) {
        trace_->AddCounter(TraceCounter::duplicate_profiler_step);
        continue;
      }
      proto::Step* it = ev.add_steps();
      it->set_index(index);
      it->set_name_sid(r.name_sid);
      it->set_pid(r.pid);
      it->set_tid(r.tid);
      it->set_start_ns(r.start_ns);
      it->set_end_ns(r.end_ns);
    }
    std::sort(ev.mutable_steps()->begin(), ev.mutable_steps()->end(),
              [](const proto::Step& a, const proto::Step& b) {
                return a.index() < b.index();
              });
  }

  // The range at position p, the first of them at index `base`.
  void Fill(uint32_t p, uint32_t base, proto::Range* out) const {
    const RangeRec& r = recs_[order_[p]];
    out->set_kind(r.kind);
    out->set_name_sid(r.name_sid);
    out->set_module_path_sid(r.module_path_sid);
    out->set_phase(phase_[p]);
    out->set_pid(r.pid);
    out->set_tid(r.tid);
    out->set_start_ns(r.start_ns);
    out->set_end_ns(r.end_ns);
    out->set_parent(parent_[p] == kNoRange ? 0 : base + parent_[p] + 1);
    out->set_depth(depth_[p]);
    out->set_external_id(r.external_id);
    out->set_sequence_number(r.sequence_number);
    out->set_fwd_tid(fwd_tid_[p]);
    out->set_device(r.device);
    if (inputs_ != nullptr && r.inputs_count > 0) AddInputs(r, out);
  }

  struct Marker {
    int64_t pid, start_ns, end_ns, tid;
    proto::Phase phase;
    bool operator<(const Marker& o) const {
      return std::tie(pid, start_ns, end_ns, tid) < std::tie(o.pid, o.start_ns, o.end_ns, o.tid);
    }
  };

  RangeRecs recs_;
  Trace* trace_;
  std::vector<uint32_t> order_;
  std::vector<uint32_t> parent_, depth_;
  std::vector<proto::Phase> phase_;
  std::vector<int64_t> fwd_tid_;
  absl::flat_hash_map<int64_t, std::pair<uint32_t, uint32_t>> thread_span_;  // tid -> [first, last]
  absl::flat_hash_set<std::pair<int64_t, int64_t>> has_step_, has_backward_, backward_seq_;
  absl::flat_hash_map<uint32_t, uint32_t> forward_of_;  // backward pos -> forward pos
  std::vector<Marker> markers_;
  std::vector<NameFacts> facts_;  // by name sid
  bool any_layer_ = false;
  const OpInputStore* inputs_;
};

}  // namespace

void EmitRanges(SortedRanges ranges, const std::vector<FwdBwdLink>& links, Trace* trace,
                const OpInputStore* inputs, int threads) {
  RangeInference(std::move(ranges), trace, inputs).Run(links, threads);
}

}  // namespace reverie::kineto
