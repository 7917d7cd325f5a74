// File: lua/lua_internal.h
//
// Internal to scripts/: the state the Lua bindings share, and the helpers
// every binding file uses. Not a public header.
//
// How a binding is written (the C++ build of Lua, lua5.4-c++, makes a Lua
// error a C++ exception, so C++ locals are destroyed when one is raised):
//   1. check the arguments (luaL_check*, CheckTask, ...) and charge THE
//      LIMITS below before any work;
//   2. do the work in C++ that returns absl::Status / StatusOr;
//   3. raise a failure with RaiseIfError / Raise, which unwinds through the
//      C++ frames in between.
// No binding may catch (...): that would swallow a Lua error. Nothing here
// is noexcept on a path that can raise.
// Userdata hold ids (TaskId, ResourceId values), never pointers: the graph a
// handle refers to is whatever EngineState::graph() is at the time of use.
//
// THE LIMITS: a binding whose C++ work grows with the graph or with its
// arguments charges it to the instruction budget (ChargeWork, about one unit
// per task, edge or name visited) and every binding that makes C++ memory
// grow (names, layers, tasks, edges, resources, log lines) charges it to the
// memory cap (ChargeMemory), before doing the work, as step 1 above.
// Bindings are registered with SetBindings / PushBinding, which charge the
// bytes of their string arguments and turn a std::bad_alloc into a Lua
// error; the allocator charges the bytes it hands out (lua_limits.cc).
// Amounts never wrap: compute them with SatAdd / SatMul / RangeCount.
#ifndef REVERIE_LUA_LUA_INTERNAL_H_
#define REVERIE_LUA_LUA_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/checked_math.h"
#include "base/sv.h"
#include "depgraph/graph.h"
#include "depgraph/model_info.h"
#include "depgraph/simulator.h"
#include "lua.hpp"
#include "lua/lua_engine.h"
#include "transforms/cost_model.h"
#include "transforms/select.h"
#include "transforms/session.h"
#include "transforms/structure.h"

