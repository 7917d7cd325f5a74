// Lua bindings: the `graph` object (queries, insert / remove, dependencies,
// resources, schedule policy, simulation, model facts).
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "lua/lua_internal.h"
#include "transforms/ops.h"
#include "transforms/remove.h"
#include "transforms/structure.h"

namespace reverie::lua::internal {
namespace {

using depgraph::Graph;
using depgraph::ResourceId;
using depgraph::TaskId;

int GraphAll(lua_State* L) {
  const Graph& g = GraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(g.task_count()));
  size_t live = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) live += !g.removed(TaskId(i));
  SelectionUd* s = NewSelection(L, live);
  size_t n = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    if (!g.removed(TaskId(i))) s->ids[n++] = i;
  }
  return 1;
}

int GraphNone(lua_State* L) {
  NewSelection(L, 0);
  return 1;
}

// graph:from_tasks{t1, t2, ...}: a selection of the given tasks.
int GraphFromTasks(lua_State* L) {
  luaL_checktype(L, 2, LUA_TTABLE);
  GraphOrRaise(L);
  // Raw: a __len metamethod could claim any length (issue 29, D21).
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, 2));
  ChargeWork(L, SatMul(4, n));  // read, then sort
  std::vector<TaskId> ids;
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 2, i);
    ids.push_back(CheckTaskAny(L, -1));
    lua_pop(L, 1);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  PushSelection(L, ids);
  return 1;
}

int GraphTask(lua_State* L) {
  const lua_Integer id = CheckInteger(L, 2, "task: id");
  const Graph& g = GraphOrRaise(L);
  if (id < 0 || static_cast<uint64_t>(id) >= g.task_count()) return 0;
  PushTask(L, TaskId(static_cast<uint32_t>(id)));
  return 1;
}

int GraphTaskCount(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(GraphOrRaise(L).live_task_count()));
  return 1;
}

int GraphStepCount(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(GraphOrRaise(L).step_count()));
  return 1;
}

int GraphStepName(lua_State* L) {
  const lua_Integer i = CheckInteger(L, 2, "step_name: step");
  const Graph& g = GraphOrRaise(L);
  if (i < 0 || static_cast<uint64_t>(i) >= g.step_count()) return 0;
  lua_pushstring(L, g.step_info(static_cast<int32_t>(i)).name.c_str());
  return 1;
}

// graph:step_counted(i): whether step i counts in the mean step time
// (depgraph/step_time.h rule 4); nil for no such step.
int GraphStepCounted(lua_State* L) {
  const lua_Integer i = CheckInteger(L, 2, "step_counted: step");
  const Graph& g = GraphOrRaise(L);
  if (i < 0 || static_cast<uint64_t>(i) >= g.step_count()) return 0;
  lua_pushboolean(L, g.step_info(static_cast<int32_t>(i)).counted);
  return 1;
}

int GraphLayers(lua_State* L) {
  const Graph& g = GraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(g.layer_count()));
  lua_createtable(L, static_cast<int>(g.layer_count()), 0);
  for (uint32_t l = 0; l < g.layer_count(); ++l) {
    lua_pushstring(L, g.layer(depgraph::LayerId(l)).path.c_str());
    lua_rawseti(L, -2, l + 1);
  }
  return 1;
}

