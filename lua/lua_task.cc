// Lua bindings: shared handle helpers and the Task handle (its fields:
// lua_task_fields.cc; the Resource handle: lua_resource.cc).
#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "base/text.h"
#include "depgraph/kernel_class.h"
#include "lua/lua_internal.h"
#include "proto/trace_validate.h"
#include "transforms/select.h"
#include "transforms/structure.h"

namespace reverie::lua::internal {
namespace {

using depgraph::Graph;
using depgraph::ResourceId;
using depgraph::TaskId;

// ---- Task ----------------------------------------------------------------

int TaskEq(lua_State* L) {
  const TaskUd* a = TestTask(L, 1);
  const TaskUd* b = TestTask(L, 2);
  lua_pushboolean(L, a != nullptr && b != nullptr && a->id == b->id);
  return 1;
}

int TaskToString(lua_State* L) {
  const TaskUd* t = TestTask(L, 1);
  if (t == nullptr) luaL_typeerror(L, 1, kTaskMt);
  const Graph* g = State(L).graph();
  if (g == nullptr || t->id >= g->task_count()) {
    lua_pushfstring(L, "task %d", static_cast<int>(t->id));
    return 1;
  }
  const TaskId id(t->id);
  lua_pushfstring(L, "task %d ", static_cast<int>(t->id));
  PushView(L, depgraph::TaskKindName(g->kind(id)));
  lua_pushstring(L, g->removed(id) ? " (removed) '" : " '");
  PushView(L, g->name(id));
  lua_pushliteral(L, "'");
  lua_concat(L, 5);
  return 1;
}

// Pushes the tasks at the other end of `t`'s live edges (optionally of one
// kind) as an array.
int PushNeighbours(lua_State* L, TaskId t, bool parents, int kind_filter) {
  const Graph& g = GraphOrRaise(L);
  ChargeAdjacency(L);
  const depgraph::Adjacency& adj = g.adjacency();
  const std::span<const depgraph::EdgeId> edges = parents ? adj.in(t) : adj.out(t);
  ChargeWork(L, static_cast<int64_t>(edges.size()));
  lua_createtable(L, static_cast<int>(edges.size()), 0);
  int n = 0;
  for (const depgraph::EdgeId id : edges) {
    const depgraph::Edge& e = g.edge(id);
    if (kind_filter >= 0 && static_cast<int>(e.kind) != kind_filter) continue;
    PushTask(L, parents ? e.src : e.dst);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

int OptEdgeKind(lua_State* L, int idx) {
  if (lua_isnoneornil(L, idx)) return -1;
  // One parser for edge kinds (transforms/select.h), raised as a Lua error.
  absl::StatusOr<depgraph::EdgeKind> k = transforms::ParseEdgeKind(luaL_checkstring(L, idx));
  RaiseIfError(L, k.status());
  return static_cast<int>(*k);
}

int TaskNext(lua_State* L) {
  const TaskId t = CheckTask(L, 1);
  const TaskId n = GraphOrRaise(L).next_on_resource(t);
  if (!n.valid()) return 0;
  PushTask(L, n);
  return 1;
}

int TaskPrev(lua_State* L) {
  const TaskId t = CheckTask(L, 1);
  const TaskId p = GraphOrRaise(L).prev_on_resource(t);
  if (!p.valid()) return 0;
  PushTask(L, p);
  return 1;
}

int TaskParents(lua_State* L) {
  const TaskId t = CheckTask(L, 1);
  return PushNeighbours(L, t, true, OptEdgeKind(L, 2));
}

int TaskChildren(lua_State* L) {
  const TaskId t = CheckTask(L, 1);
  return PushNeighbours(L, t, false, OptEdgeKind(L, 2));
}

int TaskLauncher(lua_State* L) {
  const TaskId t = CheckTask(L, 1);
  // O(1): the graph keeps each task's launch edge (no adjacency read).
  const TaskId l = transforms::LauncherOf(GraphOrRaise(L), t);
  if (!l.valid()) return 0;
  PushTask(L, l);
  return 1;
}

int TaskLaunched(lua_State* L) {
  const TaskId t = CheckTask(L, 1);
  return PushNeighbours(L, t, false, static_cast<int>(depgraph::EdgeKind::kLaunch));
}

int TaskIsGpu(lua_State* L) {
  const TaskId t = CheckTask(L, 1);
  lua_pushboolean(L, depgraph::IsGpuKind(GraphOrRaise(L).kind(t)));
  return 1;
}

const luaL_Reg kTaskMethods[] = {{"next", TaskNext},         {"prev", TaskPrev},
                                 {"parents", TaskParents},   {"children", TaskChildren},
                                 {"launcher", TaskLauncher}, {"launched", TaskLaunched},
                                 {"is_gpu", TaskIsGpu},      {nullptr, nullptr}};

}  // namespace

int RaiseRemoved(lua_State* L, TaskId t) {
  const Graph& g = *State(L).graph();
  luaL_where(L, 1);
  lua_pushfstring(L, "task %d (", static_cast<int>(t.value()));
  PushView(L, g.name(t));
  lua_pushliteral(L, ") was removed");
  lua_concat(L, 4);
  return lua_error(L);
}

TaskId InGraph(lua_State* L, const Graph& g, const TaskUd& ud) {
  if (ud.id >= g.task_count()) {
    luaL_error(L, "task %d does not exist in this graph", static_cast<int>(ud.id));
  }
  return TaskId(ud.id);
}

void PushOp(lua_State* L, const depgraph::Graph& g, depgraph::OpId op) {
  const depgraph::CpuOp& o = g.op(op);
  lua_createtable(L, 0, 5);
  SetIntField(L, "id", op.value());
  PushView(L, g.op_name(op));
  lua_setfield(L, -2, "name");
  SetIntField(L, "own_ns", o.own_ns);
  SetIntField(L, "depth", o.depth);
  if (o.parent.valid()) {
    SetIntField(L, "parent", o.parent.value());
  }
}

void CheckLayerPath(lua_State* L, std::string_view path) {
  if (CapModulePath(path).size() != path.size()) {
    luaL_error(L,
               "a layer path of %I bytes is beyond what a layer path may be (%d levels, %I "
               "bytes)",
               static_cast<lua_Integer>(path.size()), kMaxModulePathDepth,
               static_cast<lua_Integer>(kMaxModulePathBytes));
  }
  // LayerFor hashes the path and each dotted prefix until one is known.
  const int64_t levels = 1 + static_cast<int64_t>(std::count(path.begin(), path.end(), '.'));
  ChargeWork(L, SatMul(levels, static_cast<int64_t>(path.size())) / kBytesPerUnit);
}

depgraph::LayerId LayerFor(Graph& g, std::string_view path) {
  const depgraph::LayerId known = g.FindLayer(path);
  if (known.valid()) return known;
  depgraph::LayerId parent;
  for (size_t dot = path.rfind('.'); dot != std::string_view::npos && dot > 0;
       dot = path.rfind('.', dot - 1)) {
    parent = g.FindLayer(path.substr(0, dot));
    if (parent.valid()) break;
  }
  return g.AddLayer(path, parent);
}

const Graph& GraphOrRaise(lua_State* L) {
  const Graph* g = State(L).graph();
  if (g == nullptr) luaL_error(L, "no graph is attached (the script has finished)");
  return *g;
}

Graph& MutableGraphOrRaise(lua_State* L) {
  EngineState& S = State(L);
  if (S.read_only) luaL_error(L, "the graph cannot be changed inside a schedule policy");
  if (S.run.session == nullptr) luaL_error(L, "no graph is attached (the script has finished)");
  return S.run.session->graph();
}

void PushTask(lua_State* L, TaskId t) {
  auto* ud = static_cast<TaskUd*>(lua_newuserdatauv(L, sizeof(TaskUd), 0));
  ud->id = t.value();
  lua_rawgeti(L, LUA_REGISTRYINDEX, State(L).task_mt_ref);
  lua_setmetatable(L, -2);
}

void PushResource(lua_State* L, ResourceId r) {
  auto* ud = static_cast<ResourceUd*>(lua_newuserdatauv(L, sizeof(ResourceUd), 0));
  ud->id = r.value();
  luaL_setmetatable(L, kResourceMt);
}

TaskUd* TestTask(lua_State* L, int idx) {
  void* p = lua_touserdata(L, idx);
  if (p == nullptr || !lua_getmetatable(L, idx)) return nullptr;
  // The metatable lives in the registry as long as the state: its address
  // names it (and no script can reach or replace it: LockMetatable).
  const bool task = lua_topointer(L, -1) == State(L).task_mt;
  lua_pop(L, 1);
  return task ? static_cast<TaskUd*>(p) : nullptr;
}

TaskId CheckTaskAny(lua_State* L, int idx) {
  const TaskUd* ud = TestTask(L, idx);
  if (ud == nullptr) luaL_typeerror(L, idx, kTaskMt);
  return InGraph(L, GraphOrRaise(L), *ud);
}

TaskId CheckTask(lua_State* L, int idx) {
  const TaskId t = CheckTaskAny(L, idx);
  if (GraphOrRaise(L).removed(t)) RaiseRemoved(L, t);
  return t;
}

ResourceId CheckResource(lua_State* L, int idx) {
  auto* ud = static_cast<ResourceUd*>(luaL_checkudata(L, idx, kResourceMt));
  if (ud->id >= GraphOrRaise(L).resource_count()) {
    luaL_error(L, "resource %d does not exist in this graph", static_cast<int>(ud->id));
  }
  return ResourceId(ud->id);
}

int64_t CheckNs(lua_State* L, int idx) {
  const lua_Number v = luaL_checknumber(L, idx);
  int64_t ns = 0;
  if (!DoubleToInt64(v, kMaxDurationNs, &ns)) {
    luaL_error(L, "time value %f ns is out of range (a duration, gap or delay is at most 2^50 ns, 13 days)",
               static_cast<double>(v));
  }
  return ns;
}

int64_t FieldNs(lua_State* L, int table, const char* ns_key, const char* us_key, int64_t dflt) {
  const int top = lua_gettop(L);
  int64_t v = dflt;
  if (lua_getfield(L, table, ns_key) != LUA_TNIL) {
    v = CheckNs(L, -1);
  } else if (us_key != nullptr && lua_getfield(L, table, us_key) != LUA_TNIL) {
    const lua_Number us = luaL_checknumber(L, -1);
    if (!DoubleToInt64(us * 1000.0, kMaxDurationNs, &v)) {
      luaL_error(L, "%s = %f is out of range (at most 2^50 ns, 13 days)", us_key,
                 static_cast<double>(us));
    }
  }
  lua_settop(L, top);
  return v;
}

lua_Integer CheckInteger(lua_State* L, int idx, const char* what) {
  int is_integer = 0;
  const lua_Integer v = lua_tointegerx(L, idx, &is_integer);
  if (!is_integer) {
    if (lua_type(L, idx) == LUA_TNUMBER) {
      luaL_error(L, "%s: integer expected, got %f", what, static_cast<double>(lua_tonumber(L, idx)));
    }
    luaL_error(L, "%s: integer expected, got %s", what, luaL_typename(L, idx));
  }
  return v;
}

int32_t CheckInt32(lua_State* L, int idx, const char* what) {
  const lua_Integer v = CheckInteger(L, idx, what);
  if (v < INT32_MIN || v > INT32_MAX) luaL_error(L, "%s = %I is out of range (a 32-bit integer)", what, v);
  return static_cast<int32_t>(v);
}

int32_t CheckStep(lua_State* L, int idx, const char* what) {
  const lua_Integer v = CheckInteger(L, idx, what);
  const auto n = static_cast<lua_Integer>(GraphOrRaise(L).step_count());
  if (v < -1 || v >= n) {
    luaL_error(L, "%s = %I: no such step (-1 for none, or 0 to %I)", what, v, n - 1);
  }
  return static_cast<int32_t>(v);
}

int64_t CheckBytes(lua_State* L, int idx, const char* what) {
  const lua_Integer v = CheckInteger(L, idx, what);
  if (v < 0 || v > kMaxBytes) luaL_error(L, "%s = %I is out of range (0 to 2^50 bytes)", what, v);
  return v;
}

void CheckFields(lua_State* L, int idx, std::string_view what, std::span<const std::string_view> allowed) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    std::string_view k = "?";
    if (lua_type(L, -2) == LUA_TSTRING) {  // never lua_tolstring a number key: it breaks lua_next
      size_t n = 0;
      const char* s = lua_tolstring(L, -2, &n);
      k = {s, n};
    }
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      std::string names;
      for (std::string_view a : allowed) absl::StrAppend(&names, names.empty() ? "" : ", ", Sv(a));
      Raise(L, absl::StrCat(Sv(what), ": unknown field '", Abbreviate(k, 100), "' (", names, ")"));
    }
    lua_pop(L, 1);
  }
}

