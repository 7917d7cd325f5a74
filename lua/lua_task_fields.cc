// Lua bindings: a task handle's fields, read (t.name) and set
// (t.duration_ns = ...), for lua_task.cc's Task handle class.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "depgraph/kernel_class.h"
#include "lua/lua_internal.h"
#include "transforms/cost_model.h"
#include "transforms/edit.h"
#include "transforms/select.h"
#include "transforms/structure.h"

namespace reverie::lua::internal {
namespace {

using depgraph::Graph;
using depgraph::TaskId;

// The fields of a task, by code: the handle class's table (the __index
// and __newindex closures' upvalue) maps each method name to its function
// and each field name to its code, so one table lookup of the key, whose
// hash Lua computed when it interned the string, replaces a chain of
// string comparisons (a script reads a million fields a run).
enum class TaskField : lua_Integer {
  kNone = 0,
  kId,
  kRemoved,
  kName,
  kKind,
  kDurationNs,
  kGapNs,
  kPriority,
  kBytes,
  kStep,
  kMeasuredStartNs,
  kPhase,
  kLayer,
  kResource,
  kGeometry,
  kClass,
  kCollective,
  kOp,
  kOpId,
  kWork,
  kConverted,
};

constexpr HandleField Field(const char* name, TaskField f) {
  return {name, static_cast<lua_Integer>(f)};
}

constexpr HandleField kTaskFields[] = {
    Field("id", TaskField::kId),
    Field("removed", TaskField::kRemoved),
    Field("name", TaskField::kName),
    Field("kind", TaskField::kKind),
    Field("duration_ns", TaskField::kDurationNs),
    Field("gap_ns", TaskField::kGapNs),
    Field("priority", TaskField::kPriority),
    Field("bytes", TaskField::kBytes),
    Field("step", TaskField::kStep),
    Field("iteration", TaskField::kStep),  // step's name in reverie 0.1.0
    Field("measured_start_ns", TaskField::kMeasuredStartNs),
    Field("phase", TaskField::kPhase),
    Field("layer", TaskField::kLayer),
    Field("resource", TaskField::kResource),
    Field("geometry", TaskField::kGeometry),
    Field("class", TaskField::kClass),
    Field("collective", TaskField::kCollective),
    Field("op", TaskField::kOp),
    Field("op_id", TaskField::kOpId),
    Field("work", TaskField::kWork),
    Field("converted", TaskField::kConverted),
};

// Looks key 2 up in the class table: pushes a method and returns kNone
// with *method set, or returns the field's code (kNone when unknown),
// pushing nothing.
TaskField LookUpTaskKey(lua_State* L, bool* method) {
  lua_pushvalue(L, 2);
  const int type = lua_rawget(L, lua_upvalueindex(1));
  *method = type == LUA_TFUNCTION;
  if (*method) return TaskField::kNone;
  const auto field = static_cast<TaskField>(type == LUA_TNUMBER ? lua_tointeger(L, -1) : 0);
  lua_pop(L, 1);
  return field;
}

// The collective a communication task runs, from its name ("AllReduce",
// ...; "other" when the name does not say, as RCCL's ncclDevKernel_Generic,
// unless the framework's record of the call that launched it says:
// transforms/collectives.h).
void PushCollective(lua_State* L, const Graph& g, TaskId t) {
  depgraph::Collective kind = depgraph::CollectiveOfName(g.name(t));
  if (kind == depgraph::Collective::kOther) {
    const int64_t i = CollectiveRecordOf(L, t);  // a binary search
    if (i >= 0) kind = depgraph::CollectiveOfName(State(L).run.model->collectives[i].name);
  }
  PushView(L, depgraph::CollectiveName(kind));
}

// Pushes field `f` of live task `t`; returns the number of values pushed
// (0: nil, the field does not apply to this task).
int PushTaskField(lua_State* L, const Graph& g, TaskId t, TaskField f) {
  switch (f) {
    case TaskField::kName:
      PushView(L, g.name(t));
      break;
    case TaskField::kKind:
      PushView(L, depgraph::TaskKindName(g.kind(t)));
      break;
    case TaskField::kDurationNs:
      lua_pushinteger(L, g.duration_ns(t));
      break;
    case TaskField::kGapNs:
      lua_pushinteger(L, g.gap_ns(t));
      break;
    case TaskField::kPriority:
      lua_pushinteger(L, g.priority(t));
      break;
    case TaskField::kBytes:
      lua_pushinteger(L, g.bytes(t));
      break;
    case TaskField::kStep:
      lua_pushinteger(L, g.step_of(t));
      break;
    case TaskField::kMeasuredStartNs:
      if (!g.measured(t)) return 0;  // nil: inserted by a script
      lua_pushinteger(L, g.measured_start_ns(t));
      break;
    case TaskField::kPhase:
      PushView(L, depgraph::PhaseName(g.phase(t)));
      break;
    case TaskField::kLayer: {
      const depgraph::LayerId l = g.layer_of(t);
      if (!l.valid() || l.value() >= g.layer_count()) return 0;
      lua_pushstring(L, g.layer(l).path.c_str());
      break;
    }
    case TaskField::kResource:
      PushResource(L, g.resource_of(t));
      break;
    case TaskField::kGeometry:
      PushGeometry(L, g.geometry(t));
      break;
    case TaskField::kClass:
      if (!depgraph::IsGpuKind(g.kind(t))) return 0;
      PushView(L, depgraph::KernelClassName(depgraph::TaskClass(g, t)));
      break;
    case TaskField::kCollective:
      if (depgraph::TaskClass(g, t) != depgraph::KernelClass::kCommunication) return 0;
      PushCollective(L, g, t);
      break;
    case TaskField::kOp:
      if (!g.op_of(t).valid()) return 0;
      PushOp(L, g, g.op_of(t));
      break;
    case TaskField::kOpId:
      // t.op without building its table: what a script testing for an op
      // or keying by it needs (graph:op(id) gives the table).
      if (!g.op_of(t).valid()) return 0;
      lua_pushinteger(L, g.op_of(t).value());
      break;
    case TaskField::kWork:
      if (g.kind(t) != depgraph::TaskKind::kKernel) return 0;
      PushKernelWork(L, t);
      break;
    case TaskField::kConverted: {
      // The math a dtype retime converted the kernel to (its name's marker).
      const std::optional<hardware::Math> m = g.kind(t) == depgraph::TaskKind::kKernel
                                                  ? transforms::ConvertedMath(g.name(t))
                                                  : std::nullopt;
      if (!m) return 0;
      PushView(L, hardware::MathName(*m));
      break;
    }
    case TaskField::kNone:
    case TaskField::kId:
    case TaskField::kRemoved:
      return 0;  // answered by TaskIndex
  }
  return 1;
}

}  // namespace

int TaskIndex(lua_State* L) {
  const TaskUd* ud = TestTask(L, 1);
  if (ud == nullptr) luaL_typeerror(L, 1, kTaskMt);
  bool method = false;
  const TaskField f = LookUpTaskKey(L, &method);
  if (method) return 1;
  if (f == TaskField::kNone) {
    return luaL_error(L,
                      "task has no field '%s' (id, name, kind, duration_ns, gap_ns, phase, "
                      "layer, step, resource, priority, bytes, removed, "
                      "measured_start_ns, geometry, op, op_id, class, collective, work, converted)",
                      luaL_checkstring(L, 2));
  }
  if (f == TaskField::kId) {
    lua_pushinteger(L, ud->id);
    return 1;
  }
  const Graph& g = GraphOrRaise(L);
  const TaskId t = InGraph(L, g, *ud);
  if (f == TaskField::kRemoved) {
    lua_pushboolean(L, g.removed(t));
    return 1;
  }
  if (g.removed(t)) return RaiseRemoved(L, t);
  return PushTaskField(L, g, t, f);
}

namespace {

absl::Status SetPhase(Graph& g, TaskId t, const char* name) {
  REVERIE_ASSIGN_OR_RETURN(depgraph::Phase p, transforms::ParsePhase(name));
  g.set_phase(t, p);
  return absl::OkStatus();
}

// t.layer = path (nil: none); a new path is charged like a new name.
void SetLayer(lua_State* L, Graph& g, TaskId t) {
  if (lua_isnil(L, 3)) {
    g.set_layer(t, depgraph::LayerId());
    return;
  }
  size_t n = 0;
  const char* s = luaL_checklstring(L, 3, &n);
  CheckLayerPath(L, std::string_view(s, n));
  const size_t layers = g.layer_count();
  g.set_layer(t, LayerFor(g, std::string_view(s, n)));
  if (g.layer_count() > layers) ChargeMemory(L, 2 * static_cast<int64_t>(n) + kStringBytes);
}

}  // namespace

int TaskNewIndex(lua_State* L) {
  const TaskUd* ud = TestTask(L, 1);
  if (ud == nullptr) luaL_typeerror(L, 1, kTaskMt);
  bool method = false;
  const TaskField f = LookUpTaskKey(L, &method);
  if (method) lua_pop(L, 1);
  Graph& g = MutableGraphOrRaise(L);
  const TaskId t = InGraph(L, g, *ud);
  if (g.removed(t)) return RaiseRemoved(L, t);
  switch (f) {
    case TaskField::kDurationNs:
      RaiseIfError(L, transforms::SetTaskDuration(g, t, CheckNs(L, 3)));
      break;
    case TaskField::kGapNs:
      RaiseIfError(L, transforms::SetTaskGap(g, t, CheckNs(L, 3)));
      break;
    case TaskField::kPriority:
      g.set_priority(t, CheckInt32(L, 3, "priority"));
      break;
    case TaskField::kBytes:
      g.set_bytes(t, CheckBytes(L, 3, "bytes"));
      break;
    case TaskField::kStep:
      g.set_step(t, CheckStep(L, 3, "step"));
      break;
    case TaskField::kPhase:
      RaiseIfError(L, SetPhase(g, t, luaL_checkstring(L, 3)));
      break;
    case TaskField::kName: {
      size_t n = 0;
      const char* s = luaL_checklstring(L, 3, &n);
      // A new name is a new entry of the name table and its index: charged
      // once made (at most this one string beyond the cap, and the error is
      // sticky).
      const size_t names = g.name_count();
      g.set_name(t, std::string_view(s, n));
      if (g.name_count() > names) ChargeMemory(L, 2 * static_cast<int64_t>(n) + kStringBytes);
      break;
    }
    case TaskField::kLayer:
      SetLayer(L, g, t);
      break;
    default:
      return luaL_error(L,
                        "task field '%s' cannot be set (duration_ns, gap_ns, priority, bytes, "
                        "step, phase, name, layer)",
                        luaL_checkstring(L, 2));
  }
  return 0;
}

std::span<const HandleField> TaskFields() { return kTaskFields; }

}  // namespace reverie::lua::internal
