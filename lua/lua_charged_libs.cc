// The standard library's C functions charged to the instruction budget by
// the work their arguments imply. Lua's hook counts VM instructions only: a
// call such as s:upper() on a 30 MB string, or table.insert(t, 1, x) on a
// table of a million elements, is one instruction that does millions of
// steps, and a loop of them ran far past any budget (issue 17, D1).
//
// Every function of `string`, `table` and `utf8` (but the pattern functions,
// which count their own steps: lua_strings.cc), the string metatable's
// arithmetic (`"10" + 1` converts the string), `load`, `collectgarbage` and
// the base functions that read strings or hash keys are wrapped: before the
// call each charges a unit per element or per kBytesPerUnit bytes it will
// touch. Every amount saturates and none is negative (issue 29, D21:
// table.move(t, -2, math.maxinteger) charged about -2^63, a refund).
//
// Lengths: a table's length is read raw when it is a plain table; where Lua
// would call a __len metamethod, the wrapper calls it once and passes the
// result on as an explicit bound (table.unpack, table.concat), so the
// function cannot see another length than the one charged. table.insert and
// table.remove are reverie's own (Lua 5.4's semantics and messages), which
// read the length once and charge the elements they shift; table.sort sorts
// only tables whose elements and length are raw (a metamethod would hide its
// work), and is charged for comparing its longest string.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "lua/lua_internal.h"