void NewHandleClass(lua_State* L, const char* mt, const char* what, const luaL_Reg* methods,
                    lua_CFunction index, lua_CFunction newindex, lua_CFunction eq,
                    lua_CFunction tostring, std::span<const HandleField> fields) {
  luaL_newmetatable(L, mt);
  lua_newtable(L);
  SetBindings(L, methods);
  for (const auto& [name, code] : fields) {
    REVERIE_CHECK(code != 0 && lua_getfield(L, -1, name) == LUA_TNIL);  // not also a method
    lua_pop(L, 1);
    lua_pushinteger(L, code);
    lua_setfield(L, -2, name);
  }
  if (newindex != nullptr) {
    lua_pushvalue(L, -1);  // the class table is the upvalue of both
    PushBinding(L, newindex, 1);
    lua_setfield(L, -3, "__newindex");
  }
  PushBinding(L, index, 1);
  lua_setfield(L, -2, "__index");
  PushBinding(L, eq, 0);
  lua_setfield(L, -2, "__eq");
  PushBinding(L, tostring, 0);
  lua_setfield(L, -2, "__tostring");
  LockMetatable(L, what);
  lua_pop(L, 1);
}

void RegisterTask(lua_State* L) {
  NewHandleClass(L, kTaskMt, "tasks", kTaskMethods, TaskIndex, TaskNewIndex, TaskEq, TaskToString,
                 TaskFields());
  luaL_getmetatable(L, kTaskMt);
  State(L).task_mt = lua_topointer(L, -1);
  State(L).task_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

}  // namespace reverie::lua::internal