namespace reverie::lua::internal {

inline constexpr char kGraphMt[] = "reverie.Graph";
inline constexpr char kTaskMt[] = "reverie.Task";
inline constexpr char kResourceMt[] = "reverie.Resource";
inline constexpr char kSelectionMt[] = "reverie.Selection";
inline constexpr char kTimelineMt[] = "reverie.Timeline";

struct GraphUd {
  uint32_t token;
};
struct TaskUd {
  uint32_t id;
};
struct ResourceUd {
  uint32_t id;
};
// Variable-size userdata: `count` ids follow the header, strictly increasing.
struct SelectionUd {
  uint64_t count;
  uint32_t ids[1];
};
inline size_t SelectionBytes(size_t n) { return offsetof(SelectionUd, ids) + n * sizeof(uint32_t); }
// Variable-size userdata: start/end per task, then (start, end) per step.
struct TimelineUd {
  uint64_t tasks;
  uint64_t steps;
  double mean_step_ns;
  int64_t makespan_ns;
  int64_t data[1];  // start[tasks], end[tasks], iter[2 * steps]
};
inline size_t TimelineBytes(size_t tasks, size_t steps) {
  return offsetof(TimelineUd, data) + (2 * tasks + 2 * steps) * sizeof(int64_t);
}

struct EngineState;

struct AllocState {
  size_t used = 0;     // Lua heap
  size_t charged = 0;  // C++ memory the script caused (ChargeMemory)
  size_t limit = 0;    // for used + charged together
  size_t peak = 0;     // of used + charged
  // Set once the limits start (StartLimits): from then on every byte the
  // allocator hands out is charged to the budget (LimitedAlloc).
  EngineState* owner = nullptr;
  // The live strings of at least kBigStringBytes (by address): while any
  // lives, the count hook checks the CPU time at every firing.
  absl::flat_hash_set<const void*> big_strings;
  size_t refused_string = 0;  // bytes of the last string refused (kMaxStringBytes)
};

// Estimated C++ bytes per object a script adds to the graph (structure of
// arrays with growth slack, adjacency, hash-index entries).
inline constexpr int64_t kTaskBytes = 160;
inline constexpr int64_t kEdgeBytes = 48;
inline constexpr int64_t kResourceBytes = 128;
inline constexpr int64_t kStringBytes = 64;  // plus twice the text (table + index)

// String work is charged a unit per this many bytes (copied, compared,
// hashed, converted): about a VM instruction's time.
inline constexpr int64_t kBytesPerUnit = 16;
// The longest string a script may make: Lua compares two strings (`<`,
// `==`, a table key) inside one VM instruction that no hook sees, so this
// bounds the work of one instruction (about a millisecond); see THE LIMITS
// in lua_limits.cc.
inline constexpr size_t kMaxStringBytes = size_t{16} << 20;
// Strings from this size on make the count hook check the CPU time at every
// firing instead of every kCpuCheckEvery firings.
inline constexpr size_t kBigStringBytes = size_t{64} << 10;

// What a script run is given (LuaEngine::Run's ScriptContext and session).
struct RunInput {
  transforms::EditSession* session = nullptr;
  const depgraph::ModelInfo* model = nullptr;
  const depgraph::Graph* measured = nullptr;  // ScriptContext::measured
  const std::vector<depgraph::StepTime>* step_frame = nullptr;  // ScriptContext::step_frame
  std::string display_name;  // "amp.lua" as the user named it
  std::string stem;          // "amp": the prefix of qualified --set keys
  const std::map<std::string, std::string>* overrides = nullptr;
  bool only_script = true;  // unqualified unknown --set keys fail at once
  bool describe = false;     // ScriptContext::describe
  std::vector<std::string> include_dirs;
  std::function<void(std::string_view)> log_sink;
};

// What a script run leaves behind: its parameters, log, outcome and the
// facts it declared (reverie.work_per_step, reverie.runs_on).
struct RunResults {
  bool params_declared = false;
  bool described = false;  // describe mode ended the run at reverie.params
  std::vector<ParamValue> params;
  std::set<std::string> used_keys;
  std::vector<std::string> log;
  int empty_edit_warnings = 0;  // WarnIfEmpty's lines so far (capped)
  // reverie.work_per_step: how much more work (samples) a step of the
  // transformed run does, and the baseline's samples per step (0: unknown).
  double work_factor = 1;
  int64_t samples_per_step = 0;
  std::string runs_on;  // reverie.runs_on: a GPU table key; "" = the trace's GPU
  // reverie.nothing_to_change / reverie.refuse.
  ScriptOutcome outcome = ScriptOutcome::kApplied;
  std::string outcome_reason;
  std::string key_error;  // first error raised by a Lua schedule key
};

// Everything the bindings share; owned by LuaEngine, reachable from the
// lua_State's extra space: the limits and their accounting, what the
// script being run was given, what it leaves behind, and per-run caches.
struct EngineState {
  lua_State* L = nullptr;
  EngineLimits limits;
  AllocState alloc;
  int64_t instructions = 0;
  // CPU time the script's Lua code and bindings used (Run and every
  // schedule key call), the backstop for work no count sees (lua_limits.cc).
  int64_t cpu_ns = 0;
  int64_t cpu_entered_ns = 0;
  int cpu_depth = 0;
  int hooks_since_cpu_check = 0;
  // Non-empty once the budget or the cap was hit: the one-line message that
  // every later hook firing and charge raises again, with the count hook
  // firing before every instruction, so that no pcall, xpcall, coroutine or
  // __close handler can swallow it and carry on.
  std::string exhausted;
  // Numbers the resources the script adds in O(1) each (reset per run).
  transforms::ResourceNumbering numbering;
  // Bytes of the names / layer paths of `sized_graph` counted so far (both
  // tables only grow), for charging pattern matching.
  const depgraph::Graph* sized_graph = nullptr;
  size_t sized_names = 0, sized_layers = 0;
  int64_t name_bytes = 0, layer_bytes = 0;

  // The task metatable's address (RegisterTask): TestTask compares a value's
  // metatable with it instead of looking it up in the registry by name; and
  // its reference in the registry's array, which PushTask reads by index.
  const void* task_mt = nullptr;
  int task_mt_ref = LUA_NOREF;

