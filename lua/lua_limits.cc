// The limits that bound a script (docs/LUA_API.md#errors-and-limits): one
// instruction budget for all the CPU a script causes, one memory cap for all
// the memory, and the sandbox rules that keep finalizers out.
//
// - Budget: Lua's count hook adds VM instructions; bindings add their C++
//   work (ChargeWork); the allocator adds a unit per kBytesPerUnit bytes of
//   every block over kChargedAllocBytes it hands out (building a string,
//   `s .. x` included, copies every byte: issue 29, D23). Once spent, the
//   error is sticky: the hook then fires before every instruction and
//   raises again, so `pcall` in a loop, an `xpcall` handler, a coroutine or
//   a `__close` method can catch it but cannot run on (issue 17, D1).
// - What no count sees: Lua compares two strings (`<`, `==`, a table key
//   that collides) inside one VM instruction, in C, where neither the hook
//   nor the allocator is called. Two bounds hold instead: no string is
//   longer than kMaxStringBytes (the allocator refuses it), so one such
//   instruction does at most about a millisecond of work; and the CPU time
//   of the script's Lua code and bindings may not pass kCpuNsPerUnit per
//   unit of budget plus a floor (CpuCeilingNs: several times what counted
//   work takes), checked every kCpuCheckEvery hook firings, or at every
//   firing while a string of kBigStringBytes or more is alive.
// - Cap: the allocator counts the Lua heap; bindings add the C++ memory they
//   make the graph, the log and the reports hold (ChargeMemory). Both count
//   against one limit, and a C++ charge over it is sticky too (D4).
// - Finalizers: Lua 5.4 runs __gc metamethods with hooks off, outside any
//   budget, so setmetatable refuses a metatable with __gc (D2), and the
//   handles' own metatables are locked (getmetatable returns a proxy that
//   refuses writes: issue 29, D20).
// - Message handlers: an error raised by the hook reaches xpcall's handler
//   while hooks are still off, so once a limit is hit xpcall hands the error
//   up without calling the script's handler.
// - Caught errors: Lua built as C++ raises an error as an exception, a few
//   microseconds to unwind (tens under the sanitizers) that no instruction
//   count sees; `pcall` and `xpcall` charge kErrorUnits for each error they
//   catch (`while true do pcall(f) end` with a failing f took 6.7 s of
//   the fuzzer's 2e6 units, then past its 10 s limit on a loaded machine).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "absl/strings/str_format.h"
#include "base/checked_math.h"
#include "base/sanitizers.h"
#include "lua/lua_internal.h"

