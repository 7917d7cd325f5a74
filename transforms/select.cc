#include "transforms/select.h"

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "depgraph/kernel_class.h"
#include "transforms/pattern.h"

namespace reverie::transforms {

using depgraph::Graph;
using depgraph::TaskId;

namespace {

// A query ready to test tasks one at a time. Name, layer and op verdicts are
// kept per id as they are asked: every id on a pass over the graph (dense),
// only the candidates' for a query within a selection.
class QueryTest {
 public:
  static absl::StatusOr<QueryTest> Make(const Graph& g, const TaskQuery& q, bool dense) {
    QueryTest t(g, q, dense);
    if (q.HasNameFilter()) {
      REVERIE_ASSIGN_OR_RETURN(NameMatcher m, NameMatcher::Compile(q.names, q.name_regex));
      t.names_ = std::make_unique<NameMatcher>(std::move(m));
    }
    if (!q.ops.empty()) {
      REVERIE_ASSIGN_OR_RETURN(NameMatcher m, NameMatcher::Compile(q.ops, ""));
      t.ops_ = std::make_unique<NameMatcher>(std::move(m));
    }
    if (!q.layers.empty()) t.layers_ = std::make_unique<LayerMatcher>(g, q.layers, dense);
    if (!q.resources.empty() || q.resource_kinds != 0) {
      t.resource_ok_.assign(g.resource_count(), q.resources.empty());
      for (depgraph::ResourceId r : q.resources) {
        if (!r.valid() || r.value() >= g.resource_count()) {
          return absl::InvalidArgumentError(absl::StrCat("no resource ", r.value()));
        }
        t.resource_ok_[r.value()] = true;
      }
      if (q.resource_kinds != 0) {
        for (uint32_t r = 0; r < g.resource_count(); ++r) {
          if (!(q.resource_kinds & ResourceKindBit(g.resource(depgraph::ResourceId(r)).kind))) {
            t.resource_ok_[r] = false;
          }
        }
      }
    }
    return t;
  }

  bool Matches(TaskId t) {
    const Graph& g = *g_;
    const TaskQuery& q = *q_;
    if (g.removed(t) || g.is_step_mark(t)) return false;
    const depgraph::TaskKind k = g.kind(t);
    if (q.kernel_classes != 0) {
      if (!depgraph::IsGpuKind(k) && k != depgraph::TaskKind::kComm) return false;
      if (!(q.kernel_classes & (1u << static_cast<int>(depgraph::TaskClass(g, t))))) return false;
    }
    if (q.kinds != 0 && !(q.kinds & KindBit(k))) return false;
    if (ops_ != nullptr && !OpMatches(g.op_of(t))) return false;
    if (q.cpu_times != 0) {
      if (!depgraph::IsCpuKind(k)) return false;
      const CpuTime c = k == depgraph::TaskKind::kCpuApi
                            ? CpuTime::kApi
                            : (g.op_of(t).valid() ? CpuTime::kOp : CpuTime::kFramework);
      if (!(q.cpu_times & CpuTimeBit(c))) return false;
    }
    if (q.phases != 0 && !(q.phases & PhaseBit(g.phase(t)))) return false;
    if (names_ != nullptr && !NameMatches(g.name_id(t))) return false;
    if (q.no_layer && g.layer_of(t).valid()) return false;
    if (layers_ != nullptr && !layers_->Matches(g.layer_of(t))) return false;
    if (!resource_ok_.empty() && !resource_ok_[g.resource_of(t).value()]) return false;
    return steps_.empty() || std::binary_search(steps_.begin(), steps_.end(), g.step_of(t));
  }

  // Bytes of names and layer paths matched, a unit per 8 (the rate of
  // GraphWork), plus the ids decided.
  int64_t work() const {
    return (bytes_ + (layers_ != nullptr ? layers_->bytes_matched() : 0)) / 8 + decided_;
  }

 private:
  QueryTest(const Graph& g, const TaskQuery& q, bool dense)
      : g_(&g),
        q_(&q),
        name_verdicts_(g.name_count(), dense),
        op_verdicts_(g.op_count(), dense),
        steps_(q.steps) {
    // The steps asked for, sorted: a script may set and ask for any
    // int32, so no table sized by the largest one (2^31 + 1 overflowed).
    std::sort(steps_.begin(), steps_.end());
  }

  bool NameMatches(uint32_t id) {
    char v = name_verdicts_.Get(id);
    if (v == Verdicts::kUnknown) {
      const std::string_view name = g_->NameOf(id);
      bytes_ += static_cast<int64_t>(name.size());
      ++decided_;
      v = names_->Matches(name) ? Verdicts::kYes : Verdicts::kNo;
      name_verdicts_.Set(id, v);
    }
    return v == Verdicts::kYes;
  }

  // An op matches when its name or an enclosing op's does; the verdict of
  // every op on the walk up is kept.
  bool OpMatches(depgraph::OpId op) {
    if (!op.valid()) return false;
    op_chain_.clear();
    char verdict = Verdicts::kNo;
    for (depgraph::OpId cur = op; cur.valid(); cur = g_->op(cur).parent) {
      if (const char v = op_verdicts_.Get(cur.value()); v != Verdicts::kUnknown) {
        verdict = v;
        break;
      }
      op_chain_.push_back(cur.value());
      const std::string_view name = g_->NameOf(g_->op(cur).name_id);
      bytes_ += static_cast<int64_t>(name.size());
      ++decided_;
      if (ops_->Matches(name)) {
        verdict = Verdicts::kYes;
        break;
      }
    }
    // Below a match every op matches; below a non-match none did by itself.
    for (uint32_t o : op_chain_) op_verdicts_.Set(o, verdict);
    return verdict == Verdicts::kYes;
  }

