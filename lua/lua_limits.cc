// The limits that bound a script (docs/LUA_API.md#errors-and-limits): one
// instruction budget for all the CPU a script causes, one memory cap for all
// the memory, and the sandbox rule that keeps finalizers out.
//
// - Budget: Lua's count hook adds VM instructions; bindings add their C++
//   work (ChargeWork). Once spent, the error is sticky: the hook then fires
//   before every instruction and raises again, so `pcall` in a loop, an
//   `xpcall` handler, a coroutine or a `__close` method can catch it but
//   cannot run on (issue 17, D1).
// - Cap: the allocator counts the Lua heap; bindings add the C++ memory they
//   make the graph, the log and the reports hold (ChargeMemory). Both count
//   against one limit, and a C++ charge over it is sticky too (D4).
// - Finalizers: Lua 5.4 runs __gc metamethods with hooks off, outside any
//   budget, so setmetatable refuses a metatable with __gc (D2).
// - Message handlers: an error raised by the hook reaches xpcall's handler
//   while hooks are still off, so once a limit is hit xpcall hands the error
//   up without calling the script's handler.
#include <cstdio>
#include <cstdlib>

#include "base/checked_math.h"
#include "lua/lua_internal.h"

namespace reverie::lua::internal {
namespace {

constexpr int kHookEvery = 1000;  // instructions between budget checks

[[noreturn]] void RaiseExhausted(lua_State* L) {
  lua_pushstring(L, State(L).exhausted.c_str());
  lua_error(L);
  std::abort();  // lua_error does not return
}

void CountHook(lua_State* L, lua_Debug* ar);

// Records the first limit hit and makes the hook fire before every
// instruction of the main thread and of `L` (a coroutine, maybe), so the
// error comes back as soon as anything catches it and runs one more
// instruction. Copies `message` before any Lua allocation can fail.
void MarkExhausted(lua_State* L, const char* message) {
  EngineState& S = State(L);
  if (S.exhausted.empty()) S.exhausted = message;
  lua_sethook(L, CountHook, LUA_MASKCOUNT, 1);
  if (S.L != L) lua_sethook(S.L, CountHook, LUA_MASKCOUNT, 1);
}

void BudgetExceeded(lua_State* L, const char* where) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%s: instruction budget of %lld VM instructions exceeded", where,
                static_cast<long long>(State(L).limits.instruction_budget));
  MarkExhausted(L, buf);
  RaiseExhausted(L);
}

void CountHook(lua_State* L, lua_Debug* ar) {
  EngineState& S = State(L);
  if (!S.exhausted.empty()) RaiseExhausted(L);
  S.instructions = SatAdd(S.instructions, kHookEvery);
  if (S.instructions <= S.limits.instruction_budget) return;
  // Name the running line, not the caller's.
  lua_getinfo(L, "Sl", ar);
  char where[256];
  std::snprintf(where, sizeof(where), "%s:%d", ar->short_src, ar->currentline);
  BudgetExceeded(L, where);
}

// "file.lua:12" of the innermost Lua function on the stack, else the script.
void Where(lua_State* L, char* out, size_t size) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, "Sl", &ar) != 0 && ar.currentline > 0) {
      std::snprintf(out, size, "%s:%d", ar.short_src, ar.currentline);
      return;
    }
  }
  std::snprintf(out, size, "%s", State(L).display_name.c_str());
}