namespace reverie::lua::internal {
namespace {

// Lua's own bounds: a call cannot return more values than this
// (LUAI_MAXSTACK), nor sort an array this long.
constexpr int64_t kMaxResults = 1'000'000;

// How a function's work follows from its arguments (each also pays a unit
// per kBytesPerUnit bytes of its string arguments: see Charged).
enum class Cost : uint8_t {
  kSizes,   // every table argument's length
  kOne,     // constant work (string.len, utf8.char)
  kRep,     // string.rep(s, n [, sep]): the result's bytes
  kSub,     // string.sub(s, i, j): the result's bytes
  kRange,   // string.byte / utf8.codepoint (s, i, j): the characters read
  kUnpack,  // table.unpack(t, i, j): j - i + 1 values
  kConcat,  // table.concat(t, sep, i, j): j - i + 1 values
  kMove,    // table.move(a1, f, e, t [, a2]): e - f + 1
  kSort,    // table.sort(t [, comp]): n log2 n comparisons of the longest string
  kHeap,    // collectgarbage(["collect" | "step"]): the heap's bytes
};

struct Rule {
  const char* lib;
  const char* name;
  Cost cost;
};

constexpr Rule kRules[] = {
    {LUA_STRLIBNAME, "rep", Cost::kRep},          {LUA_STRLIBNAME, "sub", Cost::kSub},
    {LUA_STRLIBNAME, "byte", Cost::kRange},       {LUA_STRLIBNAME, "len", Cost::kOne},
    {LUA_STRLIBNAME, "char", Cost::kOne},         {LUA_STRLIBNAME, "packsize", Cost::kOne},
    {LUA_UTF8LIBNAME, "codepoint", Cost::kRange}, {LUA_UTF8LIBNAME, "char", Cost::kOne},
    {LUA_UTF8LIBNAME, "codes", Cost::kOne},       {LUA_TABLIBNAME, "unpack", Cost::kUnpack},
    {LUA_TABLIBNAME, "concat", Cost::kConcat},    {LUA_TABLIBNAME, "move", Cost::kMove},
    {LUA_TABLIBNAME, "sort", Cost::kSort},
};
// Counted by their own matcher (lua_strings.cc) or replaced below.
constexpr const char* kNotWrapped[] = {"find", "match", "gmatch", "gsub", "insert", "remove"};
// Base functions that convert, compare or hash their arguments.
constexpr const char* kBaseCharged[] = {"tonumber", "tostring", "rawequal", "rawget", "rawset",
                                        "next", "load", "collectgarbage"};

int64_t RawLength(lua_State* L, int idx) {
  const int t = lua_type(L, idx);
  return t == LUA_TSTRING || t == LUA_TTABLE ? static_cast<int64_t>(lua_rawlen(L, idx)) : 0;
}

// Argument `idx` as Lua's luaL_optinteger reads it (floats with an integer
// value and numeric strings too), else `dflt`.
int64_t OptInt(lua_State* L, int idx, int64_t dflt) {
  int is_int = 0;
  const lua_Integer v = lua_tointegerx(L, idx, &is_int);
  return is_int != 0 ? static_cast<int64_t>(v) : dflt;
}

// A plain table: its length and elements are what lua_rawlen and
// lua_rawgeti see (no __len, __index or __newindex).
bool PlainTable(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) return false;
  if (lua_getmetatable(L, idx) == 0) return true;
  bool plain = true;
  for (const char* f : {"__len", "__index", "__newindex"}) {
    lua_pushstring(L, f);
    if (lua_rawget(L, -2) != LUA_TNIL) plain = false;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return plain;
}

// The characters string.byte / utf8.codepoint read of s[i..j], clipped to
// the string as both clip them (Lua 5.4's posrelat / getendpos).
int64_t StringRange(lua_State* L) {
  const int64_t n = RawLength(L, 1);
  int64_t i = OptInt(L, 2, 1);
  int64_t j = OptInt(L, 3, i);
  i = i > 0 ? i : (i == 0 || i < -n) ? 1 : n + i + 1;
  j = j > n ? n : j >= 0 ? j : j < -n ? 0 : n + j + 1;
  return RangeCount(i, j);
}

// Pins the length of the table at 1 (table.unpack / table.concat): when
// argument `arg` (the range's end) is absent or nil, reads the length as Lua
// would (a __len metamethod is called once, its Lua code counted) and passes
// it as that argument, so the function works on the bound charged.
void PinLength(lua_State* L, int arg) {
  if (!lua_isnoneornil(L, arg)) return;
  if (lua_type(L, 1) != LUA_TTABLE) {
    if (luaL_getmetafield(L, 1, "__len") == LUA_TNIL) return;  // Lua raises
    lua_pop(L, 1);
  }
  const lua_Integer n = luaL_len(L, 1);
  lua_settop(L, std::max(lua_gettop(L), arg));
  lua_pushinteger(L, n);
  lua_replace(L, arg);
}

int64_t CostOf(lua_State* L, Cost c) {
  switch (c) {
    case Cost::kRep: {
      const double n = lua_isnumber(L, 2) ? lua_tonumber(L, 2) : 0;
      const double each = static_cast<double>(RawLength(L, 1) + RawLength(L, 3));
      const double bytes = n > 0 ? n * each : 0;
      if (bytes > static_cast<double>(kMaxStringBytes)) {
        luaL_error(L, "string.rep: a string of %f MiB is longer than the %d MiB a script's string may hold",
                   bytes / (1 << 20), static_cast<int>(kMaxStringBytes >> 20));
      }
      return static_cast<int64_t>(bytes) / kBytesPerUnit;
    }
    case Cost::kOne: return 0;
    case Cost::kSub: {
      // string.sub's result: [i, j] clipped to the string.
      const int64_t n = RawLength(L, 1);
      int64_t i = OptInt(L, 2, 1);
      int64_t j = OptInt(L, 3, -1);
      i = i > 0 ? i : (i == 0 || i < -n) ? 1 : n + i + 1;
      j = j > n ? n : j >= 0 ? j : j < -n ? 0 : n + j + 1;
      return RangeCount(i, j) / kBytesPerUnit;
    }
    case Cost::kRange: return StringRange(L);
    case Cost::kUnpack:
      PinLength(L, 3);
      return std::min(RangeCount(OptInt(L, 2, 1), OptInt(L, 3, 0)), kMaxResults);
    case Cost::kConcat: {
      PinLength(L, 4);
      const int64_t count = RangeCount(OptInt(L, 3, 1), OptInt(L, 4, 0));
      return SatAdd(count, SatMul(count, RawLength(L, 2)) / kBytesPerUnit);
    }
    case Cost::kMove: {
      const int64_t f = OptInt(L, 2, 1), e = OptInt(L, 3, 0);
      // Lua refuses a range it cannot count ("too many elements to move").
      if (e >= f && f <= 0 && e >= INT64_MAX + f) return 0;
      return RangeCount(f, e);
    }
    case Cost::kSort: {
      if (!PlainTable(L, 1)) {
        if (lua_type(L, 1) != LUA_TTABLE) return 0;  // Lua raises "table expected"
        luaL_error(L,
                   "table.sort: reverie sorts tables without __len, __index and __newindex "
                   "metamethods (the work through them could not be charged)");
      }
      const int64_t n = RawLength(L, 1);
      if (n < 2) return 1;
      // Each comparison of two strings reads up to the shorter one.
      int64_t longest = 0;
      for (int64_t i = 1; i <= n; ++i) {
        if (lua_rawgeti(L, 1, i) == LUA_TSTRING) longest = std::max(longest, RawLength(L, -1));
        lua_pop(L, 1);
      }
      const double log2n = std::ceil(std::log2(static_cast<double>(n)));
      const double units = static_cast<double>(n) * log2n *
                               (1.0 + static_cast<double>(longest / kBytesPerUnit)) +
                           static_cast<double>(n);
      return units >= 9e18 ? INT64_MAX : static_cast<int64_t>(units);
    }
    case Cost::kHeap: {
      const char* opt = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : "collect";
      if (std::strcmp(opt, "collect") != 0 && std::strcmp(opt, "step") != 0) return 0;
      return static_cast<int64_t>(State(L).alloc.used) / kBytesPerUnit;
    }
    case Cost::kSizes: break;
  }
  int64_t elements = 0;
  for (int i = 1, top = lua_gettop(L); i <= top; ++i) {
    if (lua_type(L, i) == LUA_TTABLE) elements = SatAdd(elements, RawLength(L, i));
  }
  return elements;
}

// The bytes of the string arguments from `first` on.
int64_t StringBytes(lua_State* L, int first) {
  int64_t bytes = 0;
  for (int i = first, top = lua_gettop(L); i <= top; ++i) {
    if (lua_type(L, i) == LUA_TSTRING) bytes = SatAdd(bytes, RawLength(L, i));
  }
  return bytes;
}

// The wrapper: upvalue 1 is the library function, upvalue 2 its Cost. Every
// string argument is read whole (kSizes), or all but the first, whose work
// the cost gives (s:sub(i, j) reads j - i + 1 bytes of s; a number given as
// a string is converted).
int Charged(lua_State* L) {
  const auto rule = static_cast<Cost>(lua_tointeger(L, lua_upvalueindex(2)));
  const int64_t bytes = StringBytes(L, rule == Cost::kSizes ? 1 : 2);
  const int64_t cost = CostOf(L, rule);
  ChargeWork(L, SatAdd(SatAdd(1, cost), bytes / kBytesPerUnit));
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

bool HasField(lua_State* L, const char* key, int n) {
  lua_pushstring(L, key);
  return lua_rawget(L, -n) != LUA_TNIL;
}

// Lua 5.4's rule for the table functions' first argument: a table, or a
// value whose metatable has __index, __newindex and __len.
void CheckTable(lua_State* L, int arg) {
  if (lua_type(L, arg) == LUA_TTABLE) return;
  int n = 1;
  if (lua_getmetatable(L, arg) != 0 && HasField(L, "__index", ++n) &&
      HasField(L, "__newindex", ++n) && HasField(L, "__len", ++n)) {
    lua_pop(L, n);
    return;
  }
  luaL_checktype(L, arg, LUA_TTABLE);
}

// table.insert(t, [pos,] v), Lua 5.4's semantics: the length read once, the
// elements shifted up charged before they move.
int TableInsert(lua_State* L) {
  CheckTable(L, 1);
  const lua_Integer e = luaL_intop(+, luaL_len(L, 1), 1);  // first empty slot
  lua_Integer pos = e;
  switch (lua_gettop(L)) {
    case 2: break;
    case 3: {
      pos = luaL_checkinteger(L, 2);
      luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u < static_cast<lua_Unsigned>(e), 2,
                    "position out of bounds");
      ChargeWork(L, std::max<int64_t>(1, RangeCount(pos, e)));  // the e - pos shifts
      for (lua_Integer i = e; i > pos; --i) {
        lua_geti(L, 1, i - 1);
        lua_seti(L, 1, i);
      }
      break;
    }
    default: return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  lua_seti(L, 1, pos);
  return 0;
}

// table.remove(t [, pos]), Lua 5.4's semantics, charged likewise.
int TableRemove(lua_State* L) {
  CheckTable(L, 1);
  const lua_Integer size = luaL_len(L, 1);
  lua_Integer pos = luaL_optinteger(L, 2, size);
  if (pos != size) {
    luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u <= static_cast<lua_Unsigned>(size), 2,
                  "position out of bounds");
  }
  ChargeWork(L, SatAdd(1, RangeCount(pos, luaL_intop(-, size, 1))));
  lua_geti(L, 1, pos);
  for (; pos < size; ++pos) {
    lua_geti(L, 1, pos + 1);
    lua_seti(L, 1, pos);
  }
  lua_pushnil(L);
  lua_seti(L, 1, pos);
  return 1;
}

Cost CostFor(const char* lib, const char* name) {
  for (const Rule& r : kRules) {
    if (std::strcmp(r.lib, lib) == 0 && std::strcmp(r.name, name) == 0) return r.cost;
  }
  return Cost::kSizes;
}

// Wraps every C function of the table at the top of the stack (but those
// named in `skip`) with Charged, each with the cost of lib.name.
template <size_t N>
void WrapFields(lua_State* L, const char* lib, const char* const (&skip)[N]) {
  const int t = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    const char* name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : nullptr;
    bool wrap = name != nullptr && lua_iscfunction(L, -1);
    for (const char* s : skip) wrap = wrap && std::strcmp(name, s) != 0;
    if (!wrap) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushinteger(L, static_cast<lua_Integer>(CostFor(lib, name)));
    lua_pushcclosure(L, Charged, 2);
    lua_pushvalue(L, -2);  // the key
    lua_insert(L, -2);
    lua_rawset(L, t);  // replacing an existing key's value keeps lua_next valid
  }
}

// Pushes the global library `lib` (raw: the sandbox's _G raises on a
// missing one); false, with nothing pushed, when it is not a table.
bool PushLibrary(lua_State* L, const char* lib) {
  lua_pushglobaltable(L);
  lua_pushstring(L, lib);
  const int type = lua_rawget(L, -2);
  lua_remove(L, -2);
  if (type == LUA_TTABLE) return true;
  lua_pop(L, 1);
  return false;
}

}  // namespace

