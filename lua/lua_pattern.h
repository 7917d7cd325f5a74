// File: lua/lua_pattern.h
//
// Internal to lua/: Lua 5.4's pattern matcher (the reference manual,
// §6.4.1) rewritten to count its steps against the instruction budget
// (lua_strings.cc, which installs string.find / match / gmatch / gsub on
// it). Every step (a pattern item tried at a position) counts as one
// instruction, charged in batches, so the budget error (a C++ exception in
// the C++ build of Lua) interrupts a match like any other.
#ifndef REVERIE_LUA_LUA_PATTERN_H_
#define REVERIE_LUA_LUA_PATTERN_H_

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lua/lua_internal.h"

namespace reverie::lua::internal {

inline constexpr int kMaxCaptures = 32;      // LUA_MAXCAPTURES
inline constexpr int kMaxDepth = 200;        // MAXCCALLS: "pattern too complex"
inline constexpr int64_t kChargeEvery = 1000;  // steps between budget charges
inline constexpr char kEsc = '%';
inline constexpr char kSpecials[] = "^$*+?.([%-";
inline constexpr ptrdiff_t kUnfinished = -1;
inline constexpr ptrdiff_t kPosition = -2;

struct Capture {
  const char* init;
  ptrdiff_t len;  // or kUnfinished / kPosition
};

// One match attempt's state: views into the Lua strings being matched.
struct Matcher {
  lua_State* L;
  const char* src_init;
  const char* src_end;
  const char* p_end;
  int depth;
  int level;
  int64_t steps;
  Capture capture[kMaxCaptures];

  void Reset() {
    level = 0;
    depth = kMaxDepth;
  }

  void Step() {
    if (++steps >= kChargeEvery) {
      ChargeWork(L, steps);
      steps = 0;
    }
  }

  void Settle() {
    if (steps > 0) ChargeWork(L, steps);
    steps = 0;
  }

  int CheckCapture(int c) {
    c -= '1';
    if (c < 0 || c >= level || capture[c].len == kUnfinished) {
      return luaL_error(L, "invalid capture index %%%d", c + 1);
    }
    return c;
  }

  int OpenCapture() {
    for (int l = level - 1; l >= 0; --l) {
      if (capture[l].len == kUnfinished) return l;
    }
    return luaL_error(L, "invalid pattern capture");
  }

  // The end of the single-character class at p.
  const char* ClassEnd(const char* p) {
    const char c = *p++;
    if (c == kEsc) {
      if (p == p_end) luaL_error(L, "malformed pattern (ends with '%%')");
      return p + 1;
    }
    if (c == '[') {
      if (*p == '^') ++p;
      do {  // a ']' right after '[' (or '[^') is a literal
        if (p == p_end) luaL_error(L, "malformed pattern (missing ']')");
        if (*(p++) == kEsc && p < p_end) ++p;  // skip an escaped character
      } while (*p != ']');
      return p + 1;
    }
    return p;
  }

  static bool MatchClass(int c, int cl) {
    bool res;
    switch (std::tolower(cl)) {
      case 'a': res = std::isalpha(c); break;
      case 'c': res = std::iscntrl(c); break;
      case 'd': res = std::isdigit(c); break;
      case 'g': res = std::isgraph(c); break;
      case 'l': res = std::islower(c); break;
      case 'p': res = std::ispunct(c); break;
      case 's': res = std::isspace(c); break;
      case 'u': res = std::isupper(c); break;
      case 'w': res = std::isalnum(c); break;
      case 'x': res = std::isxdigit(c); break;
      default: return cl == c;
    }
    return std::isupper(cl) ? !res : res;
  }

  // c against the set [p, ec] (p at '[', ec at the closing ']').
  static bool MatchSet(int c, const char* p, const char* ec) {
    bool found = false;
    bool negate = false;
    if (*(p + 1) == '^') {
      negate = true;
      ++p;
    }
    while (++p < ec) {
      if (*p == kEsc) {
        ++p;
        if (MatchClass(c, static_cast<unsigned char>(*p))) found = true;
      } else if (*(p + 1) == '-' && p + 2 < ec) {
        p += 2;
        if (static_cast<unsigned char>(*(p - 2)) <= c && c <= static_cast<unsigned char>(*p)) {
          found = true;
        }
      } else if (static_cast<unsigned char>(*p) == c) {
        found = true;
      }
    }
    return negate ? !found : found;
  }

  bool SingleMatch(const char* s, const char* p, const char* ep) {
    if (s >= src_end) return false;
    const int c = static_cast<unsigned char>(*s);
    switch (*p) {
      case '.': return true;
      case kEsc: return MatchClass(c, static_cast<unsigned char>(*(p + 1)));
      case '[': return MatchSet(c, p, ep - 1);
      default: return static_cast<unsigned char>(*p) == c;
    }
  }

  const char* MatchBalance(const char* s, const char* p) {
    if (p >= p_end - 1) luaL_error(L, "malformed pattern (missing arguments to '%%b')");
    if (*s != *p) return nullptr;
    const char b = *p, e = *(p + 1);
    int cont = 1;
    while (++s < src_end) {
      Step();
      if (*s == e) {
        if (--cont == 0) return s + 1;
      } else if (*s == b) {
        ++cont;
      }
    }
    return nullptr;
  }

