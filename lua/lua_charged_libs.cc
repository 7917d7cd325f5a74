// The standard library's C functions charged to the instruction budget by
// the work their arguments imply. Lua's hook counts VM instructions only: a
// call such as s:upper() on a 30 MB string, or table.insert(t, 1, x) on a
// table of a million elements, is one instruction that does millions of
// steps, and a loop of them ran far past any budget (issue 17, D1).
//
// Every function of `string`, `table` and `utf8` (but the pattern functions,
// which count their own steps: lua_strings.cc) is wrapped, and so are `load`
// (compiling is linear in the text) and `collectgarbage` (a full collection
// walks the whole heap): before the call each charges about one unit per
// element or per 16 bytes it will touch.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "lua/lua_internal.h"

namespace reverie::lua::internal {
namespace {

constexpr int64_t kBytesPerUnit = 16;

// How a function's work follows from its arguments.
enum class Cost : uint8_t {
  kSizes,  // every string argument's bytes, every table argument's length
  kOne,    // constant work (string.len, table.insert(t, v) at the end)
  kRep,    // string.rep(s, n [, sep]): the result's bytes
  kSub,    // string.sub(s, i, j): the result's bytes
  kRange,  // string.byte / utf8.codepoint / table.unpack (s|t, i, j): j - i + 1
  kMove,   // table.move(a1, f, e, t [, a2]): e - f + 1
  kSort,   // table.sort(t [, comp]): n log2 n comparisons
  kInsert,  // table.insert(t, [pos,] v): the elements shifted up (none at the end)
  kRemove,  // table.remove(t [, pos]): the elements shifted down
  kHeap,    // collectgarbage(["collect" | "step"]): the heap's bytes
};

struct Rule {
  const char* lib;
  const char* name;
  Cost cost;
};

constexpr Rule kRules[] = {
    {LUA_STRLIBNAME, "rep", Cost::kRep},        {LUA_STRLIBNAME, "sub", Cost::kSub},
    {LUA_STRLIBNAME, "byte", Cost::kRange},     {LUA_STRLIBNAME, "len", Cost::kOne},
    {LUA_STRLIBNAME, "char", Cost::kOne},       {LUA_STRLIBNAME, "packsize", Cost::kOne},
    {LUA_UTF8LIBNAME, "codepoint", Cost::kRange}, {LUA_UTF8LIBNAME, "char", Cost::kOne},
    {LUA_UTF8LIBNAME, "codes", Cost::kOne},     {LUA_TABLIBNAME, "unpack", Cost::kRange},
    {LUA_TABLIBNAME, "move", Cost::kMove},      {LUA_TABLIBNAME, "sort", Cost::kSort},
    {LUA_TABLIBNAME, "insert", Cost::kInsert},  {LUA_TABLIBNAME, "remove", Cost::kRemove},
};
// Counted by their own matcher (lua_strings.cc).
constexpr const char* kSelfCounted[] = {"find", "match", "gmatch", "gsub"};

int64_t Length(lua_State* L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING) return static_cast<int64_t>(lua_rawlen(L, idx));
  if (lua_type(L, idx) == LUA_TTABLE) return static_cast<int64_t>(lua_rawlen(L, idx));
  return 0;
}

// A [i, j] range's size as string.byte / table.unpack read it (defaults 1
// and the length; negative string positions count from the end).
int64_t RangeSize(lua_State* L, bool is_string) {
  const int64_t n = Length(L, 1);
  int64_t i = lua_isinteger(L, 2) ? lua_tointeger(L, 2) : 1;
  int64_t j = lua_isinteger(L, 3) ? lua_tointeger(L, 3) : (is_string ? i : n);
  if (is_string) {
    if (i < 0) i = n + i + 1;
    if (j < 0) j = n + j + 1;
  }
  if (j < i) return 0;
  // Saturating: a range of 2^63 is refused by Lua itself, and the charge
  // must not wrap before that.
  return j - i >= INT64_MAX / 2 ? INT64_MAX / 2 : j - i + 1;
}

int64_t CostOf(lua_State* L, Cost c) {
  switch (c) {
    case Cost::kRep: {
      const double n = lua_isnumber(L, 2) ? lua_tonumber(L, 2) : 0;
      const double each = static_cast<double>(Length(L, 1) + Length(L, 3));
      const double bytes = n > 0 ? n * each : 0;
      return bytes > 9e18 ? INT64_MAX / 2 : static_cast<int64_t>(bytes) / kBytesPerUnit;
    }
    case Cost::kOne: return 0;
    case Cost::kSub: {
      // string.sub's result: [i, j] clipped to the string.
      const int64_t n = Length(L, 1);
      int64_t i = lua_isinteger(L, 2) ? lua_tointeger(L, 2) : 1;
      int64_t j = lua_isinteger(L, 3) ? lua_tointeger(L, 3) : -1;
      if (i < 0) i = std::max<int64_t>(n + i + 1, 1);
      if (j < 0) j = n + j + 1;
      j = std::min(j, n);
      return j < i ? 0 : (j - i + 1) / kBytesPerUnit;
    }
    case Cost::kRange: return RangeSize(L, lua_type(L, 1) == LUA_TSTRING);
    case Cost::kMove: {
      if (!lua_isinteger(L, 2) || !lua_isinteger(L, 3)) return 0;
      const int64_t f = lua_tointeger(L, 2), e = lua_tointeger(L, 3);
      return e < f ? 0 : (e - f >= INT64_MAX / 2 ? INT64_MAX / 2 : e - f + 1);
    }
    case Cost::kSort: {
      const double n = static_cast<double>(Length(L, 1));
      return n < 2 ? 1 : static_cast<int64_t>(n * std::ceil(std::log2(n)));
    }
    case Cost::kInsert:
    case Cost::kRemove: {
      // At the end (insert(t, v), remove(t)) nothing moves; a position
      // shifts every element after it.
      const bool has_pos = c == Cost::kInsert ? lua_gettop(L) >= 3 : lua_gettop(L) >= 2;
      if (!has_pos || !lua_isinteger(L, 2)) return 0;
      const int64_t n = Length(L, 1), pos = lua_tointeger(L, 2);
      return pos >= 1 && pos <= n ? n - pos + 1 : 0;
    }
    case Cost::kHeap: {
      const char* opt = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : "collect";
      if (std::strcmp(opt, "collect") != 0 && std::strcmp(opt, "step") != 0) return 0;
      return static_cast<int64_t>(State(L).alloc.used) / kBytesPerUnit;
    }
    case Cost::kSizes: break;
  }
  int64_t bytes = 0, elements = 0;
  for (int i = 1, top = lua_gettop(L); i <= top; ++i) {
    if (lua_type(L, i) == LUA_TSTRING) bytes += Length(L, i);
    if (lua_type(L, i) == LUA_TTABLE) elements += Length(L, i);
  }
  return elements + bytes / kBytesPerUnit;
}

// The wrapper: upvalue 1 is the library function, upvalue 2 its Cost.
int Charged(lua_State* L) {
  ChargeWork(L, 1 + CostOf(L, static_cast<Cost>(lua_tointeger(L, lua_upvalueindex(2)))));
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

Cost CostFor(const char* lib, const char* name) {
  for (const Rule& r : kRules) {
    if (std::strcmp(r.lib, lib) == 0 && std::strcmp(r.name, name) == 0) return r.cost;
  }
  return Cost::kSizes;
}

void WrapLibrary(lua_State* L, const char* lib) {
  lua_pushglobaltable(L);
  lua_pushstring(L, lib);
  const int type = lua_rawget(L, -2);  // raw: the sandbox's _G raises
  lua_remove(L, -2);
  if (type != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  const int t = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    const char* name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : nullptr;
    bool skip = name == nullptr || !lua_iscfunction(L, -1);
    for (const char* self : kSelfCounted) {
      skip = skip || (std::strcmp(lib, LUA_STRLIBNAME) == 0 && std::strcmp(name, self) == 0);
    }
    if (skip) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushinteger(L, static_cast<lua_Integer>(CostFor(lib, name)));
    lua_pushcclosure(L, Charged, 2);
    lua_pushvalue(L, -2);  // the key
    lua_insert(L, -2);
    lua_rawset(L, t);  // replacing an existing key's value keeps lua_next valid
  }
  lua_pop(L, 1);
}

}  // namespace

void ChargeStandardLibraries(lua_State* L) {
  for (const char* lib : {LUA_STRLIBNAME, LUA_TABLIBNAME, LUA_UTF8LIBNAME}) WrapLibrary(L, lib);
  lua_pushglobaltable(L);
  for (const auto& [name, cost] : {std::pair{"load", Cost::kSizes},
                                   std::pair{"collectgarbage", Cost::kHeap}}) {
    if (lua_getfield(L, -1, name) != LUA_TFUNCTION) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushinteger(L, static_cast<lua_Integer>(cost));
    lua_pushcclosure(L, Charged, 2);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

}  // namespace reverie::lua::internal