// setmetatable without finalizers: a __gc metamethod would run with hooks
// off, where no budget reaches it.
int GuardedSetMetatable(lua_State* L) {
  if (lua_istable(L, 2)) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL) {
      return luaL_error(L,
                        "setmetatable: __gc finalizers are not allowed in reverie scripts (Lua "
                        "runs them outside the instruction budget)");
    }
    lua_pop(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// xpcall's handler, wrapped: not called for the limit error (it would run
// with hooks off, see the file comment).
int GuardedHandler(lua_State* L) {
  if (!State(L).exhausted.empty()) return 1;  // the error object, as is
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int XpcallDone(lua_State* L, int status, lua_KContext ctx) { return lua_gettop(L); }

int GuardedXpcall(lua_State* L) {
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, GuardedHandler, 1);
  lua_replace(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  // With a continuation, so that a coroutine may still yield inside.
  lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, XpcallDone);
  return XpcallDone(L, LUA_OK, 0);
}

// Replaces table.field (a global when `table` is null) by a closure of
// `wrapper` over the original, when it is a function.
void Wrap(lua_State* L, const char* table, const char* field, lua_CFunction wrapper) {
  lua_pushglobaltable(L);
  if (table != nullptr) {
    // Raw: the sandbox's _G raises on a missing library.
    lua_pushstring(L, table);
    const int type = lua_rawget(L, -2);
    lua_remove(L, -2);
    if (type != LUA_TTABLE) {
      lua_pop(L, 1);
      return;
    }
  }
  if (lua_getfield(L, -1, field) == LUA_TFUNCTION) {
    lua_pushcclosure(L, wrapper, 1);
    lua_setfield(L, -2, field);
  } else {
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

}  // namespace

void* LimitedAlloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* a = static_cast<AllocState*>(ud);
  const size_t old = ptr != nullptr ? osize : 0;
  if (nsize == 0) {
    std::free(ptr);
    a->used -= old;
    return nullptr;
  }
  // Returning nullptr makes Lua collect garbage and retry, then raise
  // "not enough memory".
  if (nsize > old && a->used - old + nsize + a->charged > a->limit) return nullptr;
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nullptr;
  a->used = a->used - old + nsize;
  if (a->used + a->charged > a->peak) a->peak = a->used + a->charged;
  return p;
}

void GuardFinalizers(lua_State* L) {
  Wrap(L, nullptr, "setmetatable", GuardedSetMetatable);
  Wrap(L, "debug", "setmetatable", GuardedSetMetatable);  // without the sandbox only
  Wrap(L, nullptr, "xpcall", GuardedXpcall);
}

void StartLimits(lua_State* L) { lua_sethook(L, CountHook, LUA_MASKCOUNT, kHookEvery); }

void ChargeWork(lua_State* L, int64_t units) {
  EngineState& S = State(L);
  if (!S.exhausted.empty()) RaiseExhausted(L);
  S.instructions = SatAdd(S.instructions, units);
  if (S.instructions <= S.limits.instruction_budget) return;
  char where[256];
  Where(L, where, sizeof(where));
  BudgetExceeded(L, where);
}

void ChargeMemory(lua_State* L, int64_t bytes) {
  EngineState& S = State(L);
  if (!S.exhausted.empty()) RaiseExhausted(L);
  AllocState& a = S.alloc;
  const size_t b = bytes < 0 ? 0 : static_cast<size_t>(bytes);
  if (a.used + a.charged + b <= a.limit) {
    a.charged += b;
    if (a.used + a.charged > a.peak) a.peak = a.used + a.charged;
    return;
  }
  char where[256];
  Where(L, where, sizeof(where));
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "%s: memory limit of %zu MiB exceeded (Lua heap %zu MiB, graph changes and "
                "output %zu MiB, asking for %zu MiB more)",
                where, a.limit >> 20, a.used >> 20, a.charged >> 20, b >> 20);
  MarkExhausted(L, buf);
  RaiseExhausted(L);
}

int64_t GraphWork(const depgraph::Graph& g) {
  // A plain pass (counting, copying ids) costs about a nanosecond per task
  // or edge, a quarter of a VM instruction's few nanoseconds.
  return static_cast<int64_t>(g.task_count() + g.edge_count() + g.resource_count()) / 4 + 1;
}

void ChargeAdjacency(lua_State* L) {
  EngineState& S = State(L);
  if (!S.adjacency_dirty) return;
  const depgraph::Graph* g = S.graph();
  if (g != nullptr) ChargeWork(L, GraphWork(*g));
  S.adjacency_dirty = false;
}

namespace {
void Resize(EngineState& S, const depgraph::Graph& g) {
  if (S.sized_graph == &g) return;
  S.sized_graph = &g;
  S.sized_names = S.sized_layers = 0;
  S.name_bytes = S.layer_bytes = 0;
}
}  // namespace

int64_t NameBytes(EngineState& S, const depgraph::Graph& g) {
  Resize(S, g);
  for (; S.sized_names < g.name_count(); ++S.sized_names) {
    S.name_bytes += static_cast<int64_t>(g.NameOf(static_cast<uint32_t>(S.sized_names)).size());
  }
  return S.name_bytes;
}

int64_t LayerBytes(EngineState& S, const depgraph::Graph& g) {
  Resize(S, g);
  for (; S.sized_layers < g.layer_count(); ++S.sized_layers) {
    S.layer_bytes += static_cast<int64_t>(
        g.layer(depgraph::LayerId(static_cast<uint32_t>(S.sized_layers))).path.size());
  }
  return S.layer_bytes;
}

}  // namespace reverie::lua::internal
