// Lua bindings: the query tables graph:select / sel:select read, resolved
// with transforms::Select (one pass over the tasks, names matched once).
#include <cstring>

#include "lua/lua_internal.h"
#include "base/status_macros.h"

namespace reverie::lua::internal {
namespace {

// ---- query tables ----------------------------------------------------------

constexpr std::string_view kQueryFields[] = {"kind",     "name",      "name_regex", "layer",
                                        "no_layer", "phase",     "resource",   "resource_kind",
                                        "step", "op",       "cpu_time",   "class",
                                        "where",
                                        "iteration"};  // deprecated name of "step" (0.1.0)

absl::Status AddKind(transforms::TaskQuery* q, const char* v) {
  REVERIE_ASSIGN_OR_RETURN(uint32_t m, transforms::ParseKindMask(v));
  q->kinds |= m;
  return absl::OkStatus();
}
absl::Status AddPhase(transforms::TaskQuery* q, const char* v) {
  REVERIE_ASSIGN_OR_RETURN(depgraph::Phase p, transforms::ParsePhase(v));
  q->phases |= transforms::PhaseBit(p);
  return absl::OkStatus();
}
absl::Status AddResourceKind(transforms::TaskQuery* q, const char* v) {
  REVERIE_ASSIGN_OR_RETURN(depgraph::ResourceKind k, transforms::ParseResourceKind(v));
  q->resource_kinds |= transforms::ResourceKindBit(k);
  return absl::OkStatus();
}
absl::Status AddClass(transforms::TaskQuery* q, const char* v) {
  REVERIE_ASSIGN_OR_RETURN(uint32_t c, transforms::ParseKernelClassBit(v));
  q->kernel_classes |= c;
  return absl::OkStatus();
}
absl::Status AddCpuTime(transforms::TaskQuery* q, const char* v) {
  REVERIE_ASSIGN_OR_RETURN(transforms::CpuTime c, transforms::ParseCpuTime(v));
  q->cpu_times |= transforms::CpuTimeBit(c);
  return absl::OkStatus();
}
void AddName(transforms::TaskQuery* q, const char* v) { q->names.emplace_back(v); }
void AddLayer(transforms::TaskQuery* q, const char* v) { q->layers.emplace_back(v); }

// A pattern longer than this is refused: RE2 compiles patterns within a
// bounded memory, and no name needs a longer one.
constexpr size_t kMaxPatternBytes = 64 << 10;
// The patterns of one query together (names, name_regex, layers, ops): each
// set is compiled into one RE2 program, whose size, memory and the work of
// RE2's own passes grow with it (issue 29, D24: a list of 1,000 patterns of
// 64 KiB ran for minutes in 1.1 GB; D28: past about a million regexp nodes
// RE2 logs a line per node to stderr).
constexpr size_t kMaxQueryPatternBytes = 256 << 10;
// Compiling a pattern, charged per byte: RE2 parses, simplifies and
// compiles it into a program (about 1.5 us a byte for "a*a*...").
constexpr int64_t kUnitsPerPatternByte = 64;

// A string of a query (a pattern or a name), its bytes counted in
// *query_bytes against kMaxQueryPatternBytes.
const char* CheckPattern(lua_State* L, int idx, const char* field, size_t* query_bytes) {
  size_t n = 0;
  const char* v = lua_tolstring(L, idx, &n);
  if (n > kMaxPatternBytes) {
    luaL_error(L, "select: a '%s' pattern of %I bytes is longer than the %I allowed", field,
               static_cast<lua_Integer>(n), static_cast<lua_Integer>(kMaxPatternBytes));
  }
  *query_bytes += n;
  if (*query_bytes > kMaxQueryPatternBytes) {
    luaL_error(L, "select: the patterns of one query hold more than the %I bytes allowed",
               static_cast<lua_Integer>(kMaxQueryPatternBytes));
  }
  return v;
}

// Calls `add` for the string or each string of the array at `idx`.
template <typename F>
void ForEachString(lua_State* L, int idx, const char* field, size_t* query_bytes, F add) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    add(CheckPattern(L, idx, field, query_bytes));
    return;
  }
  if (!lua_istable(L, idx)) luaL_error(L, "select: '%s' must be a string or a list of strings", field);
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, idx));  // raw: see D21
  ChargeWork(L, n);
  for (lua_Integer i = 1; i <= n; ++i) {
    if (lua_rawgeti(L, idx, i) != LUA_TSTRING) {
      luaL_error(L, "select: '%s' must be a string or a list of strings", field);
    }
    add(CheckPattern(L, -1, field, query_bytes));
    lua_pop(L, 1);
  }
}

}  // namespace