int GraphResources(lua_State* L) {
  const Graph& g = GraphOrRaise(L);
  const char* kind = luaL_optstring(L, 2, nullptr);
  ChargeWork(L, static_cast<int64_t>(g.resource_count()));
  lua_newtable(L);
  int n = 0;
  for (uint32_t r = 0; r < g.resource_count(); ++r) {
    const depgraph::ResourceKind k = g.resource(ResourceId(r)).kind;
    if (kind != nullptr && depgraph::ResourceKindName(k) != kind) continue;
    PushResource(L, ResourceId(r));
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

// ---- remove, dependencies, resources ---------------------------------------

int GraphRemove(lua_State* L) {
  MutableGraphOrRaise(L);
  const SelectionUd* s = nullptr;
  if (TestTask(L, 2) != nullptr) {
    const TaskId t = CheckTask(L, 2);
    SelectionUd* one = NewSelection(L, 1);
    one->ids[0] = t.value();
    s = one;
  } else {
    s = CheckSelection(L, 2);
  }
  return RemoveAndCount(L, s);
}

absl::Status DoAddEdge(EngineState& S, TaskId src, TaskId dst, const char* kind, int64_t delay) {
  depgraph::EdgeKind k = depgraph::EdgeKind::kUser;
  if (kind != nullptr) {
    REVERIE_ASSIGN_OR_RETURN(depgraph::EdgeKind p, transforms::ParseEdgeKind(kind));
    k = p;
  }
  if (delay < INT32_MIN || delay > INT32_MAX) {
    return absl::InvalidArgumentError("add_edge: delay_ns out of range");
  }
  return transforms::AddDependency(S.run.session->graph(), src, dst, k, static_cast<int32_t>(delay))
      .status();
}

// graph:add_edge(src, dst [, {kind =, delay_ns | delay_us =, on_cycle =}]):
// true once added. on_cycle = "skip" makes an edge that would close a cycle
// (the trace orders the two tasks the other way) a logged no-op returning
// false, as the graph builder skips a sync it cannot order (issue 29, D33);
// the default, "error", raises.
int GraphAddEdge(lua_State* L) {
  const Graph& g = MutableGraphOrRaise(L);
  const TaskId src = CheckTask(L, 2);
  const TaskId dst = CheckTask(L, 3);
  const char* kind = nullptr;
  int64_t delay = 0;
  bool skip_cycle = false;
  if (!lua_isnoneornil(L, 4)) {
    luaL_checktype(L, 4, LUA_TTABLE);
    if (lua_getfield(L, 4, "kind") != LUA_TNIL) kind = luaL_checkstring(L, -1);
    delay = FieldNs(L, 4, "delay_ns", "delay_us", 0);
    if (lua_getfield(L, 4, "on_cycle") != LUA_TNIL) {
      const char* v = lua_tostring(L, -1);
      skip_cycle = v != nullptr && std::strcmp(v, "skip") == 0;
      if (!skip_cycle && (v == nullptr || std::strcmp(v, "error") != 0)) {
        return luaL_error(L, "add_edge: on_cycle must be 'error' or 'skip', got '%s'",
                          v != nullptr ? v : luaL_typename(L, -1));
      }
    }
  }
  // The cycle check walks what `dst` reaches below `src` (Graph::Reaches):
  // charged for what it read and visited.
  ChargeMemory(L, kEdgeBytes);
  const int64_t reach_before = g.reach_work();
  if (skip_cycle && src != dst && g.Reaches(dst, src)) {
    ChargeReachWork(L, reach_before);
    luaL_where(L, 1);
    LogLine(L, absl::StrCat(lua_tostring(L, -1), "add_edge: skipped ", kind != nullptr ? kind : "user",
                            " dependency ", src.value(), " (", Sv(g.name(src)), ") -> ", dst.value(),
                            " (", Sv(g.name(dst)), "): it would create a cycle (", dst.value(),
                            " already leads to ", src.value(), ")"));
    lua_pushboolean(L, 0);
    return 1;
  }
  absl::Status added = DoAddEdge(State(L), src, dst, kind, delay);
  ChargeReachWork(L, reach_before);
  RaiseIfError(L, added);
  lua_pushboolean(L, 1);
  return 1;
}

// graph:add_edges{{src, dst [, kind = ..., delay_ns = ...]}, ...}: one cycle
// check for the whole batch.
int GraphAddEdges(lua_State* L) {
  luaL_checktype(L, 2, LUA_TTABLE);
  Graph& g = MutableGraphOrRaise(L);
  EngineState& S = State(L);
  std::vector<transforms::Dependency> deps;
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, 2));
  // The batch's edges, then one validation pass over the whole graph.
  ChargeWork(L, SatAdd(SatMul(4, n), GraphWork(*S.graph())));
  ChargeMemory(L, SatMul(n, kEdgeBytes));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 2, i);  // the pair
    const int e = lua_gettop(L);
    luaL_checktype(L, e, LUA_TTABLE);
    lua_rawgeti(L, e, 1);
    const TaskId src = CheckTaskAny(L, -1);
    lua_rawgeti(L, e, 2);
    const TaskId dst = CheckTaskAny(L, -1);
    depgraph::EdgeKind kind = depgraph::EdgeKind::kUser;
    if (lua_getfield(L, e, "kind") != LUA_TNIL) {
      absl::StatusOr<depgraph::EdgeKind> k = transforms::ParseEdgeKind(luaL_checkstring(L, -1));
      RaiseIfError(L, k.status());
      kind = *k;
    }
    const int64_t delay = FieldNs(L, e, "delay_ns", "delay_us", 0);
    if (delay < INT32_MIN || delay > INT32_MAX) return luaL_error(L, "add_edges: delay out of range");
    deps.push_back({src, dst, kind, static_cast<int32_t>(delay)});
    lua_settop(L, e - 1);
  }
  const int64_t reach_before = g.reach_work();
  absl::Status added = transforms::AddDependencies(g, deps);
  ChargeReachWork(L, reach_before);  // what keeping Graph::Reaches's order cost
  RaiseIfError(L, added);
  return 0;
}

