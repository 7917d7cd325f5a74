// Lua bindings: the `graph` object (queries, insert / remove, dependencies,
// resources, schedule policy, simulation, model facts).
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "scripts/lua_internal.h"
#include "transforms/ops.h"
#include "transforms/remove.h"
#include "transforms/structure.h"

namespace reverie::lua::internal {
namespace {

using depgraph::Graph;
using depgraph::ResourceId;
using depgraph::TaskId;
using depgraph::TaskKind;

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
bool SortScratch(EngineState& S) {
  std::sort(S.ids.begin(), S.ids.end());
  S.ids.erase(std::unique(S.ids.begin(), S.ids.end()), S.ids.end());
  return true;
}

int GraphFromTasks(lua_State* L) {
  luaL_checktype(L, 2, LUA_TTABLE);
  GraphOrRaise(L);
  EngineState& S = State(L);
  S.ids.clear();
  const lua_Integer n = luaL_len(L, 2);
  ChargeWork(L, 4 * n);  // read, then sort
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 2, i);
    S.ids.push_back(CheckTaskAny(L, -1));
    lua_pop(L, 1);
  }
  SortScratch(S);
  PushScratchSelection(L);
  return 1;
}

int GraphTask(lua_State* L) {
  const lua_Integer id = luaL_checkinteger(L, 2);
  const Graph& g = GraphOrRaise(L);
  if (id < 0 || static_cast<uint64_t>(id) >= g.task_count()) return 0;
  PushTask(L, TaskId(static_cast<uint32_t>(id)));
  return 1;
}

int GraphTaskCount(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(GraphOrRaise(L).live_task_count()));
  return 1;
}

int GraphIterationCount(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(GraphOrRaise(L).iteration_count()));
  return 1;
}

int GraphIterationName(lua_State* L) {
  const lua_Integer i = luaL_checkinteger(L, 2);
  const Graph& g = GraphOrRaise(L);
  if (i < 0 || static_cast<uint64_t>(i) >= g.iteration_count()) return 0;
  lua_pushstring(L, g.iteration_info(static_cast<int32_t>(i)).name.c_str());
  return 1;
}