  // Greedy x*: the longest run first, then shorter ones.
  const char* MaxExpand(const char* s, const char* p, const char* ep) {
    ptrdiff_t i = 0;
    while (SingleMatch(s + i, p, ep)) {
      Step();
      ++i;
    }
    while (i >= 0) {
      Step();
      const char* res = Match(s + i, ep + 1);
      if (res != nullptr) return res;
      --i;
    }
    return nullptr;
  }

  // Lazy x-: the shortest run first.
  const char* MinExpand(const char* s, const char* p, const char* ep) {
    for (;;) {
      Step();
      const char* res = Match(s, ep + 1);
      if (res != nullptr) return res;
      if (!SingleMatch(s, p, ep)) return nullptr;
      ++s;
    }
  }

  const char* StartCapture(const char* s, const char* p, ptrdiff_t what) {
    if (level >= kMaxCaptures) luaL_error(L, "too many captures");
    capture[level].init = s;
    capture[level].len = what;
    ++level;
    const char* res = Match(s, p);
    if (res == nullptr) --level;  // undo
    return res;
  }

  const char* EndCapture(const char* s, const char* p) {
    const int l = OpenCapture();
    capture[l].len = s - capture[l].init;
    const char* res = Match(s, p);
    if (res == nullptr) capture[l].len = kUnfinished;  // undo
    return res;
  }

  const char* MatchCapture(const char* s, int l) {
    l = CheckCapture(l);
    const size_t len = static_cast<size_t>(capture[l].len);
    if (static_cast<size_t>(src_end - s) >= len && std::memcmp(capture[l].init, s, len) == 0) {
      steps += static_cast<int64_t>(len / 16);
      return s + len;
    }
    return nullptr;
  }

  // The match of pattern [p, p_end) at s, or nullptr.
  const char* Match(const char* s, const char* p) {
    if (depth-- == 0) luaL_error(L, "pattern too complex");
    while (true) {
      Step();
      if (p == p_end) break;
      if (*p == '(') {
        s = *(p + 1) == ')' ? StartCapture(s, p + 2, kPosition) : StartCapture(s, p + 1, kUnfinished);
        break;
      }
      if (*p == ')') {
        s = EndCapture(s, p + 1);
        break;
      }
      if (*p == '$' && p + 1 == p_end) {
        if (s != src_end) s = nullptr;
        break;
      }
      if (*p == kEsc && *(p + 1) == 'b') {
        s = MatchBalance(s, p + 2);
        if (s == nullptr) break;
        p += 4;
        continue;
      }
      if (*p == kEsc && *(p + 1) == 'f') {
        p += 2;
        if (*p != '[') luaL_error(L, "missing '[' after '%%f' in pattern");
        const char* ep = ClassEnd(p);
        const int prev = s == src_init ? 0 : static_cast<unsigned char>(*(s - 1));
        const int cur = s < src_end ? static_cast<unsigned char>(*s) : 0;
        if (!MatchSet(prev, p, ep - 1) && MatchSet(cur, p, ep - 1)) {
          p = ep;
          continue;
        }
        s = nullptr;
        break;
      }
      if (*p == kEsc && std::isdigit(static_cast<unsigned char>(*(p + 1)))) {
        s = MatchCapture(s, static_cast<unsigned char>(*(p + 1)));
        if (s == nullptr) break;
        p += 2;
        continue;
      }
      // A single-character class, maybe with a repetition suffix.
      const char* ep = ClassEnd(p);
      if (!SingleMatch(s, p, ep)) {
        if (*ep == '*' || *ep == '?' || *ep == '-') {  // accept empty
          p = ep + 1;
          continue;
        }
        s = nullptr;
        break;
      }
      switch (*ep) {
        case '?': {
          const char* res = Match(s + 1, ep + 1);
          if (res != nullptr) {
            s = res;
          } else {
            p = ep + 1;
            continue;
          }
          break;
        }
        case '+': s = MaxExpand(s + 1, p, ep); break;
        case '*': s = MaxExpand(s, p, ep); break;
        case '-': s = MinExpand(s, p, ep); break;
        default:
          ++s;
          p = ep;
          continue;
      }
      break;
    }
    ++depth;
    return s;
  }

  // Capture i as a Lua value (the whole match [s, e) when there are none);
  // returns its length, or kPosition for a position capture.
  ptrdiff_t PushCapture(int i, const char* s, const char* e) {
    if (i >= level) {
      if (i != 0) luaL_error(L, "invalid capture index %%%d", i + 1);
      lua_pushlstring(L, s, static_cast<size_t>(e - s));
      return e - s;
    }
    const ptrdiff_t len = capture[i].len;
    if (len == kUnfinished) luaL_error(L, "unfinished capture");
    if (len == kPosition) {
      lua_pushinteger(L, (capture[i].init - src_init) + 1);
    } else {
      lua_pushlstring(L, capture[i].init, static_cast<size_t>(len));
    }
    return len;
  }

  int PushCaptures(const char* s, const char* e, bool whole_if_none) {
    const int n = (level == 0 && whole_if_none) ? 1 : level;
    luaL_checkstack(L, n, "too many captures");
    for (int i = 0; i < n; ++i) PushCapture(i, s, e);
    return n;
  }
};

inline Matcher Prepare(lua_State* L, const char* s, size_t ls, const char* p, size_t lp) {
  Matcher m;
  m.L = L;
  m.src_init = s;
  m.src_end = s + ls;
  m.p_end = p + lp;
  m.steps = 0;
  m.Reset();
  return m;
}

}  // namespace reverie::lua::internal

#endif  // REVERIE_LUA_LUA_PATTERN_H_
