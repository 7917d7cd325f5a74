// Lua bindings: the Resource handle (a thread, stream or channel of the
// graph): its fields, first/last task and tasks().
#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "depgraph/graph.h"
#include "lua/lua_internal.h"

namespace reverie::lua::internal {
namespace {

using depgraph::Graph;
using depgraph::ResourceId;
using depgraph::TaskId;

void PushKindName(lua_State* L, depgraph::ResourceKind kind) {
  const std::string_view s = depgraph::ResourceKindName(kind);
  lua_pushlstring(L, s.data(), s.size());
}

int ResourceEq(lua_State* L) {
  auto* a = static_cast<ResourceUd*>(luaL_testudata(L, 1, kResourceMt));
  auto* b = static_cast<ResourceUd*>(luaL_testudata(L, 2, kResourceMt));
  lua_pushboolean(L, a != nullptr && b != nullptr && a->id == b->id);
  return 1;
}

int ResourceToString(lua_State* L) {
  const ResourceId r = CheckResource(L, 1);
  const depgraph::Resource& res = GraphOrRaise(L).resource(r);
  lua_pushfstring(L, "resource %d ", static_cast<int>(r.value()));
  PushKindName(L, res.kind);
  lua_pushfstring(L, " '%s'", res.name.c_str());
  lua_concat(L, 3);
  return 1;
}

int ResourceFirst(lua_State* L) {
  const ResourceId r = CheckResource(L, 1);
  const TaskId t = GraphOrRaise(L).first_on_resource(r);
  if (!t.valid()) return 0;
  PushTask(L, t);
  return 1;
}

int ResourceLast(lua_State* L) {
  const ResourceId r = CheckResource(L, 1);
  const TaskId t = GraphOrRaise(L).last_on_resource(r);
  if (!t.valid()) return 0;
  PushTask(L, t);
  return 1;
}

int ResourceTasks(lua_State* L) {
  const ResourceId r = CheckResource(L, 1);
  const Graph& g = GraphOrRaise(L);
  std::vector<TaskId> ids;
  for (TaskId t = g.first_on_resource(r); t.valid(); t = g.next_on_resource(t)) ids.push_back(t);
  ChargeWork(L, 4 * static_cast<int64_t>(ids.size()));  // walk, sort, copy
  std::sort(ids.begin(), ids.end());
  PushSelection(L, ids);
  return 1;
}

const luaL_Reg kResourceMethods[] = {
    {"first", ResourceFirst}, {"last", ResourceLast}, {"tasks", ResourceTasks}, {nullptr, nullptr}};

int ResourceIndex(lua_State* L) {
  const ResourceId r = CheckResource(L, 1);
  const char* k = luaL_checkstring(L, 2);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  const depgraph::Resource& res = GraphOrRaise(L).resource(r);
  if (std::strcmp(k, "id") == 0) {
    lua_pushinteger(L, r.value());
  } else if (std::strcmp(k, "name") == 0) {
    lua_pushstring(L, res.name.c_str());
  } else if (std::strcmp(k, "kind") == 0) {
    PushKindName(L, res.kind);
  } else if (std::strcmp(k, "ordered") == 0) {
    lua_pushboolean(L, res.ordered);
  } else if (std::strcmp(k, "device") == 0) {
    lua_pushinteger(L, res.device);
  } else if (std::strcmp(k, "native_id") == 0) {
    lua_pushinteger(L, res.native_id);
  } else {
    return luaL_error(L, "resource has no field '%s' (id, name, kind, ordered, device, native_id)",
                      k);
  }
  return 1;
}

}  // namespace

void RegisterResource(lua_State* L) {
  NewHandleClass(L, kResourceMt, "resources", kResourceMethods, ResourceIndex, nullptr, ResourceEq,
                 ResourceToString);
}

}  // namespace reverie::lua::internal