// graph:iteration_counted(i): whether step i counts in the mean step time
// (depgraph/step_time.h rule 4); nil for no such step.
int GraphIterationCounted(lua_State* L) {
  const lua_Integer i = luaL_checkinteger(L, 2);
  const Graph& g = GraphOrRaise(L);
  if (i < 0 || static_cast<uint64_t>(i) >= g.iteration_count()) return 0;
  lua_pushboolean(L, g.iteration_info(static_cast<int32_t>(i)).counted);
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

// ---- insert ----------------------------------------------------------------

constexpr const char* kInsertFields[] = {
    "kind",           "name",          "duration_ns",   "duration_us",      "gap_ns",
    "gap_us",         "after",         "before",        "resource",         "phase",
    "layer",          "iteration",     "bytes",         "priority",         "launch",
    "launch_after",   "launch_duration_ns", "launch_duration_us", "launch_gap_ns",
    "launch_gap_us",  "launch_name",   "with_op",       "op_ns",            "op_us"};

struct InsertArgs {  // trivially destructible (see THE RULE)
  const char* kind = nullptr;
  const char* phase = nullptr;
  transforms::Where where;
  int64_t duration = 0, gap = 0, bytes = 0;
  bool has_layer = false, has_iteration = false, has_priority = false;
  int32_t iteration = -1, priority = 0;
  bool launch = true;
  TaskId launch_after;
  int64_t launch_duration = -1, launch_gap = 0;
  bool has_launch_name = false;
  bool has_op = false;   // with_op: the name is in EngineState::spec_op
  int64_t op_ns = -1;    // -1: the op's median cost in the trace
};

struct InsertOut {
  TaskId task, launch;
};

// with_op: the inserted call gets the CPU cost of the op that would issue it
// (transforms/ops.h), measured on the trace's ops of that name unless op_ns
// gives it.
bool AddInsertedOpTime(EngineState& S, const InsertArgs& a, InsertOut* out) {
  Graph& g = S.session->graph();
  const TaskId call = out->launch.valid() ? out->launch : out->task;
  if (!depgraph::IsCpuKind(g.kind(call))) {
    return Fail(S, absl::InvalidArgumentError(
                       "insert: with_op needs a CPU call (a GPU task inserted with its launch)"));
  }
  int64_t cost = a.op_ns;
  if (cost < 0) {
    const std::optional<int64_t> median = transforms::MedianOpCost(g, S.spec_op);
    if (!median) {
      return Fail(S, absl::InvalidArgumentError(absl::StrCat(
                         "insert: the trace records no op '", S.spec_op,
                         "' to take its CPU cost from; give op_ns (or op_us)")));
    }
    cost = *median;
  }
  absl::StatusOr<TaskId> t = transforms::AddOpTime(g, call, S.spec_op, cost);
  if (!t.ok()) return Fail(S, t.status());
  return true;
}

// Whether graph:insert's `kind` names a GPU task (launched from a CPU call).
bool InsertsGpuTask(const char* kind) {
  absl::StatusOr<TaskKind> k = transforms::ParseTaskKind(kind);
  return k.ok() && depgraph::IsGpuKind(*k);
}

bool DoInsert(EngineState& S, const InsertArgs& a, InsertOut* out) {
  Graph& g = S.session->graph();
  absl::StatusOr<TaskKind> kind = transforms::ParseTaskKind(a.kind);
  if (!kind.ok()) return Fail(S, kind.status());
  depgraph::TaskSpec spec;
  spec.kind = *kind;
  spec.name = S.spec_name;
  spec.duration_ns = a.duration;
  spec.gap_ns = a.gap;
  spec.bytes = a.bytes;
  const TaskId anchor = a.where.anchor;
  if (anchor.valid()) {
    if (absl::Status s = transforms::CheckLive(g, anchor); !s.ok()) return Fail(S, s);
    spec.phase = g.phase(anchor);
    spec.layer = g.layer_of(anchor);
    spec.iteration = g.iteration_of(anchor);
  }
  if (a.phase != nullptr) {
    absl::StatusOr<depgraph::Phase> p = transforms::ParsePhase(a.phase);
    if (!p.ok()) return Fail(S, p.status());
    spec.phase = *p;
  }
  if (a.has_layer) {
    spec.layer = S.spec_layer.empty() ? depgraph::LayerId() : LayerFor(g, S.spec_layer);
  }
  if (a.has_iteration) spec.iteration = a.iteration;
  if (depgraph::IsGpuKind(spec.kind)) {
    transforms::LaunchOptions o;
    o.with_launch = a.launch;
    o.launch_after = a.launch_after;
    o.launch_duration_ns = a.launch_duration;
    o.launch_gap_ns = a.launch_gap;
    if (a.has_launch_name) o.launch_name = S.spec_launch_name;
    absl::StatusOr<transforms::InsertedGpuTask> r =
        transforms::InsertGpuTask(g, a.where, spec, o, SessionLaunchModel(S));
    if (!r.ok()) return Fail(S, r.status());
    out->task = r->gpu;
    out->launch = r->launch;
  } else {
    absl::StatusOr<TaskId> r = transforms::InsertTask(g, a.where, spec);
    if (!r.ok()) return Fail(S, r.status());
    out->task = *r;
  }
  if (a.has_priority) g.set_priority(out->task, a.priority);
  if (a.has_op) return AddInsertedOpTime(S, a, out);
  return true;
}

int GraphInsert(lua_State* L) {
  luaL_checktype(L, 2, LUA_TTABLE);
  MutableGraphOrRaise(L);
  EngineState& S = State(L);
  lua_pushnil(L);
  while (lua_next(L, 2) != 0) {
    const char* k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    bool known = false;
    for (const char* f : kInsertFields) known = known || std::strcmp(k, f) == 0;
    if (!known) return luaL_error(L, "insert: unknown field '%s'", k);
    lua_pop(L, 1);
  }
  InsertArgs a;
  lua_getfield(L, 2, "kind");
  a.kind = luaL_optstring(L, -1, "cpu_work");
  if (lua_getfield(L, 2, "name") != LUA_TSTRING) return luaL_error(L, "insert: 'name' is required");
  S.spec_name = lua_tostring(L, -1);
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
    S.spec_layer = luaL_checkstring(L, -1);
  }
  if (lua_getfield(L, 2, "iteration") != LUA_TNIL) {
    a.has_iteration = true;
    a.iteration = CheckIteration(L, -1, "insert: iteration");
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
    S.spec_launch_name = luaL_checkstring(L, -1);
  }
  if (lua_getfield(L, 2, "with_op") != LUA_TNIL) {
    a.has_op = true;
    S.spec_op = luaL_checkstring(L, -1);
  }
  a.op_ns = FieldNs(L, 2, "op_ns", "op_us", -1);
  // A new task, maybe its launch call, its edge and an op task, maybe new
  // names and a layer.
  ChargeMemory(L, 3 * kTaskBytes + 2 * kEdgeBytes + 4 * kStringBytes +
                      2 * static_cast<int64_t>(S.spec_name.size() + S.spec_launch_name.size() +
                                               S.spec_layer.size() +
                                               (a.has_op ? S.spec_op.size() : 0)));
  if (a.has_op && a.op_ns < 0) {
    ChargeWork(L, static_cast<int64_t>(S.graph()->op_count()));  // the op's median cost
  }
  if (InsertsGpuTask(a.kind) && a.launch) {
    ChargeAdjacency(L);  // finding the launch call reads the adjacency
    // An explicit launch call, or the one after an anchor that has none, is
    // checked for a cycle (transforms::InsertGpuTask): up to a pass.
    if (a.launch_after.valid() || (a.where.placement == transforms::Where::Placement::kBefore &&
                                   !transforms::LauncherOf(*S.graph(), a.where.anchor).valid())) {
      ChargeWork(L, GraphWork(*S.graph()));
    }
  }
  InsertOut out;
  if (!DoInsert(S, a, &out)) return RaiseError(L);
  StructureChanged(S);
  PushTask(L, out.task);
  if (!out.launch.valid()) return 1;
  PushTask(L, out.launch);
  return 2;
}

