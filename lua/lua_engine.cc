#include "lua/lua_engine.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/printable.h"
#include "base/sv.h"
#include "base/text.h"
#include "lua/lua_internal.h"

namespace reverie::lua {

using internal::ChargeMemory;
using internal::EngineState;
using internal::kStringBytes;
using internal::State;

namespace {

constexpr char kBlocked[][10] = {"os", "io", "require", "package", "debug", "dofile", "loadfile"};
constexpr char kIncludeCache[] = "reverie.includes";
// The first line of an error message is cut to this many bytes.
constexpr size_t kMaxMessageBytes = 500;

int BlockedGlobal(lua_State* L) {
  const char* k = lua_tostring(L, 2);
  if (k != nullptr) {
    for (const char* b : kBlocked) {
      if (std::strcmp(k, b) == 0) {
        return luaL_error(L,
                          "'%s' is not available: reverie scripts run sandboxed (no os, io, "
                          "require, package, debug, dofile, loadfile)",
                          k);
      }
    }
  }
  return 0;
}

// load() restricted to text chunks: binary chunks can crash the VM.
int SafeLoad(lua_State* L) {
  const int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  if (n >= 2) {
    lua_pushvalue(L, 2);
  } else {
    lua_pushnil(L);
  }
  lua_pushliteral(L, "t");
  if (n >= 4) {
    lua_pushvalue(L, 4);
    lua_call(L, 4, LUA_MULTRET);
  } else {
    lua_call(L, 3, LUA_MULTRET);
  }
  return lua_gettop(L) - n;
}

int Print(lua_State* L) {
  const int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; ++i) {
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_tolstring(L, i, nullptr);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  size_t size = 0;
  const char* line = lua_tolstring(L, -1, &size);
  internal::LogLine(L, std::string_view(line, size));
  return 0;
}

int Log(lua_State* L) { return Print(L); }

// reverie.nothing_to_change(reason): the trace already does what the script
// models ("kernels already bf16"): the script ends here, its edits are
// dropped and the prediction is the baseline, with the reason in its log.
int NothingToChange(lua_State* L) {
  const char* reason = luaL_checkstring(L, 1);
  EngineState& S = State(L);
  S.results.outcome = ScriptOutcome::kUnchanged;
  S.results.outcome_reason = reason;
  internal::LogLine(L, absl::StrCat("nothing to change: ", reason));
  lua_pushliteral(L, "nothing to change");
  return lua_error(L);  // LuaEngine::Run reads the outcome: a clean end
}

// reverie.refuse(reason): the script cannot model this trace ("the model
// already runs activation checkpointing; set force=true to recompute
// anyway"): an error naming the script, kFailedPrecondition.
int Refuse(lua_State* L) {
  const char* reason = luaL_checkstring(L, 1);
  EngineState& S = State(L);
  S.results.outcome = ScriptOutcome::kRefused;
  ChargeMemory(L, SatAdd(static_cast<int64_t>(std::strlen(reason)), kStringBytes));
  S.results.outcome_reason = reason;
  return luaL_error(L, "refused: %s", reason);
}

// reverie.work_per_step{factor = f [, samples = n]}: a script that changes
// the work a step does (a larger batch) says so, so that a prediction is
// also read as throughput (steps get longer while samples per second rise).
int WorkPerStep(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  EngineState& S = State(L);
  lua_getfield(L, 1, "factor");
  const lua_Number f = luaL_checknumber(L, -1);
  if (!(f > 0 && f <= 1e9)) luaL_error(L, "work_per_step: factor = %f must be in (0, 1e9]", f);
  lua_getfield(L, 1, "samples");
  const lua_Integer n =
      lua_isnil(L, -1) ? 0 : internal::CheckInteger(L, -1, "work_per_step: samples");
  if (n < 0 || n > (lua_Integer{1} << 40)) luaL_error(L, "work_per_step: samples = %I is out of range", n);
  S.results.work_factor = f;
  S.results.samples_per_step = n;
  return 0;
}

}  // namespace

namespace internal {
void WarnIfEmpty(lua_State* L, size_t count, const char* method) {
  EngineState& S = State(L);
  if (count != 0 || S.results.empty_edit_warnings >= 20) return;
  ++S.results.empty_edit_warnings;
  luaL_where(L, 1);
  const std::string line = absl::StrCat("warning: ", lua_tostring(L, -1), method,
                                        " on an empty selection changed nothing");
  lua_pop(L, 1);
  LogLine(L, line);
}
}  // namespace internal

namespace {

// ---- reverie.include ------------------------------------------------------

absl::StatusOr<std::string> ReadInclude(const EngineState& S, const char* rel) {
  const std::string_view r(rel);
  if (r.empty() || r[0] == '/' || r.find("..") != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("reverie.include: '", Sv(r),
                                "' must be a relative path inside the script library"));
  }
  for (const std::string& dir : S.run.include_dirs) {
    std::ifstream in(dir + "/" + std::string(r), std::ios::binary);
    if (!in) continue;
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
  }
  return absl::InvalidArgumentError(absl::StrCat("reverie.include: '", Sv(r), "' not found in ",
                              S.run.include_dirs.empty() ? "(no script folder)"
                                                     : absl::StrJoin(S.run.include_dirs, ", ")));
}

int Include(lua_State* L) {
  const char* rel = luaL_checkstring(L, 1);
  EngineState& S = State(L);
  lua_getfield(L, LUA_REGISTRYINDEX, kIncludeCache);  // 2
  lua_getfield(L, 2, rel);
  if (!lua_isnil(L, -1)) return 1;
  lua_pop(L, 1);
  absl::StatusOr<std::string> text = ReadInclude(S, rel);
  internal::RaiseIfError(L, text.status());
  const char* chunkname = lua_pushfstring(L, "@%s", rel);  // 3
  if (luaL_loadbufferx(L, text->data(), text->size(), chunkname, "t") != LUA_OK) {
    return lua_error(L);
  }
  lua_call(L, 0, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, 2, rel);
  return 1;
}

// ---- state setup and running ----------------------------------------------

void OpenSandbox(lua_State* L) {
  static const luaL_Reg kLibs[] = {{LUA_GNAME, luaopen_base},       {LUA_TABLIBNAME, luaopen_table},
                                   {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
                                   {LUA_UTF8LIBNAME, luaopen_utf8}};
  for (const luaL_Reg& lib : kLibs) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
  lua_pushglobaltable(L);
  for (const char* name : {"dofile", "loadfile"}) {
    lua_pushnil(L);
    lua_setfield(L, -2, name);
  }
  lua_getfield(L, -1, "load");
  lua_pushcclosure(L, SafeLoad, 1);
  lua_setfield(L, -2, "load");
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);
  lua_newtable(L);  // metatable of _G
  lua_pushcfunction(L, BlockedGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
}

// Runs inside lua_pcall so that allocation failures during setup are errors,
// not panics.
int Setup(lua_State* L) {
  EngineState& S = State(L);
  if (S.limits.sandbox) {
    OpenSandbox(L);
  } else {
    luaL_openlibs(L);
  }
  internal::PushBinding(L, Print, 0);
  lua_setglobal(L, "print");
  internal::GuardBuiltins(L);
  internal::InstallCountedPatterns(L);
  internal::ChargeStandardLibraries(L);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kIncludeCache);
  static const luaL_Reg kReverie[] = {
      {"params", internal::Params}, {"log", Log}, {"include", Include},
      {"work_per_step", WorkPerStep}, {"nothing_to_change", NothingToChange},
      {"refuse", Refuse}, {nullptr, nullptr}};
  lua_createtable(L, 0, 16);
  internal::SetBindings(L, kReverie);
  internal::RegisterCostFunctions(L);
  lua_pushliteral(L, REVERIE_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushinteger(L, 1000);
  lua_setfield(L, -2, "NS_PER_US");
  lua_pushinteger(L, 1000000);
  lua_setfield(L, -2, "NS_PER_MS");
  lua_setglobal(L, "reverie");
  internal::RegisterGraph(L);
  internal::RegisterSelection(L);
  internal::RegisterTask(L);
  internal::RegisterResource(L);
  internal::RegisterTimeline(L);
  return 0;
}

struct RunArgs {
  const char* source;
  size_t size;
};

int RunChunk(lua_State* L) {
  auto* args = static_cast<RunArgs*>(lua_touserdata(L, 1));
  EngineState& S = State(L);
  lua_getglobal(L, "reverie");
  lua_pushstring(L, S.run.display_name.c_str());
  lua_setfield(L, -2, "script");
  lua_pop(L, 1);
  const char* chunkname = lua_pushfstring(L, "@%s", S.run.display_name.c_str());
  if (luaL_loadbufferx(L, args->source, args->size, chunkname, "t") != LUA_OK) {
    return lua_error(L);
  }
  auto* g = static_cast<internal::GraphUd*>(lua_newuserdatauv(L, sizeof(internal::GraphUd), 0));
  g->token = 1;
  luaL_setmetatable(L, internal::kGraphMt);
  lua_pushvalue(L, -1);
  lua_setglobal(L, "graph");
  lua_call(L, 1, 0);
  return 0;
}

}  // namespace

namespace internal {

void LogLine(lua_State* L, std::string_view line) {
  // The engine's log and the script's report each keep a copy (escaped:
  // at most four bytes for one).
  ChargeMemory(L, SatAdd(SatMul(8, static_cast<int64_t>(line.size())), kStringBytes));
  EngineState& S = State(L);
  S.results.log.push_back(EscapeControl(line, /*keep_newlines=*/true));
  if (S.run.log_sink) S.run.log_sink(S.results.log.back());
}

// The message of a failed run: its first line (shortened to kMaxMessageBytes,
// naming the script), then only the traceback lines that point into Lua code
// ("[C]: in ?" frames of our trampolines say nothing to a user). Lines of a
// multi-line error message between the two are dropped and counted, so a
// script cannot flood the terminal (issue 17, D14).
std::string CleanMessage(std::string_view msg, const std::string& script) {
  const size_t tb = msg.find("\nstack traceback:");
  const std::string_view text = msg.substr(0, tb);
  const std::string_view trace = tb == std::string_view::npos ? "" : msg.substr(tb + 1);
  std::string first(text.substr(0, text.find('\n')));
  size_t extra_lines = 0;
  for (char c : text) extra_lines += c == '\n';
  // Cut in the middle: what went wrong is often at the end of a message
  // that names a long kernel ("... would create a cycle").
  first = Abbreviate(first, kMaxMessageBytes);
  if (extra_lines > 0) absl::StrAppend(&first, " (", extra_lines, " more lines)");
  // A script's message may hold escape sequences (issue 29, D31).
  first = EscapeControl(first);
  // error(msg, 0) or an included library's error: say whose run failed.
  if (first.compare(0, script.size(), script) != 0) first = absl::StrCat(script, ": ", first);
  std::istringstream in{std::string(trace)};
  std::string line, kept;
  int frames = 0;
  while (std::getline(in, line)) {
    if (line == "stack traceback:" || line.find("[C]: in ?") != std::string::npos ||
        line.find("[C]: in function 'error'") != std::string::npos) {
      continue;
    }
    if (++frames > 20) continue;  // a deep recursion's thousands of frames say nothing more
    absl::StrAppend(&kept, "\n", EscapeControl(line.substr(0, kMaxMessageBytes)));
  }
  if (frames > 20) absl::StrAppend(&kept, "\n\t(", frames - 20, " more frames)");
  return kept.empty() ? first : absl::StrCat(first, "\nstack traceback:", kept);
}

int MessageHandler(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (msg == nullptr) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
      msg = lua_tostring(L, -1);
    } else {
      // error({...}) or error(nil): no message, so say where it was raised.
      lua_Debug ar;
      bool found = false;
      for (int level = 1; !found && lua_getstack(L, level, &ar) != 0; ++level) {
        found = lua_getinfo(L, "Sl", &ar) != 0 && ar.currentline > 0;
      }
      if (found) {
        msg = lua_pushfstring(L, "%s:%d: error raised with a %s value instead of a message",
                              ar.short_src, ar.currentline, luaL_typename(L, 1));
      } else {
        msg = lua_pushfstring(L, "%s: error raised with a %s value instead of a message",
                              State(L).run.display_name.c_str(), luaL_typename(L, 1));
      }
    }
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}


void Raise(lua_State* L, std::string_view message) {
  luaL_where(L, 1);
  lua_pushlstring(L, message.data(), message.size());
  lua_concat(L, 2);
  lua_error(L);
  std::abort();  // lua_error does not return
}

}  // namespace internal