int GraphRemoveEdge(lua_State* L) {
  Graph& g = MutableGraphOrRaise(L);
  const TaskId src = CheckTask(L, 2);
  const TaskId dst = CheckTask(L, 3);
  ChargeAdjacency(L);
  absl::StatusOr<int> n = transforms::RemoveDependency(g, src, dst);
  RaiseIfError(L, n.status());
  lua_pushinteger(L, *n);
  return 1;
}

int GraphAddChannel(lua_State* L) {
  size_t len = 0;
  const char* name = luaL_optlstring(L, 2, "communication channel", &len);
  Graph& g = MutableGraphOrRaise(L);
  ChargeMemory(L, kResourceBytes + static_cast<int64_t>(len));
  PushResource(L, State(L).numbering.AddCommChannel(g, std::string_view(name, len)));
  return 1;
}

int GraphAddStream(lua_State* L) {
  int32_t device = 0;
  const char* name = "";
  size_t len = 0;
  if (lua_istable(L, 2)) {
    if (lua_getfield(L, 2, "device") != LUA_TNIL) device = CheckInt32(L, -1, "add_stream: device");
    if (lua_getfield(L, 2, "name") != LUA_TNIL) name = luaL_checklstring(L, -1, &len);
  }
  Graph& g = MutableGraphOrRaise(L);
  ChargeMemory(L, kResourceBytes + static_cast<int64_t>(len));
  PushResource(L, State(L).numbering.AddGpuStream(g, device, std::string_view(name, len)));
  return 1;
}

int GraphAddThread(lua_State* L) {
  size_t len = 0;
  const char* name = luaL_optlstring(L, 2, "", &len);
  Graph& g = MutableGraphOrRaise(L);
  ChargeMemory(L, kResourceBytes + static_cast<int64_t>(len));
  PushResource(L, State(L).numbering.AddCpuThread(g, std::string_view(name, len)));
  return 1;
}

// graph:op(id): the op table for an op id (t.op.parent is one); nil when none.
int GraphOp(lua_State* L) {
  const lua_Integer id = CheckInteger(L, 2, "op: id");
  const Graph& g = GraphOrRaise(L);
  if (id < 0 || static_cast<uint64_t>(id) >= g.op_count()) return 0;
  PushOp(L, g, depgraph::OpId(static_cast<uint32_t>(id)));
  return 1;
}

// graph:op_children(id): the ids of the ops directly inside op `id`.
int GraphOpChildren(lua_State* L) {
  const lua_Integer id = CheckInteger(L, 2, "op_children: id");
  const Graph& g = GraphOrRaise(L);
  lua_newtable(L);
  if (id < 0 || static_cast<uint64_t>(id) >= g.op_count()) return 1;
  int n = 0;
  const int64_t children =
      g.ForEachChildOp(depgraph::OpId(static_cast<uint32_t>(id)), [&](depgraph::OpId o) {
        lua_pushinteger(L, o.value());
        lua_rawseti(L, -2, ++n);
      });
  ChargeWork(L, children + 1);
  return 1;
}

