// Lua bindings: graph:insert, a CPU or GPU task (with its launch call and
// the framework op time that issues it) placed after, before or on a
// resource (transforms/structure.h, transforms/ops.h).
#include <cstring>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lua/lua_internal.h"
#include "transforms/ops.h"
#include "transforms/structure.h"

namespace reverie::lua::internal {
namespace {

using depgraph::Graph;
using depgraph::TaskId;
using depgraph::TaskKind;

// ---- insert ----------------------------------------------------------------

constexpr std::string_view kInsertFields[] = {
    "kind",           "name",          "duration_ns",   "duration_us",      "gap_ns",
    "gap_us",         "after",         "before",        "resource",         "phase",
    "layer",          "step",     "bytes",         "priority",         "launch",
    "launch_after",   "launch_duration_ns", "launch_duration_us", "launch_gap_ns",
    "launch_gap_us",  "launch_name",   "with_op",       "op_ns",            "op_us",
    "iteration"};  // deprecated name of "step" (reverie 0.1.0)

struct InsertArgs {
  const char* kind = nullptr;
  std::string name, layer, launch_name, op;
  const char* phase = nullptr;
  transforms::Where where;
  int64_t duration = 0, gap = 0, bytes = 0;
  bool has_layer = false, has_step = false, has_priority = false;
  int32_t step = -1, priority = 0;
  bool launch = true;
  TaskId launch_after;
  int64_t launch_duration = -1, launch_gap = 0;
  bool has_launch_name = false;
  bool has_op = false;   // with_op: the op is `op`
  int64_t op_ns = -1;    // -1: the op's median cost in the trace
};

struct InsertOut {
  TaskId task, launch;
  int64_t walked = 0;    // stream tasks stepped over looking for a launch call
  int64_t ops_read = 0;  // ops read for with_op's median
};

// with_op: the inserted call gets the CPU cost of the op that would issue it
// (transforms/ops.h), measured on the trace's ops of that name unless op_ns
// gives it.
absl::Status AddInsertedOpTime(EngineState& S, const InsertArgs& a, InsertOut* out) {
  Graph& g = S.run.session->graph();
  const TaskId call = out->launch.valid() ? out->launch : out->task;
  if (!depgraph::IsCpuKind(g.kind(call))) {
    return absl::InvalidArgumentError(
        "insert: with_op needs a CPU call (a GPU task inserted with its launch)");
  }
  int64_t cost = a.op_ns;
  if (cost < 0) {
    const std::optional<int64_t> median = CachedOpMedian(S, a.op, &out->ops_read);
    if (!median) {
      return absl::InvalidArgumentError(absl::StrCat(
          "insert: the trace records no op '", a.op,
          "' to take its CPU cost from; give op_ns (or op_us)"));
    }
    cost = *median;
  }
  REVERIE_RETURN_IF_ERROR(transforms::AddOpTime(g, call, a.op, cost).status());
  OpAdded(S, a.op, cost);
  return absl::OkStatus();
}

absl::Status DoInsert(EngineState& S, const InsertArgs& a, InsertOut* out) {
  Graph& g = S.run.session->graph();
  REVERIE_ASSIGN_OR_RETURN(TaskKind kind, transforms::ParseTaskKind(a.kind));
  depgraph::TaskSpec spec{
      .kind = kind, .name = a.name, .duration_ns = a.duration, .gap_ns = a.gap, .bytes = a.bytes};
  const TaskId anchor = a.where.anchor;
  if (anchor.valid()) {
    REVERIE_RETURN_IF_ERROR(transforms::CheckLive(g, anchor));
    spec.phase = g.phase(anchor);
    spec.layer = g.layer_of(anchor);
    spec.step = g.step_of(anchor);
  }
  if (a.phase != nullptr) {
    REVERIE_ASSIGN_OR_RETURN(depgraph::Phase p, transforms::ParsePhase(a.phase));
    spec.phase = p;
  }
  if (a.has_layer) {
    spec.layer = a.layer.empty() ? depgraph::LayerId() : LayerFor(g, a.layer);
  }
  if (a.has_step) spec.step = a.step;
  if (depgraph::IsGpuKind(spec.kind)) {
    transforms::LaunchOptions o;
    o.with_launch = a.launch;
    o.launch_after = a.launch_after;
    o.launch_duration_ns = a.launch_duration;
    o.launch_gap_ns = a.launch_gap;
    if (a.has_launch_name) o.launch_name = a.launch_name;
    REVERIE_ASSIGN_OR_RETURN(
        transforms::InsertedGpuTask r,
        transforms::InsertGpuTask(g, a.where, spec, o, SessionLaunchModel(S), &out->walked));
    out->task = r.gpu;
    out->launch = r.launch;
  } else {
    REVERIE_ASSIGN_OR_RETURN(TaskId r, transforms::InsertTask(g, a.where, spec));
    out->task = r;
  }
  if (a.has_priority) g.set_priority(out->task, a.priority);
  if (a.has_op) return AddInsertedOpTime(S, a, out);
  return absl::OkStatus();
}

}  // namespace

int GraphInsert(lua_State* L) {
  luaL_checktype(L, 2, LUA_TTABLE);
  MutableGraphOrRaise(L);
  EngineState& S = State(L);
  CheckFields(L, 2, "insert", kInsertFields);
  InsertArgs a;
  lua_getfield(L, 2, "kind");
  a.kind = luaL_optstring(L, -1, "cpu_work");
  if (lua_getfield(L, 2, "name") != LUA_TSTRING) return luaL_error(L, "insert: 'name' is required");
  a.name = lua_tostring(L, -1);
  a.duration = FieldNs(L, 2, "duration_ns", "duration_us", 0);
  a.gap = FieldNs(L, 2, "gap_ns", "gap_us", 0);
  int places = 0;
  if (lua_getfield(L, 2, "after") != LUA_TNIL) {
    a.where = transforms::Where::After(CheckTaskAny(L, -1));
    ++places;
  }
  if (lua_getfield(L, 2, "before") != LUA_TNIL) {
    a.where = transforms::Where::Before(CheckTaskAny(L, -1));
    ++places;
  }
  if (lua_getfield(L, 2, "resource") != LUA_TNIL) {
    a.where = transforms::Where::OnResource(CheckResource(L, -1));
    ++places;
  }
  if (places != 1) return luaL_error(L, "insert: give exactly one of after, before, resource");
  if (lua_getfield(L, 2, "phase") != LUA_TNIL) a.phase = luaL_checkstring(L, -1);
  if (lua_getfield(L, 2, "layer") != LUA_TNIL) {
    a.has_layer = true;
    size_t n = 0;
    const char* layer = luaL_checklstring(L, -1, &n);
    a.layer.assign(layer, n);
    CheckLayerPath(L, a.layer);
  }
  if (GetStepField(L, 2) != LUA_TNIL) {
    a.has_step = true;
    a.step = CheckStep(L, -1, "insert: step");
  }
  if (lua_getfield(L, 2, "bytes") != LUA_TNIL) a.bytes = CheckBytes(L, -1, "insert: bytes");
  if (lua_getfield(L, 2, "priority") != LUA_TNIL) {
    a.has_priority = true;
    a.priority = CheckInt32(L, -1, "insert: priority");
  }
  if (lua_getfield(L, 2, "launch") != LUA_TNIL) a.launch = lua_toboolean(L, -1);
  if (lua_getfield(L, 2, "launch_after") != LUA_TNIL) a.launch_after = CheckTask(L, -1);
  a.launch_duration = FieldNs(L, 2, "launch_duration_ns", "launch_duration_us", -1);
  a.launch_gap = FieldNs(L, 2, "launch_gap_ns", "launch_gap_us", 0);
  if (lua_getfield(L, 2, "launch_name") != LUA_TNIL) {
    a.has_launch_name = true;
    a.launch_name = luaL_checkstring(L, -1);
  }
  if (lua_getfield(L, 2, "with_op") != LUA_TNIL) {
    a.has_op = true;
    a.op = luaL_checkstring(L, -1);
  }
  a.op_ns = FieldNs(L, 2, "op_ns", "op_us", -1);
  // A new task, maybe its launch call, its edge and an op task, maybe new
  // names and a layer.
  ChargeMemory(L, 3 * kTaskBytes + 2 * kEdgeBytes + 4 * kStringBytes +
                      2 * static_cast<int64_t>(a.name.size() + a.launch_name.size() +
                                               a.layer.size() + a.op.size()));
  // The launch call goes next to the anchor's own (found from the launch
  // edges the graph keeps). Without one, finding the nearest walks the
  // stream, and an explicit launch call, or the one found after the anchor,
  // is checked for a cycle (transforms::InsertGpuTask): charged after, for
  // the tasks walked and what the check read and visited.
  const int64_t reach_before = S.graph()->reach_work();
  InsertOut out;
  absl::Status inserted = DoInsert(S, a, &out);
  ChargeReachWork(L, reach_before);
  ChargeSteps(L, out.walked);
  if (out.ops_read > 0) ChargeWork(L, 2 * out.ops_read + 1);  // with_op's median
  RaiseIfError(L, inserted);
  PushTask(L, out.task);
  if (!out.launch.valid()) return 1;
  PushTask(L, out.launch);
  return 2;
}

}  // namespace reverie::lua::internal