  const Graph* g_;
  const TaskQuery* q_;
  std::unique_ptr<NameMatcher> names_, ops_;
  std::unique_ptr<LayerMatcher> layers_;
  Verdicts name_verdicts_, op_verdicts_;
  std::vector<bool> resource_ok_;
  std::vector<int32_t> steps_;
  std::vector<uint32_t> op_chain_;
  int64_t bytes_ = 0;
  int64_t decided_ = 0;
};

}  // namespace

absl::StatusOr<Selection> Select(const Graph& g, const TaskQuery& q) {
  REVERIE_ASSIGN_OR_RETURN(QueryTest test, QueryTest::Make(g, q, /*dense=*/true));
  std::vector<TaskId> out;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    if (test.Matches(TaskId(i))) out.push_back(TaskId(i));
  }
  return Selection::FromSorted(std::move(out));
}

absl::StatusOr<std::vector<TaskId>> SelectWithin(const Graph& g, const TaskQuery& q,
                                                 std::span<const TaskId> within, int64_t* work) {
  // Tables when the candidates are a good part of the graph (they then see
  // most names), maps when they are few; the answers are the same.
  const bool dense = within.size() >= g.task_count() / 8;
  REVERIE_ASSIGN_OR_RETURN(QueryTest test, QueryTest::Make(g, q, dense));
  std::vector<TaskId> out;
  for (TaskId t : within) {
    if (t.valid() && t.value() < g.task_count() && test.Matches(t)) out.push_back(t);
  }
  if (work != nullptr) *work = static_cast<int64_t>(within.size()) + test.work();
  return out;
}

Selection SelectAll(const Graph& g) {
  std::vector<TaskId> out;
  out.reserve(g.live_task_count());
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    if (!g.removed(TaskId(i)) && !g.is_step_mark(TaskId(i))) out.push_back(TaskId(i));
  }
  return Selection::FromSorted(std::move(out));
}

Selection SelectIf(const Graph& g, const std::function<bool(TaskId)>& pred) {
  std::vector<TaskId> out;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (!g.removed(t) && !g.is_step_mark(t) && pred(t)) out.push_back(t);
  }
  return Selection::FromSorted(std::move(out));
}

Selection LaunchesOf(const Graph& g, const Selection& gpu) {
  const depgraph::Adjacency& adj = g.adjacency();
  std::vector<TaskId> out;
  for (TaskId t : gpu) {
    if (g.removed(t)) continue;
    for (const auto edge : adj.in(t)) {
      const depgraph::Edge& e = g.edge(edge);
      if (e.kind == depgraph::EdgeKind::kLaunch) out.push_back(e.src);
    }
  }
  return Selection::FromUnsorted(std::move(out));
}

absl::StatusOr<depgraph::TaskKind> ParseTaskKind(std::string_view name) {
  for (int k = 0; k < depgraph::kTaskKindCount; ++k) {
    const auto kind = static_cast<depgraph::TaskKind>(k);
    if (depgraph::TaskKindName(kind) == name) return kind;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown task kind '", Sv(name),
      "' (kernel, memcpy, memset, cpu_api, cpu_work, comm, gpu, cpu)"));
}

absl::StatusOr<uint32_t> ParseKindMask(std::string_view name) {
  using depgraph::TaskKind;
  if (name == "gpu") {
    return KindBit(TaskKind::kKernel) | KindBit(TaskKind::kMemcpy) | KindBit(TaskKind::kMemset);
  }
  if (name == "cpu") return KindBit(TaskKind::kCpuApi) | KindBit(TaskKind::kCpuWork);
  REVERIE_ASSIGN_OR_RETURN(TaskKind k, ParseTaskKind(name));
  return KindBit(k);
}

absl::StatusOr<uint32_t> ParseKernelClassBit(std::string_view name) {
  std::string all;
  for (int c = 0; c < depgraph::kKernelClassCount; ++c) {
    const std::string_view n = depgraph::KernelClassName(static_cast<depgraph::KernelClass>(c));
    if (n == name) return 1u << c;
    absl::StrAppend(&all, c > 0 ? ", " : "", Sv(n));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown kernel class '", Sv(name), "' (", all, ")"));
}

absl::StatusOr<CpuTime> ParseCpuTime(std::string_view name) {
  if (name == "api") return CpuTime::kApi;
  if (name == "op") return CpuTime::kOp;
  if (name == "framework") return CpuTime::kFramework;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown cpu_time '", Sv(name), "' (api, op, framework)"));
}

absl::StatusOr<depgraph::Phase> ParsePhase(std::string_view name) {
  for (int p = 0; p < depgraph::kPhaseCount; ++p) {
    const auto phase = static_cast<depgraph::Phase>(p);
    if (depgraph::PhaseName(phase) == name) return phase;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown phase '", Sv(name),
      "' (forward, backward, update, data_loading, other, unknown)"));
}

absl::StatusOr<depgraph::ResourceKind> ParseResourceKind(std::string_view name) {
  for (int k = 0; k < 3; ++k) {
    const auto kind = static_cast<depgraph::ResourceKind>(k);
    if (depgraph::ResourceKindName(kind) == name) return kind;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown resource kind '", Sv(name), "' (thread, stream, channel)"));
}

absl::StatusOr<depgraph::EdgeKind> ParseEdgeKind(std::string_view name) {
  for (int k = 0; k < depgraph::kEdgeKindCount; ++k) {
    const auto kind = static_cast<depgraph::EdgeKind>(k);
    if (depgraph::EdgeKindName(kind) == name) return kind;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown edge kind '", Sv(name), "' (launch, sync, event, inter_thread, comm, user)"));
}

}  // namespace reverie::transforms
