// Lua bindings: Selection (sorted task-id sets held in Lua memory) and the
// query tables graph:select / sel:select read.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "lua/lua_internal.h"
#include "transforms/edit.h"
#include "transforms/remove.h"

namespace reverie::lua::internal {
namespace {

using depgraph::Graph;
using depgraph::TaskId;

uint32_t* Begin(SelectionUd* s) { return s->ids; }
uint32_t* End(SelectionUd* s) { return s->ids + s->count; }

// ---- selection methods -----------------------------------------------------

int SelLen(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(CheckSelection(L, 1)->count));
  return 1;
}

int SelCount(lua_State* L) { return SelLen(L); }

int SelEmpty(lua_State* L) {
  lua_pushboolean(L, CheckSelection(L, 1)->count == 0);
  return 1;
}

int SelGet(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  const lua_Integer i = CheckInteger(L, 2, "get: index");
  if (i < 1 || static_cast<uint64_t>(i) > s->count) return 0;
  PushTask(L, TaskId(s->ids[i - 1]));
  return 1;
}

int SelFirst(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  if (s->count == 0) return 0;
  PushTask(L, TaskId(s->ids[0]));
  return 1;
}

int SelLast(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  if (s->count == 0) return 0;
  PushTask(L, TaskId(s->ids[s->count - 1]));
  return 1;
}

int SelIter(lua_State* L) {
  // SelTasks checked the selection; no script can reach an upvalue.
  const auto* s = static_cast<const SelectionUd*>(lua_touserdata(L, lua_upvalueindex(1)));
  const lua_Integer i = lua_tointeger(L, lua_upvalueindex(2));
  if (static_cast<uint64_t>(i) >= s->count) return 0;
  lua_pushinteger(L, i + 1);
  lua_replace(L, lua_upvalueindex(2));
  PushTask(L, TaskId(s->ids[i]));
  return 1;
}

int SelTasks(lua_State* L) {
  CheckSelection(L, 1);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, SelIter, 2);
  return 1;
}