namespace reverie::lua::internal {
namespace {

constexpr int kHookEvery = 1000;  // instructions between budget checks
// Hook firings between two reads of the thread's CPU clock (a system call
// of about a microsecond: 1% of 64,000 instructions).
constexpr int kCpuCheckEvery = 64;
// Blocks up to this size are not charged: an instruction allocates a few of
// them at most, and its count covers them.
constexpr size_t kChargedAllocBytes = 256;
// The CPU time a script may use: kCpuNsPerUnit per unit of budget, plus a
// floor for fixed costs of kCpuFloorNs or kCpuFloorNsPerUnit per unit, the
// less (small budgets, as the fuzzer's, stop within seconds). Counted work
// runs at 2 to 12 ns a unit (docs/RELIABILITY.md), so only work that no
// count sees reaches it; sanitized builds run several times slower.
#if defined(REVERIE_ASAN) || defined(REVERIE_TSAN)
constexpr int64_t kCpuSlowdown = 10;
#else
constexpr int64_t kCpuSlowdown = 1;
#endif
constexpr int64_t kCpuFloorNs = 2'000'000'000 * kCpuSlowdown;
constexpr int64_t kCpuFloorNsPerUnit = 200 * kCpuSlowdown;
constexpr int64_t kCpuNsPerUnit = 50 * kCpuSlowdown;

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t CpuCeilingNs(const EngineLimits& l) {
  const int64_t budget = std::max<int64_t>(l.instruction_budget, 0);
  const int64_t floor = std::min(kCpuFloorNs, SatMul(budget, kCpuFloorNsPerUnit));
  return SatAdd(floor, SatMul(budget, kCpuNsPerUnit));
}

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

void BudgetExceeded(lua_State* L, const char* where, int64_t cpu_ns = -1) {
  std::string message = absl::StrFormat("%s: instruction budget of %d VM instructions exceeded", where,
                                        State(L).limits.instruction_budget);
  if (cpu_ns >= 0) {
    absl::StrAppendFormat(&message,
                          " (%.1f s of CPU, more than the budget allows: work that no count sees, such as "
                          "comparing long strings)",
                          static_cast<double>(cpu_ns) / 1e9);
  }
  MarkExhausted(L, message.c_str());
  RaiseExhausted(L);
}

// The CPU time used so far by the script's entries into Lua.
int64_t CpuUsed(const EngineState& S) {
  return S.cpu_depth > 0 ? S.cpu_ns + (ThreadCpuNs() - S.cpu_entered_ns) : S.cpu_ns;
}

void CountHook(lua_State* L, lua_Debug* ar) {
  EngineState& S = State(L);
  if (!S.exhausted.empty()) RaiseExhausted(L);
  S.instructions = SatAdd(S.instructions, kHookEvery);
  int64_t cpu = -1;
  if (++S.hooks_since_cpu_check >= (S.alloc.big_strings.empty() ? kCpuCheckEvery : 1)) {
    S.hooks_since_cpu_check = 0;
    if (const int64_t used = CpuUsed(S); used > CpuCeilingNs(S.limits)) cpu = used;
  }
  if (S.instructions <= S.limits.instruction_budget && cpu < 0) return;
  // Name the running line, not the caller's.
  lua_getinfo(L, "Sl", ar);
  char where[256];
  std::snprintf(where, sizeof(where), "%s:%d", ar->short_src, ar->currentline);
  BudgetExceeded(L, where, cpu);
}

// The allocator spent the budget: make the main thread's hook fire at its
// next instruction, where it raises with the line. (A coroutine's hook
// fires within kHookEvery instructions; until then the allocator refuses
// it every block of kBigStringBytes or more, so it cannot go on building
// long strings.)
// The allocator knows no other thread: it must not keep a pointer to a
// coroutine, which the collector may free.
void FireHookNow(EngineState& S) {
  if (S.L != nullptr) lua_sethook(S.L, CountHook, LUA_MASKCOUNT, 1);
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
  std::snprintf(out, size, "%s", State(L).run.display_name.c_str());
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

// The work of one caught error (see the file comment): about what 1,000
// instructions take, the unwinding of one C++ exception.
constexpr int64_t kErrorUnits = 1000;

// After pcall or xpcall: their results from index 1, the first false when
// they caught an error.
int ProtectedCallDone(lua_State* L, int status, lua_KContext ctx) {
  if (lua_gettop(L) >= 1 && lua_isboolean(L, 1) && !lua_toboolean(L, 1)) {
    ChargeWork(L, kErrorUnits);
  }
  return lua_gettop(L);
}

int GuardedPcall(lua_State* L) {
  luaL_checkany(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  // With a continuation, so that a coroutine may still yield inside.
  lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, ProtectedCallDone);
  return ProtectedCallDone(L, LUA_OK, 0);
}

int GuardedXpcall(lua_State* L) {
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, GuardedHandler, 1);
  lua_replace(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  // With a continuation, so that a coroutine may still yield inside.
  lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, ProtectedCallDone);
  return ProtectedCallDone(L, LUA_OK, 0);
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
    if (ptr != nullptr && old >= kBigStringBytes) a->big_strings.erase(ptr);
    std::free(ptr);
    a->used -= old;
    return nullptr;
  }
  // A new object's osize is its type; a string's block is its header (a
  // few dozen bytes) and its text. Returning nullptr makes Lua collect
  // garbage and retry, then raise "not enough memory".
  const bool new_string = ptr == nullptr && osize == LUA_TSTRING;
  if (new_string && nsize > kMaxStringBytes + 64) {
    a->refused_string = nsize;
    return nullptr;
  }
  if (nsize > old && a->used - old + nsize + a->charged > a->limit) return nullptr;
  const bool charged = a->owner != nullptr && nsize > kChargedAllocBytes && nsize > old;
  // Past the budget, no big block (see FireHookNow); small ones still
  // serve the error's message and traceback.
  if (charged && nsize >= kBigStringBytes &&
      a->owner->instructions > a->owner->limits.instruction_budget) {
    return nullptr;
  }
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nullptr;
  a->used = a->used - old + nsize;
  if (a->used + a->charged > a->peak) a->peak = a->used + a->charged;
  if (new_string && nsize >= kBigStringBytes) {
    try {
      a->big_strings.insert(p);
    } catch (const std::bad_alloc&) {
      // Only how often the CPU time is read depends on it.
    }
  }
  if (charged) {
    EngineState& S = *a->owner;
    S.instructions = SatAdd(S.instructions, static_cast<int64_t>(nsize - old) / kBytesPerUnit);
    if (S.instructions > S.limits.instruction_budget) FireHookNow(S);
  }
  return p;
}

CpuSpan::CpuSpan(EngineState& S) : S_(S) {
  if (S_.cpu_depth++ == 0) S_.cpu_entered_ns = ThreadCpuNs();
}

CpuSpan::~CpuSpan() {
  if (--S_.cpu_depth == 0) S_.cpu_ns = SatAdd(S_.cpu_ns, ThreadCpuNs() - S_.cpu_entered_ns);
}

void GuardBuiltins(lua_State* L) {
  Wrap(L, nullptr, "setmetatable", GuardedSetMetatable);
  Wrap(L, "debug", "setmetatable", GuardedSetMetatable);  // without the sandbox only
  Wrap(L, nullptr, "xpcall", GuardedXpcall);
  Wrap(L, nullptr, "pcall", GuardedPcall);
}

void StartLimits(lua_State* L) {
  EngineState& S = State(L);
  S.alloc.owner = &S;
  lua_sethook(L, CountHook, LUA_MASKCOUNT, kHookEvery);
}

int64_t WorkLeft(const EngineState& S) {
  return std::max<int64_t>(0, S.limits.instruction_budget - std::max<int64_t>(S.instructions, 0));
}

int64_t MemoryLeft(const EngineState& S) {
  const size_t held = S.alloc.used + S.alloc.charged;
  return held >= S.alloc.limit ? 0
                               : static_cast<int64_t>(std::min<size_t>(S.alloc.limit - held, INT64_MAX));
}

void ChargeWork(lua_State* L, int64_t units) {
  EngineState& S = State(L);
  if (!S.exhausted.empty()) RaiseExhausted(L);
  S.instructions = SatAdd(S.instructions, std::max<int64_t>(units, 0));
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
  // In this order, so that no sum wraps (b may be up to INT64_MAX).
  if (a.used + a.charged <= a.limit && b <= a.limit - a.used - a.charged) {
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

namespace {

int LockedNewIndex(lua_State* L) {
  return luaL_error(L, "the metatable of %s is locked (reverie handles cannot be changed)",
                    lua_tostring(L, lua_upvalueindex(1)));
}

// A binding's wrapper (SetBindings): upvalues 1..kUp are the binding's own,
// upvalue kUp + 1 the binding.
template <int kUp>
int Binding(lua_State* L) {
  int64_t bytes = 0;
  for (int i = 1, n = lua_gettop(L); i <= n; ++i) {
    if (lua_type(L, i) == LUA_TSTRING) bytes = SatAdd(bytes, static_cast<int64_t>(lua_rawlen(L, i)));
  }
  if (bytes >= kBytesPerUnit) ChargeWork(L, bytes / kBytesPerUnit);
  const auto f = reinterpret_cast<lua_CFunction>(lua_touserdata(L, lua_upvalueindex(kUp + 1)));
  try {
    return f(L);
  } catch (const std::bad_alloc&) {
    // A Lua error is not a std::bad_alloc: this only catches the C++ heap
    // running out under a graph change (the cap is an estimate).
    Raise(L, "out of memory: the machine had no memory left for this graph change");
  }
}

}  // namespace

void LockMetatable(lua_State* L, const char* what) {
  lua_createtable(L, 0, 0);  // the proxy getmetatable returns
  lua_createtable(L, 0, 2);  // its own metatable
  lua_pushstring(L, what);
  lua_pushcclosure(L, LockedNewIndex, 1);
  lua_setfield(L, -2, "__newindex");
  lua_pushliteral(L, "locked");
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "__metatable");
}

void PushBinding(lua_State* L, lua_CFunction f, int nup) {
  lua_pushlightuserdata(L, reinterpret_cast<void*>(f));
  if (nup == 0) {
    lua_pushcclosure(L, Binding<0>, 1);
  } else {
    lua_pushcclosure(L, Binding<1>, 2);
  }
}

void SetBindings(lua_State* L, const luaL_Reg* l) {
  for (; l->name != nullptr; ++l) {
    PushBinding(L, l->func, 0);
    lua_setfield(L, -2, l->name);
  }
}

int64_t GraphWork(const depgraph::Graph& g) {
  // A plain pass (counting, copying ids) costs about a nanosecond per task
  // or edge, a quarter of a VM instruction's few nanoseconds.
  return static_cast<int64_t>(g.task_count() + g.edge_count() + g.resource_count()) / 4 + 1;
}

void ChargeSteps(lua_State* L, int64_t steps) {
  if (steps > 0) ChargeWork(L, steps / 4 + 1);  // GraphWork's rate
}

void ChargeAdjacency(lua_State* L) {
  // What the read will cost: nothing when the adjacency is current, the
  // lists a patch moves, or a build.
  const depgraph::Graph* g = State(L).graph();
  if (g != nullptr) ChargeSteps(L, g->AdjacencyWork());
}

void ChargeReachWork(lua_State* L, int64_t before) {
  const depgraph::Graph* g = State(L).graph();
  if (g != nullptr) ChargeSteps(L, g->reach_work() - before);
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
