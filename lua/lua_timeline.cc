// Lua bindings: Timeline (a simulation result held in Lua memory) and the
// schedule policy backed by a Lua key function.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "lua/lua_internal.h"

namespace reverie::lua::internal {
namespace {

using depgraph::Graph;
using depgraph::TaskId;

TimelineUd* CheckTimeline(lua_State* L, int idx) {
  return static_cast<TimelineUd*>(luaL_checkudata(L, idx, kTimelineMt));
}

int64_t* Starts(TimelineUd* t) { return t->data; }
int64_t* Ends(TimelineUd* t) { return t->data + t->tasks; }
int64_t* Iters(TimelineUd* t) { return t->data + 2 * t->tasks; }

uint32_t TaskIn(lua_State* L, TimelineUd* tl, int idx) {
  const TaskUd* ud = TestTask(L, idx);
  if (ud == nullptr) luaL_typeerror(L, idx, kTaskMt);
  if (ud->id >= tl->tasks) luaL_error(L, "task %d is newer than this timeline", static_cast<int>(ud->id));
  return ud->id;
}

int TlStart(lua_State* L) {
  TimelineUd* tl = CheckTimeline(L, 1);
  const uint32_t t = TaskIn(L, tl, 2);
  if (Starts(tl)[t] < 0) return 0;  // removed
  lua_pushinteger(L, Starts(tl)[t]);
  return 1;
}

int TlEnd(lua_State* L) {
  TimelineUd* tl = CheckTimeline(L, 1);
  const uint32_t t = TaskIn(L, tl, 2);
  if (Starts(tl)[t] < 0) return 0;
  lua_pushinteger(L, Ends(tl)[t]);
  return 1;
}

// Latest-ending (or earliest-starting) simulated member of a selection.
int Extreme(lua_State* L, bool latest) {
  TimelineUd* tl = CheckTimeline(L, 1);
  SelectionUd* s = CheckSelection(L, 2);
  ChargeWork(L, static_cast<int64_t>(s->count));
  int64_t best = latest ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  int64_t pick = -1;
  for (uint64_t i = 0; i < s->count; ++i) {
    const uint32_t t = s->ids[i];
    if (t >= tl->tasks || Starts(tl)[t] < 0) continue;
    const int64_t v = latest ? Ends(tl)[t] : Starts(tl)[t];
    if (latest ? v > best : v < best) {
      best = v;
      pick = t;
    }
  }
  if (pick < 0) return 0;
  PushTask(L, TaskId(static_cast<uint32_t>(pick)));
  return 1;
}

int TlLatest(lua_State* L) { return Extreme(L, true); }
int TlEarliest(lua_State* L) { return Extreme(L, false); }

// tl:order(sel): array of the simulated members by start time (ties by id).
int TlOrder(lua_State* L) {
  TimelineUd* tl = CheckTimeline(L, 1);
  SelectionUd* s = CheckSelection(L, 2);
  ChargeWork(L, 4 * static_cast<int64_t>(s->count));  // a sort, then a table
  const int64_t* st = Starts(tl);
  std::vector<TaskId> ids;
  for (uint64_t i = 0; i < s->count; ++i) {
    const uint32_t t = s->ids[i];
    if (t < tl->tasks && st[t] >= 0) ids.push_back(TaskId(t));
  }
  std::stable_sort(ids.begin(), ids.end(),
                   [st](TaskId a, TaskId b) { return st[a.value()] < st[b.value()]; });
  lua_createtable(L, static_cast<int>(ids.size()), 0);
  for (size_t i = 0; i < ids.size(); ++i) {
    PushTask(L, ids[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

// tl:span(sel): earliest start and latest end of the simulated members.
int TlSpan(lua_State* L) {
  TimelineUd* tl = CheckTimeline(L, 1);
  SelectionUd* s = CheckSelection(L, 2);
  ChargeWork(L, static_cast<int64_t>(s->count));
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (uint64_t i = 0; i < s->count; ++i) {
    const uint32_t t = s->ids[i];
    if (t >= tl->tasks || Starts(tl)[t] < 0) continue;
    lo = std::min(lo, Starts(tl)[t]);
    hi = std::max(hi, Ends(tl)[t]);
  }
  if (lo > hi) return 0;
  lua_pushinteger(L, lo);
  lua_pushinteger(L, hi);
  return 2;
}

const luaL_Reg kTlMethods[] = {{"start_ns", TlStart},   {"end_ns", TlEnd},
                               {"latest", TlLatest},    {"earliest", TlEarliest},
                               {"order", TlOrder},      {"span", TlSpan},
                               {nullptr, nullptr}};

int TlIndex(lua_State* L) {
  TimelineUd* tl = CheckTimeline(L, 1);
  const char* k = luaL_checkstring(L, 2);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  // mean_iteration_ns, iterations: deprecated names (reverie 0.1.0).
  if (std::strcmp(k, "mean_step_ns") == 0 || std::strcmp(k, "mean_iteration_ns") == 0) {
    lua_pushnumber(L, tl->mean_step_ns);
  } else if (std::strcmp(k, "makespan_ns") == 0) {
    lua_pushinteger(L, tl->makespan_ns);
  } else if (std::strcmp(k, "steps") == 0 || std::strcmp(k, "iterations") == 0) {
    ChargeWork(L, 4 * static_cast<int64_t>(tl->steps));
    lua_createtable(L, static_cast<int>(tl->steps), 0);
    for (uint64_t i = 0; i < tl->steps; ++i) {
      lua_createtable(L, 0, 3);
      SetIntField(L, "start_ns", Iters(tl)[2 * i]);
      SetIntField(L, "end_ns", Iters(tl)[2 * i + 1]);
      SetIntField(L, "duration_ns", Iters(tl)[2 * i + 1] - Iters(tl)[2 * i]);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
  } else {
    return luaL_error(L,
                      "timeline has no field '%s' (mean_step_ns, makespan_ns, steps, "
                      "start_ns, end_ns, latest, earliest, order, span)",
                      k);
  }
  return 1;
}

// ---- Lua schedule policy ---------------------------------------------------

struct KeyCall {
  int ref;
  uint32_t task;
  int64_t ready;
  int64_t result;
};

int KeyTrampoline(lua_State* L) {
  auto* c = static_cast<KeyCall*>(lua_touserdata(L, 1));
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref);
  lua_Debug ar;
  lua_pushvalue(L, -1);
  lua_getinfo(L, ">S", &ar);
  PushTask(L, TaskId(c->task));
  lua_pushinteger(L, c->ready);
  lua_call(L, 2, 1);
  int is_number = 0;
  const lua_Number v = lua_tonumberx(L, -1, &is_number);
  if (!is_number || !std::isfinite(v)) {
    const char* got = !is_number       ? luaL_typename(L, -1)
                      : std::isnan(v)  ? "NaN"
                      : v > 0          ? "inf"
                                       : "-inf";
    lua_pushfstring(L, "%s:%d: schedule key function must return a finite number, got %s",
                    ar.short_src, ar.linedefined, got);
    return lua_error(L);
  }
  c->result = v >= 9.0e18 ? static_cast<int64_t>(9.0e18)
              : v <= -9.0e18 ? static_cast<int64_t>(-9.0e18)
                             : static_cast<int64_t>(std::llround(v));
  return 0;
}

// Invariants: holds a registry reference into its engine's lua_State, so it
// must not outlive the engine (ScriptRunner owns both); it never mutates the
// graph (the bindings are read-only while it runs).
class LuaSchedulePolicy : public depgraph::SchedulePolicy {
 public:
  LuaSchedulePolicy(EngineState* state, int ref) : state_(state), ref_(ref) {}

  int64_t Key(const Graph& g, TaskId t, int64_t ready_ns) const override {
    EngineState& S = *state_;
    if (!S.results.key_error.empty()) return ready_ns;  // report the first error only
    lua_State* L = S.L;
    const int top = lua_gettop(L);
    const Graph* saved_graph = S.policy_graph;
    const bool saved_read_only = S.read_only;
    S.policy_graph = &g;
    S.read_only = true;
    KeyCall call{ref_, t.value(), ready_ns, ready_ns};
    // Only non-allocating pushes outside the protected call.
    lua_pushcfunction(L, MessageHandler);
    lua_pushcfunction(L, KeyTrampoline);
    lua_pushlightuserdata(L, &call);
    int rc = LUA_OK;
    {
      CpuSpan cpu(S);
      rc = lua_pcall(L, 1, 0, top + 1);
    }
    if (rc != LUA_OK) {
      const char* m = lua_tostring(L, -1);
      // A limit hit inside the key is the reason, whatever the key raised.
      S.results.key_error = CleanMessage(!S.exhausted.empty() ? std::string_view(S.exhausted)
                                 : rc == LUA_ERRMEM ? std::string_view("memory limit exceeded in the schedule key")
                                 : m != nullptr     ? std::string_view(m)
                                                    : std::string_view("schedule key function failed"),
                                 S.run.display_name);
    }
    lua_settop(L, top);
    S.policy_graph = saved_graph;
    S.read_only = saved_read_only;
    return rc == LUA_OK ? call.result : ready_ns;
  }

 private:
  EngineState* state_;
  int ref_;
};

}  // namespace

void PushTimeline(lua_State* L, const depgraph::SimResult& r) {
  const size_t n = r.start_ns.size();
  auto* tl = static_cast<TimelineUd*>(
      lua_newuserdatauv(L, TimelineBytes(n, r.steps.size()), 0));
  tl->tasks = n;
  tl->steps = r.steps.size();
  tl->mean_step_ns = r.mean_step_ns();
  tl->makespan_ns = r.makespan_ns;
  std::copy(r.start_ns.begin(), r.start_ns.end(), Starts(tl));
  std::copy(r.end_ns.begin(), r.end_ns.end(), Ends(tl));
  for (size_t i = 0; i < r.steps.size(); ++i) {
    Iters(tl)[2 * i] = r.steps[i].start_ns;
    Iters(tl)[2 * i + 1] = r.steps[i].end_ns;
  }
  luaL_setmetatable(L, kTimelineMt);
}

std::shared_ptr<const depgraph::SchedulePolicy> MakeLuaPolicy(lua_State* L, int idx) {
  lua_pushvalue(L, idx);
  const int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return std::make_shared<LuaSchedulePolicy>(&State(L), ref);
}

void RegisterTimeline(lua_State* L) {
  luaL_newmetatable(L, kTimelineMt);
  lua_newtable(L);
  SetBindings(L, kTlMethods);
  PushBinding(L, TlIndex, 1);
  lua_setfield(L, -2, "__index");
  LockMetatable(L, "timelines");
  lua_pop(L, 1);
}

}  // namespace reverie::lua::internal