  // What the script being run was given (RunInput), set while it runs.
  RunInput run;

  // Set while a schedule key function runs: the graph being simulated.
  const depgraph::Graph* policy_graph = nullptr;
  bool read_only = false;

  // What the run leaves behind (RunResults).
  RunResults results;
  // Per-run caches on the session's graph, reset by each run.
  std::optional<transforms::LaunchModel> launch_model;
  // Cost models calibrated on CalibrationGraph (the trace as built) this run, by
  // origin GPU key ("" = the trace's own GPU); an error is kept too.
  std::map<std::string, std::unique_ptr<absl::StatusOr<transforms::CostModel>>> cost_models;
  // The links between model->collectives and their recorded GPU tasks
  // (transforms/collectives.h), made on first use on the session's graph
  // this run, both ways.
  struct CollectiveLinks {
    std::vector<depgraph::TaskId> kernels;  // by record: its task, or invalid
    // (task id, record index), by task: t.collective looks a kernel up
    // instead of scanning every record.
    std::vector<std::pair<uint32_t, uint32_t>> by_task;
  };
  std::optional<CollectiveLinks> collective_links;
  // graph:op_cost's and with_op's medians by op name this run. An op added
  // at the median itself (with_op without op_ns) leaves an upper median
  // where it was; an op added at another cost drops its name's entry.
  absl::flat_hash_map<std::string, std::optional<int64_t>> op_medians;

  // The graph handles refer to (nullptr when none is attached).
  const depgraph::Graph* graph() const {
    if (policy_graph != nullptr) return policy_graph;
    return run.session != nullptr ? &run.session->graph() : nullptr;
  }
};

inline EngineState& State(lua_State* L) {
  return **static_cast<EngineState**>(lua_getextraspace(L));
}

// S.collective_links' kernels, linked (and charged) on first use; empty without a
// model or a graph.
const std::vector<depgraph::TaskId>& CollectiveKernels(lua_State* L);
// transforms::MedianOpCost of `name` on the session's graph, from
// S.op_medians when known; a miss adds the ops it read to *read.
std::optional<int64_t> CachedOpMedian(EngineState& S, std::string_view name, int64_t* read);
// An op named `name` costing `cost_ns` was added to the graph.
void OpAdded(EngineState& S, std::string_view name, int64_t cost_ns);
// The index in model->collectives of the record linked to kernel `t` (the
// first, when several are), or -1.
int64_t CollectiveRecordOf(lua_State* L, depgraph::TaskId t);

// Raises `message` (one line, as the script sees it) as a Lua error at the
// caller's line; RaiseIfError does so for a failed status.
[[noreturn]] void Raise(lua_State* L, std::string_view message);
inline void RaiseIfError(lua_State* L, const absl::Status& s) {
  if (!s.ok()) Raise(L, StdSv(s.message()));
}

// t[key] = v on the table at the top of the stack (building a result table).
inline void SetString(lua_State* L, const char* key, std::string_view v) {
  lua_pushlstring(L, v.data(), v.size());
  lua_setfield(L, -2, key);
}
inline void SetNumber(lua_State* L, const char* key, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, key);
}

// The allocator with the memory cap (lua_newstate's), the guards installed
// during setup (setmetatable refuses __gc; xpcall does not run a handler
// for a limit error; pcall and xpcall charge each error they catch) and the
// budget's count hook.
void* LimitedAlloc(void* ud, void* ptr, size_t osize, size_t nsize);
void GuardBuiltins(lua_State* L);
void StartLimits(lua_State* L);
// Measures the CPU time of one entry into Lua (a script run, a schedule key
// call); nested entries count once.
class CpuSpan {
 public:
  explicit CpuSpan(EngineState& S);
  ~CpuSpan();
  CpuSpan(const CpuSpan&) = delete;
  CpuSpan& operator=(const CpuSpan&) = delete;

