// Lua bindings for cross-GPU prediction: sel:retarget_gpu{...} (Habitat's
// wave scaling, transforms/gpu_scaling.h), graph:devices() (the GPUs the
// trace describes) and the task field `geometry`.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lua/lua_internal.h"
#include "transforms/gpu_scaling.h"

namespace reverie::lua::internal {
namespace {

// A GPU spec as read from Lua.
struct SpecArgs {
  char name[64];
  double sm_count, max_threads_per_sm, max_blocks_per_sm, registers_per_sm;
  double shared_memory_per_sm_kb, clock_mhz, memory_bandwidth_gbs, peak_tflops;
};

// A GPU property: finite, >= 0 and below 2^31 (it may become an int32),
// or 0 (unknown) when absent.
double NumberField(lua_State* L, int table, const char* side, const char* key) {
  const int type = lua_getfield(L, table, key);
  double v = 0;
  if (type == LUA_TNUMBER) {
    v = lua_tonumber(L, -1);
    if (!(v >= 0 && v < 2147483647.0)) {
      luaL_error(L, "retarget_gpu: %s.%s = %f is out of range (0 to 2^31)", side, key, v);
    }
  } else if (type != LUA_TNIL) {
    luaL_error(L, "retarget_gpu: %s.%s must be a number, got %s", side, key, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return v;
}

// Reads the spec table at field `side` of the options table at `opts`.
void ReadSpec(lua_State* L, int opts, const char* side, const char* math, SpecArgs* out) {
  if (lua_getfield(L, opts, side) != LUA_TTABLE) {
    luaL_error(L, "retarget_gpu: '%s' must be a GPU table (see scripts/lib/gpus.lua)", side);
  }
  const int t = lua_gettop(L);
  std::memset(out, 0, sizeof(*out));
  if (lua_getfield(L, t, "name") == LUA_TSTRING) {
    std::strncpy(out->name, lua_tostring(L, -1), sizeof(out->name) - 1);
  }
  lua_pop(L, 1);
  out->sm_count = NumberField(L, t, side, "sm_count");
  out->max_threads_per_sm = NumberField(L, t, side, "max_threads_per_sm");
  out->max_blocks_per_sm = NumberField(L, t, side, "max_blocks_per_sm");
  out->registers_per_sm = NumberField(L, t, side, "registers_per_sm");
  out->shared_memory_per_sm_kb = NumberField(L, t, side, "shared_memory_per_sm_kb");
  out->clock_mhz = NumberField(L, t, side, "clock_mhz");
  out->memory_bandwidth_gbs = NumberField(L, t, side, "memory_bandwidth_gbs");
  out->peak_tflops = NumberField(L, t, side, "peak_tflops");
  if (math != nullptr && lua_getfield(L, t, "tflops") == LUA_TTABLE) {
    out->peak_tflops = NumberField(L, lua_gettop(L), "tflops", math);
    lua_pop(L, 1);
  } else if (math != nullptr) {
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

transforms::GpuSpec ToSpec(const SpecArgs& a) {
  transforms::GpuSpec s;
  s.name = a.name;
  s.sm_count = static_cast<int32_t>(a.sm_count);
  s.max_threads_per_sm = static_cast<int32_t>(a.max_threads_per_sm);
  s.max_blocks_per_sm = static_cast<int32_t>(a.max_blocks_per_sm);
  s.registers_per_sm = static_cast<int32_t>(a.registers_per_sm);
  s.shared_memory_per_sm_bytes = static_cast<int64_t>(a.shared_memory_per_sm_kb * 1024);
  s.clock_mhz = a.clock_mhz;
  s.memory_bandwidth_gbs = a.memory_bandwidth_gbs;
  s.peak_tflops = a.peak_tflops;
  return s;
}

// What retarget_gpu and scale_work return: a table of the kernels they saw.
int PushStats(lua_State* L, const transforms::RetargetStats& stats) {
  lua_createtable(L, 0, 6);
  SetIntField(L, "kernels", stats.kernels);
  SetIntField(L, "unknown_geometry", stats.unknown_geometry);
  SetIntField(L, "single_wave", stats.single_wave);
  SetIntField(L, "skipped", stats.skipped);
  SetIntField(L, "before_ns", stats.before_ns);
  SetIntField(L, "after_ns", stats.after_ns);
  return 1;
}

// sel:retarget_gpu{from = gpu, to = gpu, gamma = g, math = "fp16"}
int SelRetargetGpu(lua_State* L) {
  SelectionUd* sel = CheckSelection(L, 1);
  CheckFields(L, 2, "retarget_gpu", {"from", "to", "gamma", "math"});
  const char* math = nullptr;
  if (lua_getfield(L, 2, "math") != LUA_TNIL) math = luaL_checkstring(L, -1);
  lua_pop(L, 1);  // the string stays alive in the options table
  if (lua_getfield(L, 2, "gamma") != LUA_TNUMBER) {
    return luaL_error(L, "retarget_gpu: 'gamma' (memory-boundedness in [0, 1]) is required");
  }
  const double gamma = lua_tonumber(L, -1);
  lua_pop(L, 1);
  SpecArgs from, to;
  ReadSpec(L, 2, "from", math, &from);
  ReadSpec(L, 2, "to", math, &to);
  MutableGraphOrRaise(L);
  ChargeWork(L, 8 * static_cast<int64_t>(sel->count));
  absl::StatusOr<transforms::RetargetStats> r = transforms::RetargetKernels(
      State(L).run.session->graph(), ToSelection(sel), ToSpec(from), ToSpec(to), gamma);
  if (!r.ok()) Raise(L, absl::StrCat("retarget_gpu: ", r.status().message()));
  return PushStats(L, *r);
}

// sel:scale_work{factor = r, gpu = spec}: the kernels' grids grow r times
// (transforms/gpu_scaling.h ScaleWork).
int SelScaleWork(lua_State* L) {
  SelectionUd* sel = CheckSelection(L, 1);
  CheckFields(L, 2, "scale_work", {"factor", "gpu"});
  if (lua_getfield(L, 2, "factor") != LUA_TNUMBER) {
    return luaL_error(L, "scale_work: 'factor' (a number > 0) is required");
  }
  const double factor = lua_tonumber(L, -1);
  lua_pop(L, 1);
  SpecArgs gpu;
  ReadSpec(L, 2, "gpu", nullptr, &gpu);
  MutableGraphOrRaise(L);
  ChargeWork(L, 8 * static_cast<int64_t>(sel->count));
  absl::StatusOr<transforms::RetargetStats> r =
      transforms::ScaleWork(State(L).run.session->graph(), ToSelection(sel), ToSpec(gpu), factor);
  RaiseIfError(L, r.status());
  return PushStats(L, *r);
}

}  // namespace

int GraphDevices(lua_State* L) {
  EngineState& S = State(L);
  lua_newtable(L);
  if (S.run.model == nullptr) return 1;
  ChargeWork(L, 16 * static_cast<int64_t>(S.run.model->devices.size()));
  int n = 0;
  for (const depgraph::DeviceInfo& d : S.run.model->devices) {
    lua_createtable(L, 0, 10);
    SetIntField(L, "id", d.id);
    lua_pushstring(L, d.name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushstring(L, d.vendor.c_str());
    lua_setfield(L, -2, "vendor");
    SetIntField(L, "sm_count", d.sm_count);
    SetIntField(L, "compute_major", d.compute_major);
    SetIntField(L, "compute_minor", d.compute_minor);
    SetIntField(L, "total_memory_bytes", d.total_memory_bytes);
    SetIntField(L, "max_threads_per_sm", d.max_threads_per_sm);
    SetIntField(L, "registers_per_sm", d.registers_per_sm);
    lua_pushnumber(L, static_cast<double>(d.shared_memory_per_sm_bytes) / 1024.0);
    lua_setfield(L, -2, "shared_memory_per_sm_kb");
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

void PushGeometry(lua_State* L, const depgraph::KernelGeometry& g) {
  if (!g.known()) {
    lua_pushnil(L);
    return;
  }
  lua_createtable(L, 0, 4);
  SetIntField(L, "blocks", g.blocks);
  SetIntField(L, "threads_per_block", g.threads_per_block);
  SetIntField(L, "registers_per_thread", g.registers_per_thread);
  SetIntField(L, "shared_memory_bytes", g.shared_memory_bytes);
}

void RegisterGpuSelectionMethods(lua_State* L) {
  PushBinding(L, SelRetargetGpu, 0);
  lua_setfield(L, -2, "retarget_gpu");
  PushBinding(L, SelScaleWork, 0);
  lua_setfield(L, -2, "scale_work");
}

}  // namespace reverie::lua::internal