int SelList(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  ChargeWork(L, 4 * static_cast<int64_t>(s->count));  // a handle per task
  lua_createtable(L, static_cast<int>(std::min<uint64_t>(s->count, 1 << 24)), 0);
  for (uint64_t i = 0; i < s->count; ++i) {
    PushTask(L, TaskId(s->ids[i]));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

int SelIds(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  ChargeWork(L, static_cast<int64_t>(s->count));
  lua_createtable(L, static_cast<int>(std::min<uint64_t>(s->count, 1 << 24)), 0);
  for (uint64_t i = 0; i < s->count; ++i) {
    lua_pushinteger(L, s->ids[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

enum SetOp { kUnion, kIntersect, kMinus };

int SetOperation(lua_State* L, SetOp op) {
  SelectionUd* a = CheckSelection(L, 1);
  SelectionUd* b = CheckSelection(L, 2);
  ChargeWork(L, static_cast<int64_t>(a->count + b->count));
  const size_t cap = op == kUnion ? a->count + b->count : a->count;
  SelectionUd* out = NewSelection(L, cap);  // userdata never move: a and b stay valid
  uint32_t* end = nullptr;
  switch (op) {
    case kUnion: end = std::set_union(Begin(a), End(a), Begin(b), End(b), out->ids); break;
    case kIntersect: end = std::set_intersection(Begin(a), End(a), Begin(b), End(b), out->ids); break;
    case kMinus: end = std::set_difference(Begin(a), End(a), Begin(b), End(b), out->ids); break;
  }
  out->count = static_cast<uint64_t>(end - out->ids);
  return 1;
}

int SelUnion(lua_State* L) { return SetOperation(L, kUnion); }
int SelIntersect(lua_State* L) { return SetOperation(L, kIntersect); }
int SelMinus(lua_State* L) { return SetOperation(L, kMinus); }

int SelContains(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  const TaskId t = CheckTaskAny(L, 2);
  lua_pushboolean(L, std::binary_search(Begin(s), End(s), t.value()));
  return 1;
}

// sel:filter(fn): keeps the tasks for which fn(task) is truthy.
int SelFilterImpl(lua_State* L) {
  SelectionUd* in = CheckSelection(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  GraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(in->count));  // the calls themselves are counted by the hook
  SelectionUd* out = NewSelection(L, in->count);  // 3
  uint64_t n = 0;
  for (uint64_t i = 0; i < in->count; ++i) {
    lua_pushvalue(L, 2);
    PushTask(L, TaskId(in->ids[i]));
    lua_call(L, 1, 1);
    if (lua_toboolean(L, -1)) out->ids[n++] = in->ids[i];
    lua_pop(L, 1);
  }
  out->count = n;
  return 1;
}

// sel:select{query}: the members that also match the query, testing the
// members only (refining many small selections stays linear).
int SelSelect(lua_State* L) {
  SelectionUd* in = CheckSelection(L, 1);
  const depgraph::Graph& g = GraphOrRaise(L);
  transforms::TaskQuery q;
  const int where = ReadQuery(L, 2, "select", &q);
  const transforms::Selection members = ToSelection(in);
  int64_t work = 0;
  absl::StatusOr<std::vector<TaskId>> hits = transforms::SelectWithin(g, q, members.ids(), &work);
  ChargeWork(L, work);
  RaiseIfError(L, hits.status());
  PushSelection(L, *hits);
  if (where == 0) return 1;
  lua_pushcfunction(L, SelFilterImpl);
  lua_insert(L, -2);
  lua_pushvalue(L, where);
  lua_call(L, 2, 1);
  return 1;
}

// Edits: each runs a transforms/edit.h function over a C++ copy.
enum EditOp { kScale, kShrink, kSetDuration, kAddDuration, kScaleGap, kSetGap, kSetPriority };

// `ns` is a checked time (CheckNs), `x` a factor (checked by transforms/).
absl::Status ApplyEdit(EngineState& S, const SelectionUd* s, EditOp op, double x, int64_t ns) {
  Graph& g = S.run.session->graph();
  const transforms::Selection sel = ToSelection(s);
  absl::Status st;
  switch (op) {
    case kScale: st = transforms::ScaleDuration(g, sel, x); break;
    case kShrink: st = transforms::ShrinkDuration(g, sel, x); break;
    case kSetDuration: st = transforms::SetDuration(g, sel, ns); break;
    case kAddDuration: st = transforms::AddDuration(g, sel, ns); break;
    case kScaleGap: st = transforms::ScaleGap(g, sel, x); break;
    case kSetGap: st = transforms::SetGap(g, sel, ns); break;
    case kSetPriority: st = transforms::SetPriority(g, sel, static_cast<int32_t>(ns)); break;
  }
  return st;
}

const char* EditName(EditOp op) {
  switch (op) {
    case kScale: return "scale";
    case kShrink: return "shrink";
    case kSetDuration: return "set_duration";
    case kAddDuration: return "add_duration";
    case kScaleGap: return "scale_gap";
    case kSetGap: return "set_gap";
    case kSetPriority: return "set_priority";
  }
  return "edit";
}

int Edit(lua_State* L, EditOp op) {
  SelectionUd* s = CheckSelection(L, 1);
  WarnIfEmpty(L, s->count, EditName(op));
  double x = 0;
  int64_t ns = 0;
  switch (op) {
    case kSetPriority: ns = CheckInt32(L, 2, "set_priority"); break;
    case kSetDuration:
    case kAddDuration:
    case kSetGap: ns = CheckNs(L, 2); break;
    default: x = luaL_checknumber(L, 2); break;
  }
  MutableGraphOrRaise(L);
  ChargeWork(L, 2 * static_cast<int64_t>(s->count));
  RaiseIfError(L, ApplyEdit(State(L), s, op, x, ns));
  lua_settop(L, 1);
  return 1;  // the selection, for chaining
}

int SelScale(lua_State* L) { return Edit(L, kScale); }
int SelShrink(lua_State* L) { return Edit(L, kShrink); }
int SelSetDuration(lua_State* L) { return Edit(L, kSetDuration); }
int SelAddDuration(lua_State* L) { return Edit(L, kAddDuration); }
int SelScaleGap(lua_State* L) { return Edit(L, kScaleGap); }
int SelSetGap(lua_State* L) { return Edit(L, kSetGap); }
int SelSetPriority(lua_State* L) { return Edit(L, kSetPriority); }

int SelTotalDuration(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  const Graph& g = GraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(s->count));
  int64_t sum = 0;
  for (uint64_t i = 0; i < s->count; ++i) {
    const TaskId t(s->ids[i]);
    if (t.value() < g.task_count() && !g.removed(t)) sum = SatAdd(sum, g.duration_ns(t));
  }
  lua_pushinteger(L, sum);
  return 1;
}

int SelLaunches(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  const Graph& g = GraphOrRaise(L);
  ChargeAdjacency(L);
  ChargeWork(L, 4 * static_cast<int64_t>(s->count));
  PushSelection(L, transforms::LaunchesOf(g, ToSelection(s)).ids());
  return 1;
}

int SelRemove(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  WarnIfEmpty(L, s->count, "remove");
  return RemoveAndCount(L, s);
}

void PushGroupKey(lua_State* L, const Graph& g, TaskId t, int key) {
  std::string_view v;
  switch (key) {
    case 0: lua_pushinteger(L, g.step_of(t)); return;
    case 3: lua_pushinteger(L, g.resource_of(t).value()); return;
    case 1: {
      const depgraph::LayerId l = g.layer_of(t);
      lua_pushstring(L, l.valid() && l.value() < g.layer_count() ? g.layer(l).path.c_str() : "");
      return;
    }
    case 2: v = depgraph::PhaseName(g.phase(t)); break;
    case 4: v = g.name(t); break;
    default: v = depgraph::TaskKindName(g.kind(t)); break;
  }
  lua_pushlstring(L, v.data(), v.size());
}

// sel:group_by(key): key = "step" | "layer" | "phase" | "resource" |
// "name" | "kind" -> table key -> Selection (tasks without a layer go under
// the empty string). Two passes so that each group is allocated exactly.
int SelGroupBy(lua_State* L) {
  SelectionUd* s = CheckSelection(L, 1);
  // "iteration": the deprecated name of "step" (reverie 0.1.0).
  static const char* const kKeys[] = {"step", "layer", "phase", "resource", "name", "kind",
                                      "iteration", nullptr};
  int key = luaL_checkoption(L, 2, nullptr, kKeys);
  if (key == 6) key = 0;
  const Graph& g = GraphOrRaise(L);
  ChargeWork(L, 8 * static_cast<int64_t>(s->count));  // two passes of table lookups
  lua_settop(L, 2);
  lua_newtable(L);  // 3: key -> count
  lua_newtable(L);  // 4: key -> selection
  for (uint64_t i = 0; i < s->count; ++i) {
    const TaskId t(s->ids[i]);
    if (t.value() >= g.task_count() || g.removed(t)) continue;
    PushGroupKey(L, g, t, key);
    lua_pushvalue(L, -1);
    lua_rawget(L, 3);
    const lua_Integer c = lua_tointeger(L, -1);
    lua_pop(L, 1);
    lua_pushinteger(L, c + 1);
    lua_rawset(L, 3);
  }
  for (uint64_t i = 0; i < s->count; ++i) {
    const TaskId t(s->ids[i]);
    if (t.value() >= g.task_count() || g.removed(t)) continue;
    PushGroupKey(L, g, t, key);
    lua_pushvalue(L, -1);
    SelectionUd* group = nullptr;
    if (lua_rawget(L, 4) == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      lua_rawget(L, 3);
      const lua_Integer n = lua_tointeger(L, -1);
      lua_pop(L, 1);
      group = NewSelection(L, static_cast<size_t>(n));
      group->count = 0;
      lua_pushvalue(L, -2);
      lua_pushvalue(L, -2);
      lua_rawset(L, 4);
    } else {
      group = static_cast<SelectionUd*>(lua_touserdata(L, -1));
    }
    group->ids[group->count++] = t.value();
    lua_pop(L, 2);
  }
  return 1;
}

int SelToString(lua_State* L) {
  lua_pushfstring(L, "selection of %I tasks", static_cast<lua_Integer>(CheckSelection(L, 1)->count));
  return 1;
}

const luaL_Reg kSelMethods[] = {
    {"count", SelCount},         {"empty", SelEmpty},
    {"get", SelGet},             {"first", SelFirst},
    {"last", SelLast},           {"tasks", SelTasks},
    {"list", SelList},           {"ids", SelIds},
    {"union", SelUnion},         {"intersect", SelIntersect},
    {"minus", SelMinus},         {"contains", SelContains},
    {"filter", SelFilterImpl},       {"select", SelSelect},
    {"scale", SelScale},         {"shrink", SelShrink},
    {"set_duration", SelSetDuration}, {"add_duration", SelAddDuration},
    {"scale_gap", SelScaleGap},  {"set_gap", SelSetGap},
    {"set_priority", SelSetPriority}, {"total_duration", SelTotalDuration},
    {"launches", SelLaunches},   {"remove", SelRemove},
    {"group_by", SelGroupBy},    {nullptr, nullptr}};

int SelIndex(lua_State* L) {
  if (lua_type(L, 2) == LUA_TNUMBER) return SelGet(L);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  return luaL_error(L, "selection has no method '%s'", luaL_tolstring(L, 2, nullptr));
}

}  // namespace

int SelFilter(lua_State* L) { return SelFilterImpl(L); }

SelectionUd* CheckSelection(lua_State* L, int idx) {
  return static_cast<SelectionUd*>(luaL_checkudata(L, idx, kSelectionMt));
}

SelectionUd* NewSelection(lua_State* L, size_t n) {
  auto* s = static_cast<SelectionUd*>(lua_newuserdatauv(L, SelectionBytes(n), 0));
  s->count = n;
  luaL_setmetatable(L, kSelectionMt);
  return s;
}

int RemoveAndCount(lua_State* L, const SelectionUd* s) {
  ChargeWork(L, GraphWork(MutableGraphOrRaise(L)));  // one pass over the edges
  EngineState& S = State(L);
  // The rewiring's work and the ancestors it holds meanwhile (16 bytes
  // each) within what is left of the budget and the cap, its new edges
  // within the cap (issue 29, D25).
  transforms::RemoveLimits limits;
  limits.max_work = std::min(WorkLeft(S), MemoryLeft(S) / 16);
  limits.max_new_edges = MemoryLeft(S) / kEdgeBytes;
  transforms::RemoveLimitHit hit = transforms::RemoveLimitHit::kNone;
  const int64_t reach_before = S.graph()->reach_work();
  absl::StatusOr<transforms::RemoveResult> r =
      transforms::RemoveTasks(S.run.session->graph(), ToSelection(s), limits, &hit);
  // The rewired edges keep the reach index's order: charged in case not.
  ChargeReachWork(L, reach_before);
  // Past a bound the graph is unchanged: spend the limit that was hit, so
  // that the error is the usual sticky one.
  if (hit == transforms::RemoveLimitHit::kNewEdges) {
    ChargeMemory(L, SatMul(SatAdd(limits.max_new_edges, 1), kEdgeBytes));
  }
  if (hit == transforms::RemoveLimitHit::kWork) {
    if (WorkLeft(S) <= MemoryLeft(S) / 16) ChargeWork(L, SatAdd(WorkLeft(S), 1));
    ChargeMemory(L, SatAdd(MemoryLeft(S), 1));  // the ancestors it would hold
  }
  RaiseIfError(L, r.status());
  ChargeWork(L, r->work);
  ChargeMemory(L, SatMul(r->edges_added, kEdgeBytes));
  lua_pushinteger(L, r->removed);
  lua_pushinteger(L, r->edges_added);
  return 2;
}

void PushSelection(lua_State* L, absl::Span<const TaskId> sorted_ids) {
  SelectionUd* s = NewSelection(L, sorted_ids.size());
  for (size_t i = 0; i < sorted_ids.size(); ++i) s->ids[i] = sorted_ids[i].value();
}

transforms::Selection ToSelection(const SelectionUd* s) {
  std::vector<TaskId> ids(s->count);
  for (uint64_t i = 0; i < s->count; ++i) ids[i] = TaskId(s->ids[i]);
  return transforms::Selection::FromSorted(std::move(ids));
}

void RegisterSelection(lua_State* L) {
  luaL_newmetatable(L, kSelectionMt);
  lua_newtable(L);
  SetBindings(L, kSelMethods);
  RegisterGpuSelectionMethods(L);
  RegisterCostSelectionMethods(L);
  PushBinding(L, SelIndex, 1);
  lua_setfield(L, -2, "__index");
  static const luaL_Reg kMeta[] = {{"__len", SelLen},       {"__bor", SelUnion},
                                   {"__band", SelIntersect}, {"__sub", SelMinus},
                                   {"__tostring", SelToString}, {nullptr, nullptr}};
  SetBindings(L, kMeta);
  LockMetatable(L, "selections");
  lua_pop(L, 1);
}

}  // namespace reverie::lua::internal
