// Lua bindings: the query tables graph:select / sel:select read, resolved
// with transforms::Select (one pass over the tasks, names matched once).
#include <cstring>

#include "lua/lua_internal.h"

namespace reverie::lua::internal {
namespace {

// ---- query tables ----------------------------------------------------------

constexpr const char* kQueryFields[] = {"kind",     "name",      "name_regex", "layer",
                                        "no_layer", "phase",     "resource",   "resource_kind",
                                        "iteration", "op",       "cpu_time",   "class",
                                        "where"};

absl::Status AddKind(transforms::TaskQuery* q, const char* v) {
  absl::StatusOr<uint32_t> m = transforms::ParseKindMask(v);
  if (!m.ok()) return m.status();
  q->kinds |= *m;
  return absl::OkStatus();
}
absl::Status AddPhase(transforms::TaskQuery* q, const char* v) {
  absl::StatusOr<depgraph::Phase> p = transforms::ParsePhase(v);
  if (!p.ok()) return p.status();
  q->phases |= transforms::PhaseBit(*p);
  return absl::OkStatus();
}
absl::Status AddResourceKind(transforms::TaskQuery* q, const char* v) {
  absl::StatusOr<depgraph::ResourceKind> k = transforms::ParseResourceKind(v);
  if (!k.ok()) return k.status();
  q->resource_kinds |= transforms::ResourceKindBit(*k);
  return absl::OkStatus();
}
absl::Status AddClass(transforms::TaskQuery* q, const char* v) {
  absl::StatusOr<uint32_t> c = transforms::ParseKernelClassBit(v);
  if (!c.ok()) return c.status();
  q->kernel_classes |= *c;
  return absl::OkStatus();
}
absl::Status AddCpuTime(transforms::TaskQuery* q, const char* v) {
  absl::StatusOr<transforms::CpuTime> c = transforms::ParseCpuTime(v);
  if (!c.ok()) return c.status();
  q->cpu_times |= transforms::CpuTimeBit(*c);
  return absl::OkStatus();
}
void AddName(transforms::TaskQuery* q, const char* v) { q->names.emplace_back(v); }
void AddLayer(transforms::TaskQuery* q, const char* v) { q->layers.emplace_back(v); }

// A pattern longer than this is refused: RE2 compiles patterns within a
// bounded memory, and no name needs a longer one.
constexpr size_t kMaxPatternBytes = 64 << 10;

const char* CheckPattern(lua_State* L, int idx, const char* field) {
  size_t n = 0;
  const char* v = lua_tolstring(L, idx, &n);
  if (n > kMaxPatternBytes) {
    luaL_error(L, "select: a '%s' pattern of %I bytes is longer than the %I allowed", field,
               static_cast<lua_Integer>(n), static_cast<lua_Integer>(kMaxPatternBytes));
  }
  return v;
}

// Calls `add` for the string or each string of the array at `idx`.
template <typename F>
void ForEachString(lua_State* L, int idx, const char* field, F add) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    add(CheckPattern(L, idx, field));
    return;
  }
  if (!lua_istable(L, idx)) luaL_error(L, "select: '%s' must be a string or a list of strings", field);
  const lua_Integer n = luaL_len(L, idx);
  ChargeWork(L, n);
  for (lua_Integer i = 1; i <= n; ++i) {
    if (lua_rawgeti(L, idx, i) != LUA_TSTRING) {
      luaL_error(L, "select: '%s' must be a string or a list of strings", field);
    }
    add(CheckPattern(L, -1, field));
    lua_pop(L, 1);
  }
}

}  // namespace

int ReadQuery(lua_State* L, int idx, const char* what, transforms::TaskQuery* q) {
  luaL_checktype(L, idx, LUA_TTABLE);
  idx = lua_absindex(L, idx);
  *q = transforms::TaskQuery();
  // Reject unknown fields: a typo must not silently select everything.
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    const char* k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    bool known = false;
    for (const char* f : kQueryFields) known = known || std::strcmp(k, f) == 0;
    if (!known) {
      luaL_error(L,
                 "%s: unknown field '%s' (kind, name, name_regex, layer, no_layer, phase, "
                 "resource, resource_kind, iteration, op, cpu_time, class, where)",
                 what, k);
    }
    lua_pop(L, 1);
  }
  const int top = lua_gettop(L);
  if (lua_getfield(L, idx, "kind") != LUA_TNIL) {
    ForEachString(L, -1, "kind", [&](const char* v) { RaiseIfError(L, AddKind(q, v)); });
  }
  if (lua_getfield(L, idx, "name") != LUA_TNIL) {
    ForEachString(L, -1, "name", [&](const char* v) { AddName(q, v); });
  }
  if (lua_getfield(L, idx, "name_regex") != LUA_TNIL) {
    luaL_checkstring(L, -1);
    q->name_regex = CheckPattern(L, -1, "name_regex");
  }
  if (lua_getfield(L, idx, "layer") != LUA_TNIL) {
    ForEachString(L, -1, "layer", [&](const char* v) { AddLayer(q, v); });
  }
  if (lua_getfield(L, idx, "no_layer") != LUA_TNIL) q->no_layer = lua_toboolean(L, -1);
  if (lua_getfield(L, idx, "op") != LUA_TNIL) {
    ForEachString(L, -1, "op", [&](const char* v) { q->ops.emplace_back(v); });
  }
  if (lua_getfield(L, idx, "class") != LUA_TNIL) {
    ForEachString(L, -1, "class", [&](const char* v) { RaiseIfError(L, AddClass(q, v)); });
  }
  if (lua_getfield(L, idx, "cpu_time") != LUA_TNIL) {
    ForEachString(L, -1, "cpu_time", [&](const char* v) { RaiseIfError(L, AddCpuTime(q, v)); });
  }
  if (lua_getfield(L, idx, "phase") != LUA_TNIL) {
    ForEachString(L, -1, "phase", [&](const char* v) { RaiseIfError(L, AddPhase(q, v)); });
  }
  if (lua_getfield(L, idx, "resource_kind") != LUA_TNIL) {
    ForEachString(L, -1, "resource_kind",
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
      const lua_Integer n = luaL_len(L, -1);
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, -1, i);
        q->resources.push_back(CheckResource(L, -1));
        lua_pop(L, 1);
      }
    }
  }
  if (lua_getfield(L, idx, "iteration") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TTABLE) {
      q->iterations.push_back(CheckInt32(L, -1, "select: iteration"));
    } else {
      const lua_Integer n = luaL_len(L, -1);
      ChargeWork(L, n);
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, -1, i);
        q->iterations.push_back(CheckInt32(L, -1, "select: iteration"));
        lua_pop(L, 1);
      }
    }
  }
  lua_settop(L, top);
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
