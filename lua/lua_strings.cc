// string.find / match / gmatch / gsub with Lua 5.4's pattern semantics (the
// reference manual, §6.4.1), matched step by step against the instruction
// budget. Lua's own matcher runs in C with no hook: a 3,000-byte subject and
// ".-.-.-b" ran for minutes under a budget of a million instructions
// (issue 17, D1). Here every step (a pattern item tried at a position)
// counts as one instruction, charged in batches, so the budget error
// interrupts the match like any other.
//
// The budget error unwinds out of the matcher (a C++ exception in the C++
// build of Lua); results are built in luaL_Buffers (Lua memory, under the
// cap).
#include <cctype>
#include <cstring>

#include "lua/lua_internal.h"
#include "lua/lua_pattern.h"

namespace reverie::lua::internal {
namespace {

size_t PosRelative(lua_Integer pos, size_t len) {
  if (pos > 0) return static_cast<size_t>(pos);
  if (pos == 0) return 1;
  if (pos < -static_cast<lua_Integer>(len)) return 1;
  return len + static_cast<size_t>(pos) + 1;
}

bool NoSpecials(const char* p, size_t lp) {
  size_t upto = 0;
  do {
    if (std::strpbrk(p + upto, kSpecials) != nullptr) return false;
    upto += std::strlen(p + upto) + 1;  // a pattern may hold '\0'
  } while (upto <= lp);
  return true;
}

// Plain substring search, charged by its worst case (every start position
// compared up to the needle's length).
const char* PlainFind(lua_State* L, const char* s, size_t ls, const char* p, size_t lp) {
  ChargeWork(L, static_cast<int64_t>((ls + 1) * (lp / 16 + 1)));
  if (lp == 0) return s;
  if (lp > ls) return nullptr;
  const char* end = s + (ls - lp) + 1;
  for (const char* at = s; at < end;) {
    at = static_cast<const char*>(std::memchr(at, *p, static_cast<size_t>(end - at)));
    if (at == nullptr) return nullptr;
    if (std::memcmp(at + 1, p + 1, lp - 1) == 0) return at;
    ++at;
  }
  return nullptr;
}

int FindAux(lua_State* L, bool find) {
  size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  const size_t init = PosRelative(luaL_optinteger(L, 3, 1), ls) - 1;
  if (init > ls) {
    luaL_pushfail(L);
    return 1;
  }
  if (find && (lua_toboolean(L, 4) || NoSpecials(p, lp))) {
    const char* at = PlainFind(L, s + init, ls - init, p, lp);
    if (at != nullptr) {
      lua_pushinteger(L, (at - s) + 1);
      lua_pushinteger(L, static_cast<lua_Integer>((at - s) + lp));
      return 2;
    }
  } else {
    const char* s1 = s + init;
    const bool anchor = *p == '^';
    if (anchor) {
      ++p;
      --lp;
    }
    Matcher m = Prepare(L, s, ls, p, lp);
    do {
      m.Reset();
      const char* e = m.Match(s1, p);
      if (e != nullptr) {
        m.Settle();
        if (find) {
          lua_pushinteger(L, (s1 - s) + 1);
          lua_pushinteger(L, e - s);
          return m.PushCaptures(nullptr, nullptr, false) + 2;
        }
        return m.PushCaptures(s1, e, true);
      }
    } while (s1++ < m.src_end && !anchor);
    m.Settle();
  }
  luaL_pushfail(L);
  return 1;
}

int Find(lua_State* L) { return FindAux(L, true); }
int MatchFn(lua_State* L) { return FindAux(L, false); }

// gmatch's iterator: the subject, the pattern and the state live in
// upvalues and a userdata (Lua memory).
struct GmatchState {
  const char* src;
  const char* p;
  const char* lastmatch;
  Matcher m;
};

int GmatchNext(lua_State* L) {
  auto* g = static_cast<GmatchState*>(lua_touserdata(L, lua_upvalueindex(3)));
  g->m.L = L;
  for (const char* src = g->src; src <= g->m.src_end; ++src) {
    g->m.Reset();
    const char* e = g->m.Match(src, g->p);
    if (e != nullptr && e != g->lastmatch) {
      g->src = g->lastmatch = e;
      g->m.Settle();
      return g->m.PushCaptures(src, e, true);
    }
  }
  g->m.Settle();
  return 0;
}

int Gmatch(lua_State* L) {
  size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  size_t init = PosRelative(luaL_optinteger(L, 3, 1), ls) - 1;
  lua_settop(L, 2);  // keep the subject and the pattern alive as upvalues
  auto* g = static_cast<GmatchState*>(lua_newuserdatauv(L, sizeof(GmatchState), 0));
  if (init > ls) init = ls + 1;  // start after the end: no match
  g->m = Prepare(L, s, ls, p, lp);
  g->src = s + init;
  g->p = p;
  g->lastmatch = nullptr;
  lua_pushcclosure(L, GmatchNext, 3);
  return 1;
}

// gsub's replacement of one match [s, e) into the buffer.
void AddString(Matcher* m, luaL_Buffer* b, const char* s, const char* e) {
  lua_State* L = m->L;
  size_t l = 0;
  const char* news = lua_tolstring(L, 3, &l);
  const char* end = news + l;
  const char* p;
  while ((p = static_cast<const char*>(std::memchr(news, kEsc, static_cast<size_t>(end - news)))) !=
         nullptr) {
    luaL_addlstring(b, news, static_cast<size_t>(p - news));
    ++p;  // skip the escape
    if (*p == kEsc) {
      luaL_addchar(b, *p);
    } else if (std::isdigit(static_cast<unsigned char>(*p))) {
      if (*p == '0') {
        luaL_addlstring(b, s, static_cast<size_t>(e - s));
      } else {
        m->PushCapture(*p - '1', s, e);
        luaL_tolstring(L, -1, nullptr);  // a position capture is a number
        lua_remove(L, -2);
        luaL_addvalue(b);
      }
    } else {
      luaL_error(L, "invalid use of '%c' in replacement string", kEsc);
    }
    news = p + 1;
  }
  luaL_addlstring(b, news, static_cast<size_t>(end - news));
}

// Returns whether the match was replaced by something new.
bool AddValue(Matcher* m, luaL_Buffer* b, const char* s, const char* e, int tr) {
  lua_State* L = m->L;
  switch (tr) {
    case LUA_TFUNCTION: {
      lua_pushvalue(L, 3);
      const int n = m->PushCaptures(s, e, true);
      lua_call(L, n, 1);
      break;
    }
    case LUA_TTABLE:
      m->PushCapture(0, s, e);
      lua_gettable(L, 3);
      break;
    default:
      AddString(m, b, s, e);
      return true;
  }
  if (!lua_toboolean(L, -1)) {  // nil or false: keep the original
    lua_pop(L, 1);
    luaL_addlstring(b, s, static_cast<size_t>(e - s));
    return false;
  }
  if (!lua_isstring(L, -1)) {
    return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1)) != 0;
  }
  luaL_addvalue(b);
  return true;
}