// ---- remove, dependencies, resources ---------------------------------------

struct Counts {
  int64_t a = 0, b = 0;
};

bool DoRemove(EngineState& S, const SelectionUd* s, Counts* out) {
  absl::StatusOr<transforms::RemoveResult> r =
      transforms::RemoveTasks(S.session->graph(), ToSelection(s));
  if (!r.ok()) return Fail(S, r.status());
  out->a = r->removed;
  out->b = r->edges_added;
  return true;
}

int GraphRemove(lua_State* L) {
  ChargeWork(L, GraphWork(MutableGraphOrRaise(L)));  // one pass over the edges
  SelectionUd* s = nullptr;
  if (luaL_testudata(L, 2, kTaskMt) != nullptr) {
    const TaskId t = CheckTask(L, 2);
    s = NewSelection(L, 1);
    s->ids[0] = t.value();
  } else {
    s = CheckSelection(L, 2);
  }
  Counts c;
  if (!DoRemove(State(L), s, &c)) return RaiseError(L);
  StructureChanged(State(L));
  lua_pushinteger(L, c.a);
  lua_pushinteger(L, c.b);
  return 2;
}

bool DoAddEdge(EngineState& S, TaskId src, TaskId dst, const char* kind, int64_t delay) {
  depgraph::EdgeKind k = depgraph::EdgeKind::kUser;
  if (kind != nullptr) {
    absl::StatusOr<depgraph::EdgeKind> p = transforms::ParseEdgeKind(kind);
    if (!p.ok()) return Fail(S, p.status());
    k = *p;
  }
  if (delay < INT32_MIN || delay > INT32_MAX) return Fail(S, "add_edge: delay_ns out of range");
  absl::StatusOr<depgraph::EdgeId> e =
      transforms::AddDependency(S.session->graph(), src, dst, k, static_cast<int32_t>(delay));
  if (!e.ok()) return Fail(S, e.status());
  return true;
}

int GraphAddEdge(lua_State* L) {
  MutableGraphOrRaise(L);
  const TaskId src = CheckTask(L, 2);
  const TaskId dst = CheckTask(L, 3);
  const char* kind = nullptr;
  int64_t delay = 0;
  if (!lua_isnoneornil(L, 4)) {
    luaL_checktype(L, 4, LUA_TTABLE);
    if (lua_getfield(L, 4, "kind") != LUA_TNIL) kind = luaL_checkstring(L, -1);
    delay = FieldNs(L, 4, "delay_ns", "delay_us", 0);
  }
  // The cycle check walks what `dst` reaches: up to the whole graph.
  ChargeAdjacency(L);
  ChargeWork(L, GraphWork(*State(L).graph()));
  ChargeMemory(L, kEdgeBytes);
  if (!DoAddEdge(State(L), src, dst, kind, delay)) return RaiseError(L);
  StructureChanged(State(L));
  return 0;
}

// graph:add_edges{{src, dst [, kind = ..., delay_ns = ...]}, ...}: one cycle
// check for the whole batch.
bool DoAddEdges(EngineState& S) {
  absl::Status s = transforms::AddDependencies(S.session->graph(), S.deps);
  S.deps.clear();
  if (!s.ok()) return Fail(S, s);
  return true;
}

