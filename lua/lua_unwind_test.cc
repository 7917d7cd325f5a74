// reverie links Debian's C++ build of Lua (lua5.4-c++): a Lua error raised
// through C++ frames must destroy their locals, which is what lets the
// bindings hold strings, vectors and statuses while they raise
// (lua_internal.h). Against the C build this test fails: the error is a
// longjmp and the destructor never runs.
#include <string>

#include "gtest/gtest.h"
#include "lua.hpp"

namespace {

int destroyed = 0;

struct Guard {
  std::string payload = std::string(64, 'x');  // heap memory a longjmp would leak
  ~Guard() { ++destroyed; }
};

int RaiseWithGuard(lua_State* L) {
  Guard g;
  return luaL_error(L, "raised with %d bytes alive", static_cast<int>(g.payload.size()));
}

TEST(LuaUnwindTest, ErrorsUnwindCppFrames) {
  lua_State* L = luaL_newstate();
  ASSERT_NE(L, nullptr);
  destroyed = 0;
  lua_pushcfunction(L, RaiseWithGuard);
  EXPECT_EQ(lua_pcall(L, 0, 0, 0), LUA_ERRRUN);
  EXPECT_EQ(destroyed, 1);
  EXPECT_NE(std::string(lua_tostring(L, -1)).find("raised with 64 bytes alive"), std::string::npos);
  lua_close(L);
}

TEST(LuaUnwindTest, NestedProtectedCallsUnwindOnlyTheirFrames) {
  lua_State* L = luaL_newstate();
  ASSERT_NE(L, nullptr);
  luaL_openlibs(L);
  destroyed = 0;
  lua_register(L, "raise", RaiseWithGuard);
  ASSERT_EQ(luaL_dostring(L, "local ok, m = pcall(raise); assert(not ok); return m"), LUA_OK);
  EXPECT_EQ(destroyed, 1);
  EXPECT_NE(std::string(lua_tostring(L, -1)).find("raised with"), std::string::npos);
  lua_close(L);
}

}  // namespace
