// File: lua/lua_engine.h
//
// LuaEngine: one Lua 5.4 state that runs one optimization script against an
// EditSession (transforms/session.h). The script sees the graph as the global
// `graph` (also its first argument) and the `reverie` module (docs/LUA_API.md).
//
// Safety:
// - Sandboxed by default: only base (without dofile / loadfile, and `load`
//   restricted to text chunks), table, string (without string.dump), math and
//   utf8; os, io, require, package and debug are absent and touching them
//   raises a clear error. EngineLimits::sandbox = false opens everything.
// - An instruction budget (count hook) and a memory cap (custom allocator)
//   bound a runaway script.
// - Errors come back as absl::Status whose message is
//   "file.lua:LINE: message" on the first line and a Lua traceback after it.
//
// Invariants: the engine never holds a pointer into the session after Run()
// returns; a Lua schedule policy the script set keeps the engine alive
// (see policy()) and sees the graph it is asked about, read-only.
#ifndef REVERIE_LUA_LUA_ENGINE_H_
#define REVERIE_LUA_LUA_ENGINE_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "depgraph/model_info.h"
#include "depgraph/step_time.h"
#include "transforms/session.h"

namespace reverie::lua {

struct EngineLimits {
  bool sandbox = true;
  // VM instructions for the script and every call of its schedule policy.
  int64_t instruction_budget = 5'000'000'000;
  size_t memory_limit_bytes = size_t{2} << 30;
};

// A memory limit given in MiB (n > 0), in bytes; more MiB than size_t can
// count in bytes is no limit at all.
inline size_t MiBToBytes(int64_t mib) {
  constexpr uint64_t kMaxMiB = std::numeric_limits<size_t>::max() >> 20;
  return static_cast<uint64_t>(mib) > kMaxMiB ? std::numeric_limits<size_t>::max()
                                              : static_cast<size_t>(mib) << 20;
}

// A parameter a script declared with reverie.params, with the value it got.
struct ParamValue {
  std::string name;
  std::string type;  // "number", "boolean", "string"
  std::string doc;
  std::string default_text;
  std::string value_text;
  bool overridden = false;
  // The declared bounds (numbers only).
  bool integer = false;
  std::optional<double> min, max;
};

// What one script run needs besides its text.
struct ScriptContext {
  std::string display_name;  // "amp.lua", used in every message
  std::string stem;          // "amp": --set amp.key=value targets it
  // --set values: "key" or "stem.key" -> text.
  const std::map<std::string, std::string>* overrides = nullptr;
  // When true, an unqualified --set key the script does not declare is an
  // error at reverie.params time (several scripts: the runner checks later).
  bool only_script = true;
  const depgraph::ModelInfo* model = nullptr;
  // The trace's graph as built, before any script of the run changed it:
  // what the cost and launch models are calibrated on, whichever script
  // runs (null: the session's own base). A later script's model fitted on
  // an earlier one's result would read its changes as measurements (after
  // cuda_graphs.lua, launches of 0 us as the GPU's fixed cost).
  const depgraph::Graph* measured = nullptr;
  // The baseline's steps: graph:simulate() reads its steps in their frame
  // (depgraph/step_time.h), as the command that runs the script reads its
  // prediction, so a script sees the step time the command will print.
  // Null: no frame (the graph's steps as they stand).
  const std::vector<depgraph::StepTime>* step_frame = nullptr;
  // Folders reverie.include() may read from (the script library).
  std::vector<std::string> include_dirs;
  // Where print / reverie.log lines go besides log() (may be empty).
  std::function<void(std::string_view)> log_sink;
  // Describe mode (`reverie scripts`): reverie.params records the declared
  // parameters with their defaults and ends the run cleanly, as
  // reverie.nothing_to_change does; whatever the script does before that
  // runs against the session's graph (an empty one, so it must not assume
  // tasks). described() says whether params was reached.
  bool describe = false;
};

namespace internal {
struct EngineState;
}

// How a script ended: it changed the graph (or tried to), found nothing to
// change in this trace (reverie.nothing_to_change: the prediction is the
// baseline), or refused to apply (reverie.refuse: an error, exit 2).
enum class ScriptOutcome : uint8_t { kApplied = 0, kUnchanged, kRefused };
std::string_view ScriptOutcomeName(ScriptOutcome o);  // "applied", "unchanged", "refused"

class LuaEngine {
 public:
  static absl::StatusOr<std::unique_ptr<LuaEngine>> Create(const EngineLimits& limits = {});
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // Runs `source` against `session` (the script's edits go to
  // session->graph(); a policy it picks goes to session->schedule()).
  // kInvalidArgument for a syntax or runtime error, kResourceExhausted for
  // the instruction budget or the memory cap.
  absl::Status Run(std::string_view source, const ScriptContext& context,
                   transforms::EditSession* session);

  // Parameters the script declared (sorted by name) and what it logged.
  const std::vector<ParamValue>& params() const;
  const std::vector<std::string>& used_override_keys() const;
  const std::vector<std::string>& log() const;
  // reverie.work_per_step's factor (1 when the script did not call it) and
  // samples (0: unknown).
  double work_factor() const;
  ScriptOutcome outcome() const;
  const std::string& outcome_reason() const;
  int64_t samples_per_step() const;
  // reverie.runs_on's GPU key ("" when the script did not call it).
  const std::string& runs_on() const;
  // In describe mode: whether the run ended at reverie.params.
  bool described() const;

  // The first error a Lua schedule key function raised (OK when none); the
  // simulator cannot stop mid-run, so callers check this after simulating.
  absl::Status policy_status() const;

  int64_t instructions_used() const;
  size_t peak_memory_bytes() const;

 private:
  LuaEngine();
  std::unique_ptr<internal::EngineState> state_;
  std::vector<std::string> used_keys_;
};

}  // namespace reverie::lua

#endif  // REVERIE_LUA_LUA_ENGINE_H_