bool ParseEdgeKind(EngineState& S, const char* name, depgraph::EdgeKind* out) {
  absl::StatusOr<depgraph::EdgeKind> k = transforms::ParseEdgeKind(name);
  if (!k.ok()) return Fail(S, k.status());
  *out = *k;
  return true;
}

int GraphAddEdges(lua_State* L) {
  luaL_checktype(L, 2, LUA_TTABLE);
  MutableGraphOrRaise(L);
  EngineState& S = State(L);
  S.deps.clear();
  const lua_Integer n = luaL_len(L, 2);
  // The batch's edges, then one validation pass over the whole graph.
  ChargeWork(L, 4 * n + GraphWork(*S.graph()));
  ChargeMemory(L, n * kEdgeBytes);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 2, i);  // the pair
    const int e = lua_gettop(L);
    luaL_checktype(L, e, LUA_TTABLE);
    lua_rawgeti(L, e, 1);
    const TaskId src = CheckTaskAny(L, -1);
    lua_rawgeti(L, e, 2);
    const TaskId dst = CheckTaskAny(L, -1);
    depgraph::EdgeKind kind = depgraph::EdgeKind::kUser;
    if (lua_getfield(L, e, "kind") != LUA_TNIL &&
        !ParseEdgeKind(S, luaL_checkstring(L, -1), &kind)) {
      return RaiseError(L);
    }
    const int64_t delay = FieldNs(L, e, "delay_ns", "delay_us", 0);
    if (delay < INT32_MIN || delay > INT32_MAX) return luaL_error(L, "add_edges: delay out of range");
    S.deps.push_back({src, dst, kind, static_cast<int32_t>(delay)});
    lua_settop(L, e - 1);
  }
  if (!DoAddEdges(S)) return RaiseError(L);
  StructureChanged(S);
  return 0;
}

bool DoRemoveEdge(EngineState& S, TaskId src, TaskId dst, int* n) {
  absl::StatusOr<int> r = transforms::RemoveDependency(S.session->graph(), src, dst);
  if (!r.ok()) return Fail(S, r.status());
  *n = *r;
  return true;
}

int GraphRemoveEdge(lua_State* L) {
  MutableGraphOrRaise(L);
  const TaskId src = CheckTask(L, 2);
  const TaskId dst = CheckTask(L, 3);
  ChargeAdjacency(L);
  int n = 0;
  if (!DoRemoveEdge(State(L), src, dst, &n)) return RaiseError(L);
  StructureChanged(State(L));
  lua_pushinteger(L, n);
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
  const lua_Integer id = luaL_checkinteger(L, 2);
  const Graph& g = GraphOrRaise(L);
  if (id < 0 || static_cast<uint64_t>(id) >= g.op_count()) return 0;
  PushOp(L, g, depgraph::OpId(static_cast<uint32_t>(id)));
  return 1;
}

// graph:op_children(id): the ids of the ops directly inside op `id`.
int GraphOpChildren(lua_State* L) {
  const lua_Integer id = luaL_checkinteger(L, 2);
  const Graph& g = GraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(g.op_count()));
  lua_newtable(L);
  int n = 0;
  for (uint32_t o = 0; o < g.op_count(); ++o) {
    const depgraph::OpId p = g.op(depgraph::OpId(o)).parent;
    if (!p.valid() || static_cast<lua_Integer>(p.value()) != id) continue;
    lua_pushinteger(L, o);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

// graph:op_cost(name): the median own CPU time (ns) of the trace's ops of that
// name, or nil when it has none.
int GraphOpCost(lua_State* L) {
  size_t len = 0;
  const char* name = luaL_checklstring(L, 2, &len);
  const Graph& g = GraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(g.op_count()));
  const std::optional<int64_t> c = transforms::MedianOpCost(g, std::string_view(name, len));
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
    {"iteration_count", GraphIterationCount},
    {"iteration_name", GraphIterationName},
    {"iteration_counted", GraphIterationCounted},
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

const transforms::LaunchModel& SessionLaunchModel(EngineState& S) {
  if (!S.launch_model.has_value()) S.launch_model = transforms::InferLaunchModel(S.session->base());
  return *S.launch_model;
}

void RegisterGraph(lua_State* L) {
  luaL_newmetatable(L, kGraphMt);
  lua_newtable(L);
  luaL_setfuncs(L, kGraphMethods, 0);
  lua_pushcclosure(L, GraphIndex, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, GraphToString);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
}

}  // namespace reverie::lua::internal