int Gsub(lua_State* L) {
  size_t srcl = 0, lp = 0;
  const char* src = luaL_checklstring(L, 1, &srcl);
  const char* p = luaL_checklstring(L, 2, &lp);
  const char* lastmatch = nullptr;
  const int tr = lua_type(L, 3);
  const lua_Integer max_s = luaL_optinteger(L, 4, static_cast<lua_Integer>(srcl) + 1);
  const bool anchor = *p == '^';
  lua_Integer n = 0;
  bool changed = false;
  luaL_argexpected(L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE,
                   3, "string/function/table");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (anchor) {
    ++p;
    --lp;
  }
  Matcher m = Prepare(L, src, srcl, p, lp);
  while (n < max_s) {
    m.Reset();
    const char* e = m.Match(src, p);
    if (e != nullptr && e != lastmatch) {
      ++n;
      changed = AddValue(&m, &b, src, e, tr) | changed;
      src = lastmatch = e;
    } else if (src < m.src_end) {
      luaL_addchar(&b, *src++);
    } else {
      break;
    }
    if (anchor) break;
  }
  m.Settle();
  if (!changed) {
    lua_pushvalue(L, 1);
  } else {
    luaL_addlstring(&b, src, static_cast<size_t>(m.src_end - src));
    luaL_pushresult(&b);
  }
  lua_pushinteger(L, n);
  return 2;
}

}  // namespace

void InstallCountedPatterns(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"find", Find}, {"match", MatchFn}, {"gmatch", Gmatch}, {"gsub", Gsub}, {nullptr, nullptr}};
  lua_pushglobaltable(L);
  lua_pushliteral(L, LUA_STRLIBNAME);
  if (lua_rawget(L, -2) == LUA_TTABLE) luaL_setfuncs(L, kFunctions, 0);
  lua_pop(L, 2);
}

}  // namespace reverie::lua::internal