LuaEngine::LuaEngine() : state_(std::make_unique<EngineState>()) {}

LuaEngine::~LuaEngine() {
  if (state_ && state_->L != nullptr) lua_close(state_->L);
}

absl::StatusOr<std::unique_ptr<LuaEngine>> LuaEngine::Create(const EngineLimits& limits) {
  std::unique_ptr<LuaEngine> e(new LuaEngine());
  EngineState& S = *e->state_;
  S.limits = limits;
  S.alloc.limit = limits.memory_limit_bytes;
  S.L = lua_newstate(internal::LimitedAlloc, &S.alloc);
  if (S.L == nullptr) return absl::ResourceExhaustedError("cannot create a Lua state");
  *static_cast<EngineState**>(lua_getextraspace(S.L)) = &S;
  lua_atpanic(S.L, [](lua_State* L) -> int {
    // Only reachable through a bug (an unprotected Lua call); abort loudly.
    std::fprintf(stderr, "reverie: Lua panic: %s\n", lua_tostring(L, -1));
    std::abort();
  });
  lua_pushcfunction(S.L, Setup);
  if (lua_pcall(S.L, 0, 0, 0) != LUA_OK) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot set up the Lua state: ", lua_tostring(S.L, -1)));
  }
  internal::StartLimits(S.L);
  return e;
}

