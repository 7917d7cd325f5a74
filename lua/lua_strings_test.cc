// The counted pattern functions (lua_strings.cc) against Lua's own, on
// thousands of generated subjects and patterns (every item, class, capture,
// anchor, error), and their budget.
#include <climits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lua/lua_internal.h"
#include "lua/lua_test_util.h"
#include "transforms/test_graphs.h"

namespace reverie::lua {
namespace {

using ::testing::HasSubstr;

// Lua code: compares string.find/match/gmatch/gsub with orig.* on random
// inputs; returns the number of cases, or raises with the first difference.
constexpr char kDifferential[] = R"lua(
math.randomseed(17)
local atoms = {"a", "b", "x", " ", ".", "%a", "%d", "%s", "%w", "%W", "%p", "%x", "%u", "%l", "%c",
  "%g", "%%", "%.", "[ab]", "[^a]", "[a-c]", "[%d ]", "[]", "[^]a]", "[a-]", "(", ")", "()", "%1",
  "%2", "%0", "*", "+", "-", "?", "^", "$", "%b()", "%bab", "%f[%w]", "%f[%s]", "%", "[", "]", "%f",
  "%b", "\0"}
local chars = {"a", "a", "b", "x", "(", ")", "1", "2", " ", "A", "%", "\0", "\255", "."}
local function pick(t, n)
  local out = {}
  for i = 1, math.random(0, n) do out[#out + 1] = t[math.random(#t)] end
  return table.concat(out)
end
local function pack(ok, ...) return {ok = ok, n = select("#", ...), ...} end
local function same(a, b)
  if a.ok ~= b.ok or a.n ~= b.n then return false end
  for i = 1, a.n do
    if a[i] ~= b[i] and not (a[i] ~= a[i] and b[i] ~= b[i]) then return false end
  end
  return true
end
local function show(r)
  local out = {tostring(r.ok)}
  for i = 1, r.n do out[#out + 1] = string.format("%q", tostring(r[i])) end
  return table.concat(out, " ")
end
local function check(what, f, g, ...)
  local a, b = pack(pcall(f, ...)), pack(pcall(g, ...))
  if not same(a, b) then
    error(string.format("%s(%s) differs:\n  ours %s\n  lua  %s", what,
          table.concat({string.format("%q", tostring(select(1, ...))),
                        string.format("%q", tostring(select(2, ...)))}, ", "), show(a), show(b)))
  end
end
local function all(gm, s, p, init)
  local out = {}
  for a, b, c in gm(s, p, init) do
    out[#out + 1] = tostring(a) .. "|" .. tostring(b) .. "|" .. tostring(c)
    if #out > 200 then break end
  end
  return table.concat(out, ";")
end
local repl_table = {a = "A", b = false, ["1"] = 7}
local cases = 0
for i = 1, 40000 do
  local s, p = pick(chars, 12), pick(atoms, 6)
  local init = math.random(-14, 14)
  check("find", string.find, orig.find, s, p)
  check("find", string.find, orig.find, s, p, init)
  check("find", string.find, orig.find, s, p, init, true)
  check("match", string.match, orig.match, s, p, init)
  check("gmatch", function(...) return all(string.gmatch, ...) end,
        function(...) return all(orig.gmatch, ...) end, s, p, init)
  check("gsub", string.gsub, orig.gsub, s, p, "<%0|%1>")
  check("gsub", string.gsub, orig.gsub, s, p, "[%%]", math.random(0, 3))
  check("gsub", string.gsub, orig.gsub, s, p, repl_table)
  check("gsub", string.gsub, orig.gsub, s, p, function(x, y) if x == "a" then return nil end return #x end)
  check("gsub", string.gsub, orig.gsub, s, p, "%2")
  check("gsub", string.gsub, orig.gsub, s, p, "%")
  cases = cases + 11
end
return cases
)lua";

TEST(CountedPatternsTest, SameResultsAndErrorsAsLuasOwn) {
  internal::EngineState S;
  S.limits.instruction_budget = INT64_MAX / 2;
  lua_State* L = luaL_newstate();
  ASSERT_NE(L, nullptr);
  S.L = L;
  *static_cast<internal::EngineState**>(lua_getextraspace(L)) = &S;
  luaL_openlibs(L);
  ASSERT_EQ(luaL_dostring(L, "orig = {find = string.find, match = string.match, "
                             "gmatch = string.gmatch, gsub = string.gsub}"),
            LUA_OK);
  internal::InstallCountedPatterns(L);
  ASSERT_EQ(luaL_loadbufferx(L, kDifferential, sizeof(kDifferential) - 1, "=differential", "t"), LUA_OK);
  const int rc = lua_pcall(L, 0, 1, 0);
  EXPECT_EQ(rc, LUA_OK) << lua_tostring(L, -1);
  EXPECT_EQ(lua_tointeger(L, -1), 440000);
  EXPECT_GT(S.instructions, 0);  // the steps were charged
  lua_close(L);
}

// The case Lua's own matcher ran for minutes on: now stopped by the budget.
TEST(CountedPatternsTest, BacktrackingPatternsStopAtTheBudget) {
  depgraph::Graph g = transforms::testing::MakeTrainingGraph(1);
  EngineLimits l;
  l.instruction_budget = 5'000'000;
  for (const char* code : {"local s = string.rep('a', 3000) return s:find('.-.-.-b')",
                           "local s = string.rep('a', 1e5) return s:find('a*b')",
                           "local s = string.rep('a', 3000) return s:gsub('a-a-a-b', 'x')",
                           "local s = string.rep('a', 3000) for x in s:gmatch('.-.-b') do end",
                           "local s = string.rep('(', 1e5) return s:find('%b()')",
                           "local s = string.rep('a', 1e6) return s:find(string.rep('a', 1000) .. 'b', 1, true)"}) {
    const auto r = testing::RunLua(code, &g, {}, l);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kResourceExhausted) << code << "\n" << r.status;
    EXPECT_THAT(testing::FirstLine(r.status), HasSubstr("instruction budget")) << code;
  }
  // Ordinary use costs little.
  const auto ok = testing::RunLua(
      "for i = 1, 1000 do assert(('volta_sgemm_128x64_nn'):match('^(%a+)_(%w+)_') == 'volta') end",
      &g, {}, l);
  EXPECT_TRUE(ok.status.ok()) << ok.status;
}

// The rest of string, table and utf8 charge the work their arguments imply
// (lua_charged_libs.cc): one VM instruction could do millions of steps.
TEST(ChargedLibrariesTest, BigArgumentsAreCharged) {
  depgraph::Graph g = transforms::testing::MakeTrainingGraph(1);
  EngineLimits l;
  l.instruction_budget = 5'000'000;
  for (const char* code : {
           "local s = string.rep('a', 8 << 20) for i = 1, 1e6 do s:upper() end",
           "local s = string.rep('a', 8 << 20) for i = 1, 1e6 do local x = #s:sub(2) end",
           "local t = {} for i = 1, 2e5 do table.insert(t, 1, i) end",
           "local t = {} for i = 1, 1e5 do t[i] = i end for i = 1, 1e6 do table.remove(t, 1) t[#t + 1] = i end",
           "local t = {} for i = 1, 1e5 do t[i] = -i end for i = 1, 1e4 do table.sort(t) end",
           "local t = {} for i = 1, 1e5 do t[i] = 'x' end for i = 1, 1e4 do table.concat(t) end",
           "for i = 1, 1e4 do string.rep('ab', 1e6) end",
           "local s = string.rep('\xC3\xA9', 1e6) for i = 1, 1e4 do utf8.len(s) end",
           "local src = 'return ' .. string.rep('1 + ', 1e5) .. '1' for i = 1, 1e4 do load(src) end",
           "local t = {} for i = 1, 1e5 do t[i] = {} end for i = 1, 1e5 do collectgarbage() end",
       }) {
    const auto r = testing::RunLua(code, &g, {}, l);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kResourceExhausted) << code << "\n" << r.status;
    EXPECT_THAT(testing::FirstLine(r.status), HasSubstr("instruction budget")) << code;
  }
  // Work that is small whatever the sizes stays cheap: appending, one
  // character at a time, the length.
  const auto ok = testing::RunLua(
      "local t, s = {}, string.rep('a', 1 << 20)\n"
      "for i = 1, 1e5 do table.insert(t, i) end\n"
      "for i = 1, 1e5 do local c = s:sub(i, i) local n = s:len() local b = s:byte(i) end\n"
      "for i = 1, 1e5 do table.remove(t) end\n",
      &g, {}, l);
  EXPECT_TRUE(ok.status.ok()) << ok.status;
  EXPECT_LT(ok.engine->instructions_used(), 4'000'000);
}

}  // namespace
}  // namespace reverie::lua
