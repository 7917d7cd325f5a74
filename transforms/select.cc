#include "transforms/select.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "depgraph/kernel_class.h"
#include "transforms/pattern.h"

namespace reverie::transforms {

using depgraph::Graph;
using depgraph::TaskId;

absl::StatusOr<Selection> Select(const Graph& g, const TaskQuery& q) {
  const size_t n = g.task_count();
  std::vector<bool> name_ok;
  if (q.HasNameFilter()) {
    REVERIE_ASSIGN_OR_RETURN(std::vector<bool> m, MatchNameTable(g, q.names, q.name_regex));
    name_ok = std::move(m);
  }
  std::vector<bool> layer_ok;
  if (!q.layers.empty()) layer_ok = MatchLayers(g, q.layers);
  std::vector<bool> resource_ok;
  if (!q.resources.empty() || q.resource_kinds != 0) {
    resource_ok.assign(g.resource_count(), q.resources.empty());
    for (depgraph::ResourceId r : q.resources) {
      if (!r.valid() || r.value() >= g.resource_count()) {
        return absl::InvalidArgumentError(absl::StrCat("no resource ", r.value()));
      }
      resource_ok[r.value()] = true;
    }
    if (q.resource_kinds != 0) {
      for (uint32_t r = 0; r < g.resource_count(); ++r) {
        if (!(q.resource_kinds & ResourceKindBit(g.resource(depgraph::ResourceId(r)).kind))) {
          resource_ok[r] = false;
        }
      }
    }
  }
  // The steps asked for, sorted: a script may set and ask for any
  // int32, so no table sized by the largest one (2^31 + 1 overflowed).
  std::vector<int32_t> iters(q.steps);
  std::sort(iters.begin(), iters.end());
  // An op matches when its name or an enclosing op's does (parents first).
  std::vector<bool> op_ok;
  if (!q.ops.empty()) {
    REVERIE_ASSIGN_OR_RETURN(std::vector<bool> m, MatchNameTable(g, q.ops, ""));
    op_ok.assign(g.op_count(), false);
    for (uint32_t o = 0; o < g.op_count(); ++o) {
      const depgraph::CpuOp& op = g.op(depgraph::OpId(o));
      op_ok[o] = (m)[op.name_id] || (op.parent.valid() && op_ok[op.parent.value()]);
    }
  }
  std::vector<TaskId> out;
  for (uint32_t i = 0; i < n; ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.is_step_mark(t)) continue;
    if (q.kernel_classes != 0) {
      const depgraph::TaskKind k = g.kind(t);
      if (!depgraph::IsGpuKind(k) && k != depgraph::TaskKind::kComm) continue;
      if (!(q.kernel_classes & (1u << static_cast<int>(depgraph::TaskClass(g, t))))) continue;
    }
    if (q.kinds != 0 && !(q.kinds & KindBit(g.kind(t)))) continue;
    if (!q.ops.empty() && (!g.op_of(t).valid() || !op_ok[g.op_of(t).value()])) continue;
    if (q.cpu_times != 0) {
      const depgraph::TaskKind k = g.kind(t);
      if (!depgraph::IsCpuKind(k)) continue;
      const CpuTime c = k == depgraph::TaskKind::kCpuApi
                            ? CpuTime::kApi
                            : (g.op_of(t).valid() ? CpuTime::kOp : CpuTime::kFramework);
      if (!(q.cpu_times & CpuTimeBit(c))) continue;
    }
    if (q.phases != 0 && !(q.phases & PhaseBit(g.phase(t)))) continue;
    if (!name_ok.empty() && !name_ok[g.name_id(t)]) continue;
    if (q.no_layer && g.layer_of(t).valid()) continue;
    if (!q.layers.empty()) {
      const depgraph::LayerId l = g.layer_of(t);
      if (!l.valid() || l.value() >= layer_ok.size() || !layer_ok[l.value()]) continue;
    }
    if (!resource_ok.empty() && !resource_ok[g.resource_of(t).value()]) continue;
    if (!iters.empty() && !std::binary_search(iters.begin(), iters.end(), g.step_of(t))) {
      continue;
    }
    out.push_back(t);
  }
  return Selection::FromSorted(std::move(out));
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
