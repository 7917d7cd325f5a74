// Fuzz target: a Lua optimization script from bytes, run the way `reverie
// predict` runs one (sandboxed engine, an instruction budget and a memory
// cap, here small) against a small real trace, then the transformed graph
// simulated with the schedule policy the script chose. The budget and the cap
// must bound everything: a hang is a libFuzzer timeout, a blow-up its RSS
// limit. A failed script must name itself on the first line of its message.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "depgraph/simulator.h"
#include "lua/lua_engine.h"
#include "transforms/session.h"
#include "whatif/pipeline.h"

namespace {

using reverie::lua::EngineLimits;
using reverie::lua::LuaEngine;
using reverie::lua::ScriptContext;

// The small trace every input runs on: the JSON target's first seed (a
// window of examples/tiny_mlp_training.json, see fuzz/make_corpus.py).
constexpr char kTrace[] = REVERIE_SOURCE_DIR "/fuzz/corpus/fuzz_json_import/tiny_mlp_window.json";

struct Fixture {
  std::unique_ptr<reverie::whatif::LoadedTrace> loaded;
  std::map<std::string, std::string> no_overrides;
};

// A static object, not a leaked pointer: the trace keeps strings in memory
// LeakSanitizer does not scan (the importer's huge-page arenas), so it must be
// destroyed before the exit-time leak check runs.
Fixture MakeFixture() {
  Fixture f;
  absl::StatusOr<std::unique_ptr<reverie::whatif::LoadedTrace>> t =
      reverie::whatif::LoadAndSimulate(kTrace);
  if (!t.ok()) {
    std::fprintf(stderr, "fuzz_lua_script: cannot load %s: %s\n", kTrace,
                 std::string(t.status().message()).c_str());
    std::abort();
  }
  f.loaded = *std::move(t);
  return f;
}

const Fixture& GetFixture() {
  static const Fixture fixture = MakeFixture();
  return fixture;
}

void CheckNamesScript(const absl::Status& s) {
  const std::string m(s.message());
  const std::string first = m.substr(0, m.find('\n'));
  if (first.find("fuzz.lua") == std::string::npos || first.size() > 4096) {
    std::fprintf(stderr, "script error does not name the script on one short line: [%s]\n",
                 first.substr(0, 300).c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Fixture& f = GetFixture();
  EngineLimits limits;
  limits.instruction_budget = 2'000'000;
  limits.memory_limit_bytes = size_t{32} << 20;
  absl::StatusOr<std::unique_ptr<LuaEngine>> engine = LuaEngine::Create(limits);
  if (!engine.ok()) std::abort();
  ScriptContext ctx;
  ctx.display_name = "fuzz.lua";
  ctx.stem = "fuzz";
  ctx.overrides = &f.no_overrides;
  ctx.model = &f.loaded->model;
  ctx.include_dirs = {REVERIE_SOURCE_DIR "/scripts"};
  reverie::transforms::EditSession session(f.loaded->graph);
  const absl::Status s = (*engine)->Run(
      std::string_view(reinterpret_cast<const char*>(data), size), ctx, &session);
  if (!s.ok()) {
    CheckNamesScript(s);
    return 0;
  }
  reverie::depgraph::Graph out;
  reverie::transforms::ChangeSummary changes;
  if (!session.Commit(&out, &changes).ok()) return 0;
  reverie::depgraph::SimOptions opts;
  opts.policy = session.schedule().policy();
  (void)reverie::depgraph::Simulate(out, opts);
  if (absl::Status p = (*engine)->policy_status(); !p.ok()) CheckNamesScript(p);
  return 0;
}