int ReadQuery(lua_State* L, int idx, const char* what, transforms::TaskQuery* q) {
  luaL_checktype(L, idx, LUA_TTABLE);
  idx = lua_absindex(L, idx);
  *q = transforms::TaskQuery();
  // A typo must not silently select everything.
  CheckFields(L, idx, what, kQueryFields);
  const int top = lua_gettop(L);
  size_t bytes = 0;  // of the query's strings, against kMaxQueryPatternBytes
  if (lua_getfield(L, idx, "kind") != LUA_TNIL) {
    ForEachString(L, -1, "kind", &bytes, [&](const char* v) { RaiseIfError(L, AddKind(q, v)); });
  }
  if (lua_getfield(L, idx, "name") != LUA_TNIL) {
    ForEachString(L, -1, "name", &bytes, [&](const char* v) { AddName(q, v); });
  }
  if (lua_getfield(L, idx, "name_regex") != LUA_TNIL) {
    luaL_checkstring(L, -1);
    q->name_regex = CheckPattern(L, -1, "name_regex", &bytes);
  }
  if (lua_getfield(L, idx, "layer") != LUA_TNIL) {
    ForEachString(L, -1, "layer", &bytes, [&](const char* v) { AddLayer(q, v); });
  }
  if (lua_getfield(L, idx, "no_layer") != LUA_TNIL) q->no_layer = lua_toboolean(L, -1);
  if (lua_getfield(L, idx, "op") != LUA_TNIL) {
    ForEachString(L, -1, "op", &bytes, [&](const char* v) { q->ops.emplace_back(v); });
  }
  if (lua_getfield(L, idx, "class") != LUA_TNIL) {
    ForEachString(L, -1, "class", &bytes, [&](const char* v) { RaiseIfError(L, AddClass(q, v)); });
  }
  if (lua_getfield(L, idx, "cpu_time") != LUA_TNIL) {
    ForEachString(L, -1, "cpu_time", &bytes, [&](const char* v) { RaiseIfError(L, AddCpuTime(q, v)); });
  }
  if (lua_getfield(L, idx, "phase") != LUA_TNIL) {
    ForEachString(L, -1, "phase", &bytes, [&](const char* v) { RaiseIfError(L, AddPhase(q, v)); });
  }
  if (lua_getfield(L, idx, "resource_kind") != LUA_TNIL) {
    ForEachString(L, -1, "resource_kind", &bytes,
                  [&](const char* v) { RaiseIfError(L, AddResourceKind(q, v)); });
  }
  if (lua_getfield(L, idx, "resource") != LUA_TNIL) {
    if (luaL_testudata(L, -1, kResourceMt) != nullptr) {
      q->resources.push_back(CheckResource(L, -1));
    } else {
      if (lua_type(L, -1) != LUA_TTABLE) {
        luaL_error(L, "select: 'resource' must be a resource or a list of resources, got %s",
                   luaL_typename(L, -1));
      }
      const auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
      ChargeWork(L, n);
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, -1, i);
        q->resources.push_back(CheckResource(L, -1));
        lua_pop(L, 1);
      }
    }
  }
  if (GetStepField(L, idx) != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TTABLE) {
      q->steps.push_back(CheckInt32(L, -1, "select: step"));
    } else {
      const auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
      ChargeWork(L, n);
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, -1, i);
        q->steps.push_back(CheckInt32(L, -1, "select: step"));
        lua_pop(L, 1);
      }
    }
  }
  lua_settop(L, top);
  ChargeWork(L, SatMul(static_cast<int64_t>(bytes), kUnitsPerPatternByte));
  if (lua_getfield(L, idx, "where") == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  luaL_checktype(L, -1, LUA_TFUNCTION);
  lua_pop(L, 1);
  // The caller finds the function in the query table again when needed.
  lua_getfield(L, idx, "where");
  return lua_gettop(L);
}

transforms::Selection SelectOrRaise(lua_State* L, const transforms::TaskQuery& q) {
  EngineState& S = State(L);
  const depgraph::Graph& g = GraphOrRaise(L);
  // One pass over the tasks; RE2 matches every name (and layer path) once,
  // in time linear in its length, per pattern set.
  int64_t work = static_cast<int64_t>(g.task_count());
  const int64_t name_sets = (q.names.empty() ? 0 : 1) + (q.name_regex.empty() ? 0 : 1);
  if (name_sets > 0) work += name_sets * NameBytes(S, g) / 8 + static_cast<int64_t>(g.name_count());
  if (!q.layers.empty()) work += LayerBytes(S, g) / 8 + static_cast<int64_t>(g.layer_count());
  if (!q.ops.empty()) work += NameBytes(S, g) / 8 + static_cast<int64_t>(g.op_count());
  ChargeWork(L, work);
  absl::StatusOr<transforms::Selection> sel = transforms::Select(g, q);
  RaiseIfError(L, sel.status());
  return *std::move(sel);
}

// graph:select(query)
int GraphSelect(lua_State* L) {
  GraphOrRaise(L);
  transforms::TaskQuery q;
  const int where = ReadQuery(L, 2, "select", &q);
  PushSelection(L, SelectOrRaise(L, q).ids());
  if (where == 0) return 1;
  lua_pushcfunction(L, SelFilter);
  lua_insert(L, -2);
  lua_pushvalue(L, where);
  lua_call(L, 2, 1);
  return 1;
}

}  // namespace reverie::lua::internal