absl::Status LuaEngine::Run(std::string_view source, const ScriptContext& ctx,
                            transforms::EditSession* session) {
  EngineState& S = *state_;
  S.run = internal::RunInput{.session = session,
                             .model = ctx.model,
                             .measured = ctx.measured,
                             .step_frame = ctx.step_frame,
                             .display_name = ctx.display_name,
                             .stem = ctx.stem,
                             .overrides = ctx.overrides,
                             .only_script = ctx.only_script,
                             .describe = ctx.describe,
                             .include_dirs = ctx.include_dirs,
                             .log_sink = ctx.log_sink};
  S.launch_model.reset();
  S.cost_models.clear();
  S.collective_links.reset();
  S.op_medians.clear();
  S.sized_graph = nullptr;
  S.numbering = transforms::ResourceNumbering();
  lua_State* L = S.L;
  lua_settop(L, 0);
  lua_pushcfunction(L, internal::MessageHandler);
  lua_pushcfunction(L, RunChunk);
  RunArgs args{source.data(), source.size()};
  lua_pushlightuserdata(L, &args);
  S.alloc.refused_string = 0;
  int rc = LUA_OK;
  {
    internal::CpuSpan cpu(S);
    rc = lua_pcall(L, 1, 0, 1);
  }
  absl::Status status;
  if (rc != LUA_OK && S.exhausted.empty() &&
      (S.results.outcome == ScriptOutcome::kUnchanged || S.results.described)) {
    // reverie.nothing_to_change, or reverie.params in describe mode, ended
    // the run: not an error.
  } else if (rc != LUA_OK) {
    if (!S.exhausted.empty()) {
      // Whatever a handler or __close method raised on the way out, the
      // limit is the reason.
      status = absl::ResourceExhaustedError(internal::CleanMessage(S.exhausted, S.run.display_name));
    } else if (S.instructions > S.limits.instruction_budget) {
      // Spent by the allocator just before the error that ended the run.
      status = absl::ResourceExhaustedError(absl::StrCat(
          S.run.display_name, ": instruction budget of ", S.limits.instruction_budget,
          " VM instructions exceeded"));
    } else if (rc == LUA_ERRMEM && S.alloc.refused_string > 0) {
      status = absl::ResourceExhaustedError(absl::StrCat(
          S.run.display_name, ": a string of ", S.alloc.refused_string >> 20,
          " MiB is longer than the ", internal::kMaxStringBytes >> 20,
          " MiB a script's string may hold"));
    } else if (rc != LUA_ERRRUN && rc != LUA_ERRMEM && rc != LUA_ERRERR) {
      // Lua's C++ build turns any other exception into this status.
      status = absl::InternalError(
          absl::StrCat(S.run.display_name, ": stopped by an unexpected C++ exception in a binding"));
    } else if (rc == LUA_ERRMEM) {
      status = absl::ResourceExhaustedError(absl::StrCat(
          S.run.display_name, ": memory limit of ", S.limits.memory_limit_bytes >> 20,
          " MiB exceeded (Lua heap ", S.alloc.used >> 20, " MiB, graph changes and output ",
          S.alloc.charged >> 20, " MiB)"));
    } else {
      size_t n = 0;
      const char* m = lua_tolstring(L, -1, &n);
      std::string msg = internal::CleanMessage(
          m != nullptr ? std::string_view(m, n) : std::string_view("(no message)"), S.run.display_name);
      status = S.results.outcome == ScriptOutcome::kRefused ? absl::FailedPreconditionError(std::move(msg))
                                                    : absl::InvalidArgumentError(std::move(msg));
    }
  } else if (S.results.outcome == ScriptOutcome::kRefused) {
    // A script that caught its own refusal (pcall) still refused: its
    // edits are not a prediction.
    status = absl::FailedPreconditionError(internal::CleanMessage(
        absl::StrCat("refused: ", S.results.outcome_reason), S.run.display_name));
  } else if (!S.results.params_declared) {
    if (absl::Status used = internal::CheckOverridesUsed(S); !used.ok()) {
      status = absl::InvalidArgumentError(absl::StrCat(S.run.display_name, ": ", used.message()));
    }
  }
  lua_settop(L, 0);
  // What the run was given points into the caller's objects: drop it (the
  // name stays for the accessors' messages).
  S.run.session = nullptr;
  S.run.model = nullptr;
  S.run.overrides = nullptr;
  used_keys_.assign(S.results.used_keys.begin(), S.results.used_keys.end());
  return status;
}