 private:
  EngineState& S_;
};
// Replaces the metatable on top of the stack's __metatable by a locked
// proxy: getmetatable(handle) never hands a script the metatable itself
// (issue 29, D20: a __gc added there made every later handle finalizable,
// and __index / __newindex could be replaced). `what` names the handles.
void LockMetatable(lua_State* L, const char* what);
// luaL_setfuncs(L, l, 0) and lua_pushcclosure(L, f, nup) (nup 0 or 1) for
// bindings: each function is wrapped so that it first charges the bytes of
// its string arguments (converting, hashing or copying them is work Lua
// does not count) and turns a std::bad_alloc of the C++ it runs into a Lua
// error naming the script's line.
void SetBindings(lua_State* L, const luaL_Reg* l);
void PushBinding(lua_State* L, lua_CFunction f, int nup);
// Replaces string.find/match/gmatch/gsub by versions that charge every
// matching step to the budget (lua_strings.cc; Lua's run with no hook).
void InstallCountedPatterns(lua_State* L);
// Wraps the other string, table and utf8 functions so that each charges the
// work its arguments imply (lua_charged_libs.cc).
void ChargeStandardLibraries(lua_State* L);

// THE LIMITS (see the file comment). Both raise (a sticky error, see
// EngineState::exhausted) when the budget / cap is spent; call them while
// nothing is half-done. A negative amount charges nothing (it never
// refunds: issue 29, D21); compute amounts with the saturating helpers of
// base/checked_math.h so that none wraps.
void ChargeWork(lua_State* L, int64_t units);
void ChargeMemory(lua_State* L, int64_t bytes);
// What is left of the budget / the cap (0 when spent).
int64_t WorkLeft(const EngineState& S);
int64_t MemoryLeft(const EngineState& S);
// A pass over the whole graph, in units of about a VM instruction (a
// quarter per task and edge).
int64_t GraphWork(const depgraph::Graph& g);
// Charges `steps` tasks, edges or list entries visited, at GraphWork's rate
// (nothing for steps <= 0).
void ChargeSteps(lua_State* L, int64_t steps);
// Charges what bringing the adjacency up to date costs (call before a
// binding that reads it): a patch of the changes since, or a build.
void ChargeAdjacency(lua_State* L);
// What Graph::Reaches, and keeping its numbering through edits, cost since
// `before` (the graph's reach_work() then), at GraphWork's rate: charged
// after the call, which is bounded by a build and a pass over the graph.
void ChargeReachWork(lua_State* L, int64_t before);
// Total bytes of the graph's names / layer paths (cached: both only grow).
int64_t NameBytes(EngineState& S, const depgraph::Graph& g);
int64_t LayerBytes(EngineState& S, const depgraph::Graph& g);

// Graph access; both raise when no graph is attached, the mutable one also
// inside a schedule policy.
const depgraph::Graph& GraphOrRaise(lua_State* L);
depgraph::Graph& MutableGraphOrRaise(lua_State* L);

// t[key] = v for the table on top of the stack.
inline void SetIntField(lua_State* L, const char* key, int64_t v) {
  lua_pushinteger(L, static_cast<lua_Integer>(v));
  lua_setfield(L, -2, key);
}

// Handles.
void PushTask(lua_State* L, depgraph::TaskId t);
void PushResource(lua_State* L, depgraph::ResourceId r);
// A live task of the current graph at `idx` (raises otherwise).
depgraph::TaskId CheckTask(lua_State* L, int idx);
// Like CheckTask but accepts removed tasks (for `id`, `removed`).
depgraph::TaskId CheckTaskAny(lua_State* L, int idx);
// luaL_testudata(L, idx, kTaskMt) without its registry lookup by name (a
// string compare: a tenth of `advise`'s time went to reading task fields).
TaskUd* TestTask(lua_State* L, int idx);
depgraph::ResourceId CheckResource(lua_State* L, int idx);
SelectionUd* CheckSelection(lua_State* L, int idx);
// Allocates a selection userdata for `n` ids (count set to n) on the stack.
SelectionUd* NewSelection(lua_State* L, size_t n);
// Pushes a selection of `sorted_ids` (strictly increasing).
void PushSelection(lua_State* L, absl::Span<const depgraph::TaskId> sorted_ids);
// Removes the selection's tasks (transforms::RemoveTasks) and pushes how
// many were removed and how many edges were added to bridge them.
int RemoveAndCount(lua_State* L, const SelectionUd* s);
// Copies a selection userdata into a transforms::Selection (C++ side only).
transforms::Selection ToSelection(const SelectionUd* s);