void ChargeStandardLibraries(lua_State* L) {
  constexpr const char* kNone[] = {""};
  for (const char* lib : {LUA_STRLIBNAME, LUA_TABLIBNAME, LUA_UTF8LIBNAME}) {
    if (!PushLibrary(L, lib)) continue;
    WrapFields(L, lib, kNotWrapped);
    if (std::strcmp(lib, LUA_TABLIBNAME) == 0) {
      lua_pushcfunction(L, TableInsert);
      lua_setfield(L, -2, "insert");
      lua_pushcfunction(L, TableRemove);
      lua_setfield(L, -2, "remove");
    }
    lua_pop(L, 1);
  }
  // The string metatable's arithmetic (__add, __unm, ...) converts strings.
  lua_pushliteral(L, "");
  if (lua_getmetatable(L, -1) != 0) {
    WrapFields(L, "", kNone);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_pushglobaltable(L);
  for (const char* name : kBaseCharged) {
    if (lua_getfield(L, -1, name) != LUA_TFUNCTION) {
      lua_pop(L, 1);
      continue;
    }
    const Cost cost = std::strcmp(name, "collectgarbage") == 0 ? Cost::kHeap : Cost::kSizes;
    lua_pushinteger(L, static_cast<lua_Integer>(cost));
    lua_pushcclosure(L, Charged, 2);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

}  // namespace reverie::lua::internal