const std::vector<ParamValue>& LuaEngine::params() const { return state_->results.params; }
const std::vector<std::string>& LuaEngine::used_override_keys() const { return used_keys_; }
const std::vector<std::string>& LuaEngine::log() const { return state_->results.log; }
double LuaEngine::work_factor() const { return state_->results.work_factor; }
ScriptOutcome LuaEngine::outcome() const { return state_->results.outcome; }
const std::string& LuaEngine::outcome_reason() const { return state_->results.outcome_reason; }

std::string_view ScriptOutcomeName(ScriptOutcome o) {
  switch (o) {
    case ScriptOutcome::kApplied: return "applied";
    case ScriptOutcome::kUnchanged: return "unchanged";
    case ScriptOutcome::kRefused: return "refused";
  }
  return "applied";
}
int64_t LuaEngine::samples_per_step() const { return state_->results.samples_per_step; }
const std::string& LuaEngine::runs_on() const { return state_->results.runs_on; }
bool LuaEngine::described() const { return state_->results.described; }
int64_t LuaEngine::instructions_used() const { return state_->instructions; }
size_t LuaEngine::peak_memory_bytes() const { return state_->alloc.peak; }

absl::Status LuaEngine::policy_status() const {
  if (state_->results.key_error.empty()) return absl::OkStatus();
  if (!state_->exhausted.empty()) return absl::ResourceExhaustedError(state_->results.key_error);
  return absl::InvalidArgumentError(state_->results.key_error);
}

}  // namespace reverie::lua