// Reads a `TaskQuery` from the table at `idx` into *q; returns the stack
// index of a `where` function, or 0. Raises on errors.
int ReadQuery(lua_State* L, int idx, const char* what, transforms::TaskQuery* q);

// Numbers a script gives, checked (issue 17, D7; bounds in base/checked_math.h):
// - CheckNs: a time in ns, |v| <= kMaxDurationNs (a duration, gap, delay or
//   delta), raising otherwise; FieldNs reads one from a table, in ns or us;
// - CheckInt32: an integer that fits int32 (priorities, devices);
// - CheckStep: -1 or a step of the graph (code indexes by it);
// - CheckBytes: an integer in [0, kMaxBytes].
int64_t CheckNs(lua_State* L, int idx);
int64_t FieldNs(lua_State* L, int table, const char* ns_key, const char* us_key, int64_t dflt);
int32_t CheckInt32(lua_State* L, int idx, const char* what);
// Logs "warning: file.lua:LINE: METHOD on an empty selection changed
// nothing" (the first 20 times) when `count` is 0: a selection that matched
// nothing is a silent no-op a user must hear about.
void WarnIfEmpty(lua_State* L, size_t count, const char* method);
// An integer (a string or float that is not one raises "WHAT: integer
// expected, got ..."), naming the parameter as the script wrote it.
lua_Integer CheckInteger(lua_State* L, int idx, const char* what);
// A step a task may belong to: -1 (none) or one of the graph's.
int32_t CheckStep(lua_State* L, int idx, const char* what);

// Pushes the table at idx's "step" field, or its "iteration" where "step" is
// nil ("iteration": its deprecated name from reverie 0.1.0, kept one
// release for scripts written then; docs/LUA_API.md); returns the pushed
// value's type.
inline int GetStepField(lua_State* L, int idx) {
  if (lua_getfield(L, idx, "step") != LUA_TNIL) return lua_type(L, -1);
  lua_pop(L, 1);
  return lua_getfield(L, idx, "iteration");
}
int64_t CheckBytes(lua_State* L, int idx, const char* what);
// The options table at `idx` names only `allowed` fields, else raises
// "WHAT: unknown field 'K' (allowed, ...)" (a key that is not a string is
// '?'; a long one is abbreviated): a typo must not be silently ignored.
void CheckFields(lua_State* L, int idx, std::string_view what, std::span<const std::string_view> allowed);
inline void CheckFields(lua_State* L, int idx, std::string_view what,
                        std::initializer_list<std::string_view> allowed) {
  CheckFields(L, idx, what, std::span<const std::string_view>(allowed.begin(), allowed.size()));
}

// Resolves (creating when new) a layer path; its parent is the longest known
// dotted prefix. Check the path first: CheckLayerPath raises for one beyond
// the bounds of a module path (proto/trace_validate.h) and charges the
// lookups.
void CheckLayerPath(lua_State* L, std::string_view path);
depgraph::LayerId LayerFor(depgraph::Graph& g, std::string_view path);

// A line of the script's log (print, reverie.log, a binding's note):
// charged to the cap, its control characters escaped, handed to the sink.
void LogLine(lua_State* L, std::string_view line);

// lua_pcall message handler: appends a traceback to the error message.
int MessageHandler(lua_State* L);
// A raised message as reverie reports it: one first line (cut, naming
// `script`), then the Lua frames of the traceback.
std::string CleanMessage(std::string_view msg, const std::string& script);

// The graph the models are calibrated on: the trace's as built
// (RunInput::measured), else the session's base.
const depgraph::Graph& CalibrationGraph(const EngineState& S);
// The launch model of CalibrationGraph (cached per run).
const transforms::LaunchModel& SessionLaunchModel(EngineState& S);

// Registration of each binding file's metatables and functions.
void RegisterGraph(lua_State* L);
// reverie.params (lua_params.cc), and the check that every --set key meant
// for this script was declared.
int Params(lua_State* L);
absl::Status CheckOverridesUsed(EngineState& S);

