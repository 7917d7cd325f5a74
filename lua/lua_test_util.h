// File: lua/lua_test_util.h
//
// Test helper: runs Lua source against a graph the way ScriptRunner does for
// one script (fresh engine, EditSession, commit on success).
#ifndef REVERIE_LUA_LUA_TEST_UTIL_H_
#define REVERIE_LUA_LUA_TEST_UTIL_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "depgraph/graph.h"
#include "lua/lua_engine.h"
#include "transforms/session.h"

namespace reverie::lua::testing {

struct LuaRun {
  absl::Status status;
  std::unique_ptr<LuaEngine> engine;
  transforms::ChangeSummary changes;
  transforms::ScheduleChoice schedule;
};

inline LuaRun RunLua(const std::string& source, depgraph::Graph* g,
                     std::map<std::string, std::string> overrides = {},
                     EngineLimits limits = {}, const depgraph::ModelInfo* model = nullptr) {
  LuaRun out;
  static const std::map<std::string, std::string> kNone;
  auto engine = LuaEngine::Create(limits);
  if (!engine.ok()) {
    out.status = engine.status();
    return out;
  }
  out.engine = *std::move(engine);
  // The overrides must outlive the engine run only; keep a copy here.
  static thread_local std::map<std::string, std::string> keep;
  keep = std::move(overrides);
  ScriptContext ctx;
  ctx.display_name = "test.lua";
  ctx.stem = "test";
  ctx.overrides = &keep;
  ctx.model = model;
  ctx.include_dirs = {REVERIE_SOURCE_DIR "/scripts"};
  transforms::EditSession session(*g);
  out.status = out.engine->Run(source, ctx, &session);
  if (out.status.ok()) out.status = session.Commit(g, &out.changes);
  out.schedule = session.schedule();
  return out;
}

// First line of a status message ("file.lua:LINE: message").
inline std::string FirstLine(const absl::Status& s) {
  const std::string m(s.message());
  return m.substr(0, m.find('\n'));
}

// Limits with `budget` instructions and `mib` MiB of Lua memory.
inline EngineLimits Limits(int64_t budget, size_t mib = 2048) {
  EngineLimits l;
  l.instruction_budget = budget;
  l.memory_limit_bytes = mib << 20;
  return l;
}

}  // namespace reverie::lua::testing

#endif  // REVERIE_LUA_LUA_TEST_UTIL_H_