// graph:op_cost(name): the median own CPU time (ns) of the trace's ops of that
// name, or nil when it has none.
int GraphOpCost(lua_State* L) {
  size_t len = 0;
  const char* name = luaL_checklstring(L, 2, &len);
  GraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(len) / kBytesPerUnit);  // hashing the name
  int64_t read = 0;
  const std::optional<int64_t> c = CachedOpMedian(State(L), std::string_view(name, len), &read);
  ChargeWork(L, 2 * read + 1);  // the ops of that name, and their median
  if (!c) return 0;
  lua_pushinteger(L, *c);
  return 1;
}

int GraphToString(lua_State* L) {
  const Graph& g = GraphOrRaise(L);
  lua_pushfstring(L, "graph of %I live tasks, %I resources", static_cast<lua_Integer>(g.live_task_count()),
                  static_cast<lua_Integer>(g.resource_count()));
  return 1;
}

const luaL_Reg kGraphMethods[] = {
    {"select", GraphSelect},
    {"all", GraphAll},
    {"none", GraphNone},
    {"from_tasks", GraphFromTasks},
    {"task", GraphTask},
    {"task_count", GraphTaskCount},
    {"step_count", GraphStepCount},
    {"step_name", GraphStepName},
    {"step_counted", GraphStepCounted},
    // Deprecated names (reverie 0.1.0), kept one release.
    {"iteration_count", GraphStepCount},
    {"iteration_name", GraphStepName},
    {"iteration_counted", GraphStepCounted},
    {"layers", GraphLayers},
    {"resources", GraphResources},
    {"insert", GraphInsert},
    {"remove", GraphRemove},
    {"add_edge", GraphAddEdge},
    {"add_edges", GraphAddEdges},
    {"remove_edge", GraphRemoveEdge},
    {"add_channel", GraphAddChannel},
    {"add_stream", GraphAddStream},
    {"add_thread", GraphAddThread},
    {"set_policy", GraphSetPolicy},
    {"simulate", GraphSimulate},
    {"launch_model", GraphLaunchModel},
    {"validate", GraphValidate},
    {"changes", GraphChanges},
    {"parameters", GraphParameters},
    {"gradient_buckets", GraphGradientBuckets},
    {"collectives", GraphCollectives},
    {"facts", GraphFacts},
    {"world_size", GraphWorldSize},
    {"devices", GraphDevices},
    {"op", GraphOp},
    {"op_cost", GraphOpCost},
    {"op_children", GraphOpChildren},
    {nullptr, nullptr}};

int GraphIndex(lua_State* L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  return luaL_error(L, "graph has no method '%s'", luaL_tolstring(L, 2, nullptr));
}

}  // namespace

std::optional<int64_t> CachedOpMedian(EngineState& S, std::string_view name, int64_t* read) {
  // A schedule policy's graph is not the session's: not cached.
  if (S.policy_graph != nullptr) return transforms::MedianOpCost(*S.policy_graph, name, read);
  const absl::string_view key(name.data(), name.size());
  const auto it = S.op_medians.find(key);
  if (it != S.op_medians.end()) return it->second;
  const std::optional<int64_t> median = transforms::MedianOpCost(*S.graph(), name, read);
  S.op_medians.emplace(std::string(name), median);
  return median;
}

void OpAdded(EngineState& S, std::string_view name, int64_t cost_ns) {
  const auto it = S.op_medians.find(absl::string_view(name.data(), name.size()));
  if (it != S.op_medians.end() && it->second != cost_ns) S.op_medians.erase(it);
}

const depgraph::Graph& CalibrationGraph(const EngineState& S) {
  return S.run.measured != nullptr ? *S.run.measured : S.run.session->base();
}

const transforms::LaunchModel& SessionLaunchModel(EngineState& S) {
  if (!S.launch_model.has_value())
    S.launch_model = transforms::InferLaunchModel(CalibrationGraph(S));
  return *S.launch_model;
}

void RegisterGraph(lua_State* L) {
  luaL_newmetatable(L, kGraphMt);
  lua_newtable(L);
  SetBindings(L, kGraphMethods);
  RegisterCostGraphMethods(L);
  RegisterMemoryGraphMethods(L);
  PushBinding(L, GraphIndex, 1);
  lua_setfield(L, -2, "__index");
  PushBinding(L, GraphToString, 0);
  lua_setfield(L, -2, "__tostring");
  LockMetatable(L, "the graph");
  lua_pop(L, 1);
}

}  // namespace reverie::lua::internal