// graph:insert (lua_insert.cc).
int GraphInsert(lua_State* L);
// graph methods defined in lua_graph_info.cc.
int GraphSetPolicy(lua_State* L);
int GraphSimulate(lua_State* L);
int GraphLaunchModel(lua_State* L);
int GraphValidate(lua_State* L);
int GraphChanges(lua_State* L);
int GraphParameters(lua_State* L);
int GraphGradientBuckets(lua_State* L);
int GraphCollectives(lua_State* L);
int GraphWorldSize(lua_State* L);
int GraphFacts(lua_State* L);
// Cross-GPU prediction (lua_gpu.cc): graph:devices(), the task field
// `geometry`, and sel:retarget_gpu added to the selection method table on
// top of the stack.
int GraphDevices(lua_State* L);
void PushGeometry(lua_State* L, const depgraph::KernelGeometry& g);
// A framework op as a table {id, name, own_ns, depth, parent = id or nil}.
void PushOp(lua_State* L, const depgraph::Graph& g, depgraph::OpId op);
void RegisterGpuSelectionMethods(lua_State* L);
// The hardware model (lua_cost.cc): reverie.gpu / gpus / match_gpu on the
// `reverie` table, graph:gpu / cost_model / copy_ns on the graph method
// table, sel:retime on the selection method table (each at the top of the
// stack), and the task field `work` (nil without work).
void RegisterCostFunctions(lua_State* L);
void RegisterCostGraphMethods(lua_State* L);
void RegisterCostSelectionMethods(lua_State* L);
// The memory edits (lua_memory.cc) on the graph method table at the top of
// the stack: graph:allocations / stash / allocate / resize_allocation.
void RegisterMemoryGraphMethods(lua_State* L);
void PushKernelWork(lua_State* L, depgraph::TaskId t);
// graph:select (lua_query.cc) and sel:filter.
int GraphSelect(lua_State* L);
// Resolves `q` on the current graph (transforms::Select), charging the
// work first (THE LIMITS); raises a bad query.
transforms::Selection SelectOrRaise(lua_State* L, const transforms::TaskQuery& q);
int SelFilter(lua_State* L);
void RegisterSelection(lua_State* L);
void RegisterTask(lua_State* L);
void RegisterResource(lua_State* L);
void RegisterTimeline(lua_State* L);
// Pushes a string view (not NUL-terminated) as a Lua string.
inline void PushView(lua_State* L, std::string_view s) { lua_pushlstring(L, s.data(), s.size()); }
// Raises "task N (NAME) was removed" at the script's line.
int RaiseRemoved(lua_State* L, depgraph::TaskId t);
// The task `ud` names in `g` (a handle's id must be one of g's tasks).
depgraph::TaskId InGraph(lua_State* L, const depgraph::Graph& g, const TaskUd& ud);
// A task handle's __index and __newindex, and the codes of its fields for
// NewHandleClass (lua_task_fields.cc).
int TaskIndex(lua_State* L);
int TaskNewIndex(lua_State* L);

// A field of a handle class, by name and its code (nonzero).
struct HandleField {
  const char* name;
  lua_Integer code;
};
// A handle class: metatable `mt` with `methods`, __index and optional
// __newindex (upvalue of both: the class table, mapping each method's name
// to its function and each field's name to its code), __eq and
// __tostring, locked (`what` names the handles in the error).
void NewHandleClass(lua_State* L, const char* mt, const char* what, const luaL_Reg* methods,
                    lua_CFunction index, lua_CFunction newindex, lua_CFunction eq,
                    lua_CFunction tostring, std::span<const HandleField> fields = {});
std::span<const HandleField> TaskFields();
// Pushes a new Timeline of `sim`.
void PushTimeline(lua_State* L, const depgraph::SimResult& sim);

// graph:set_policy(function): wraps the function at `idx` as a policy.
std::shared_ptr<const depgraph::SchedulePolicy> MakeLuaPolicy(lua_State* L, int idx);

}  // namespace reverie::lua::internal

#endif  // REVERIE_LUA_LUA_INTERNAL_H_
