// Lua bindings of the hardware model: the GPU table (reverie.gpu,
// reverie.gpus, reverie.match_gpu; hardware/gpu_spec.h), the cost model
// calibrated on the script's graph (graph:gpu(), graph:cost_model(),
// graph:copy_ns(); transforms/cost_model.h), sel:retime{...} and the task
// field `work`.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/sv.h"
#include "base/text.h"
#include "hardware/gpu_spec.h"
#include "lua/lua_internal.h"
#include "transforms/cost_model.h"
#include "transforms/host_memory.h"
#include "transforms/memory_scale.h"

namespace reverie::lua::internal {
namespace {

using hardware::GpuSpec;
using hardware::Math;

// {fp32 = 19.5, ...} of the non-zero entries.
void PushPeaks(lua_State* L, const std::array<double, hardware::kMathCount>& p) {
  lua_createtable(L, 0, hardware::kMathCount);
  for (int m = 0; m < hardware::kMathCount; ++m) {
    if (p[m] > 0) SetNumber(L, std::string(hardware::MathName(static_cast<Math>(m))).c_str(), p[m]);
  }
}

// A GPU as scripts see it: every figure of the row, `tflops` the best peak
// per math (tensor cores where the part has them: what retarget_gpu and
// lib/gpus.lua always used), and the occupancy limits wave scaling reads.
void PushGpu(lua_State* L, const GpuSpec& g) {
  lua_createtable(L, 0, 28);
  SetString(L, "key", g.key);
  SetString(L, "name", g.name);
  SetString(L, "vendor", hardware::VendorName(g.vendor));
  SetString(L, "arch", g.arch);
  SetIntField(L, "sm_count", g.sm_count);
  SetNumber(L, "clock_mhz", g.boost_clock_mhz);
  SetNumber(L, "memory_bandwidth_gbs", g.memory_bandwidth_gbs);
  SetNumber(L, "memory_gb", g.memory_gb);
  SetNumber(L, "l2_mb", g.l2_mb);
  SetIntField(L, "pcie_gen", g.pcie_gen);
  SetIntField(L, "pcie_lanes", g.pcie_lanes);
  SetNumber(L, "pcie_gbs", hardware::HostLinkGbs(g));
  SetString(L, "scaleup", g.scaleup);
  SetNumber(L, "scaleup_gbs", g.scaleup_gbs);
  std::array<double, hardware::kMathCount> best{};
  for (int m = 0; m < hardware::kMathCount; ++m) best[m] = std::max(g.vector_tflops[m], g.matrix_tflops[m]);
  PushPeaks(L, best);
  lua_setfield(L, -2, "tflops");
  PushPeaks(L, g.vector_tflops);
  lua_setfield(L, -2, "vector_tflops");
  PushPeaks(L, g.matrix_tflops);
  lua_setfield(L, -2, "matrix_tflops");
  SetIntField(L, "max_threads_per_sm", g.occupancy.max_threads_per_sm);
  SetIntField(L, "max_blocks_per_sm", g.occupancy.max_blocks_per_sm);
  SetIntField(L, "registers_per_sm", g.occupancy.registers_per_sm);
  SetIntField(L, "shared_memory_per_sm_kb", g.occupancy.shared_memory_per_sm_kb);
  SetString(L, "source", g.source);
  SetString(L, "note", g.note);
}

// A name the script gave, as a message quotes it: shortened, so that a
// caught error on a 16 MiB name copies no 16 MiB.
std::string Quoted(std::string_view s) { return Abbreviate(s, 100); }

// The string at `idx` (a string or a number, as luaL_checklstring), its
// bytes charged: strings read from an options table are not charged by the
// binding's wrapper (SetBindings), and every use below is by length.
std::string_view CheckView(lua_State* L, int idx) {
  size_t n = 0;
  const char* s = luaL_checklstring(L, idx, &n);
  ChargeWork(L, static_cast<int64_t>(n / kBytesPerUnit));
  return {s, n};
}

// A table key as an unknown-field message names it ("?" when not a string).
const GpuSpec& CheckGpuKey(lua_State* L, std::string_view key, const char* what) {
  const GpuSpec* g = hardware::FindGpu(key);
  if (g == nullptr) {
    Raise(L, absl::StrCat(what, ": unknown GPU '", Quoted(key), "' (known: ", hardware::GpuKeys(), ")"));
  }
  return *g;
}

// reverie.runs_on(key): the prediction runs on that GPU of the table (a
// script that moves the work to another GPU says so), so `predict` checks
// the predicted memory against that GPU's, not the trace's.
int ReverieRunsOn(lua_State* L) {
  const std::string_view key = CheckView(L, 1);
  CheckGpuKey(L, key, "runs_on");
  EngineState& S = State(L);
  ChargeMemory(L, SatAdd(static_cast<int64_t>(key.size()), kStringBytes));
  S.results.runs_on = std::string(key);
  return 0;
}

// reverie.gpu(key) -> GPU table, or nil when the table has no such key.
int ReverieGpu(lua_State* L) {
  const GpuSpec* g = hardware::FindGpu(CheckView(L, 1));
  if (g == nullptr) return 0;
  PushGpu(L, *g);
  return 1;
}

// reverie.gpus() -> {"P100-SXM2", ...} in table order.
int ReverieGpus(lua_State* L) {
  const auto table = hardware::GpuTable();
  lua_createtable(L, static_cast<int>(table.size()), 0);
  for (size_t i = 0; i < table.size(); ++i) {
    PushView(L, table[i].key);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

// reverie.match_gpu(device_name) -> GPU table, or nil.
int ReverieMatchGpu(lua_State* L) {
  size_t n = 0;
  const char* name = luaL_checklstring(L, 1, &n);
  ChargeWork(L, SatMul(4, static_cast<int64_t>(n)));
  hardware::DeviceFacts d;
  d.name = std::string_view(name, n);
  const hardware::GpuMatch m = hardware::MatchGpu(d);
  if (m.spec == nullptr) return 0;
  PushGpu(L, *m.spec);
  return 1;
}

// The model calibrated on the session's graph as the script received it,
// built on first use (per origin GPU key; "" = the trace's own GPU).
const transforms::CostModel& ModelOrRaise(lua_State* L, std::string_view origin_key) {
  EngineState& S = State(L);
  if (S.run.session == nullptr || S.read_only) Raise(L, "the cost model needs a script's graph");
  // A key is checked before it becomes a map key: at most one model per
  // row of the GPU table.
  if (!origin_key.empty()) origin_key = CheckGpuKey(L, origin_key, "cost model").key;
  const std::string key(origin_key);
  auto it = S.cost_models.find(key);
  if (it == S.cost_models.end()) {
    const depgraph::Graph& base = CalibrationGraph(S);
    ChargeWork(L, 4 * GraphWork(base));
    ChargeMemory(L, static_cast<int64_t>(base.task_count() * sizeof(transforms::KernelWork)));
    std::vector<depgraph::DeviceInfo> devices;
    if (S.run.model != nullptr) devices = S.run.model->devices;
    if (!key.empty()) {
      const GpuSpec& g = CheckGpuKey(L, key, "cost model");
      devices.assign(1, depgraph::DeviceInfo());
      devices[0].name = std::string(g.name);
      devices[0].sm_count = g.sm_count;
    }
    auto m = std::make_unique<absl::StatusOr<transforms::CostModel>>(
        transforms::BuildCostModel(base, devices));
    it = S.cost_models.emplace(key, std::move(m)).first;
  }
  if (!it->second->ok()) {
    Raise(L, absl::StrCat(it->second->status().message(),
                          key.empty() ? " (name the trace's GPU with a script's gpu parameter)" : ""));
  }
  return **it->second;
}

// The optional string field `field` of the options table at `idx` (empty
// when absent); any other type raises, naming the call.
std::string_view KeyField(lua_State* L, int idx, const char* field, const char* what) {
  if (lua_type(L, idx) != LUA_TTABLE) return {};
  std::string_view key;
  const int type = lua_getfield(L, idx, field);
  if (type == LUA_TSTRING) {
    key = CheckView(L, -1);
  } else if (type != LUA_TNIL) {
    luaL_error(L, "%s: '%s' must be a GPU key (a string), got %s", what, field, luaL_typename(L, -1));
  }
  lua_pop(L, 1);  // the string stays alive in the options table
  return key;
}

// The optional origin key of a call's options table at `idx`.
std::string_view OriginKey(lua_State* L, int idx, const char* what) {
  return KeyField(L, idx, "gpu", what);
}

// An options argument at `idx`: none, nil or a table.
void CheckOptions(lua_State* L, int idx, const char* what) {
  if (!lua_isnoneornil(L, idx) && lua_type(L, idx) != LUA_TTABLE) {
    luaL_error(L, "%s: the options must be a table, got %s", what, luaL_typename(L, idx));
  }
}

void PushCurve(lua_State* L, const hardware::EfficiencyCurve& c) {
  lua_createtable(L, 0, 4);
  SetNumber(L, "fixed_ns", c.fixed_ns);
  SetNumber(L, "ceiling", c.ceiling());
  SetIntField(L, "samples", c.samples);
  SetString(L, "from", c.slope_from_prior ? "prior" : "trace");
}

// graph:gpu([{gpu = KEY}]) -> the trace's GPU (table row with its figures
// from the trace), with `matched_by`, `from_trace`, `trace_gpu` and `moved`;
// after graph:set_gpu, the table's row of the GPU the kernels were moved to
// (no device, no figures from the trace).
int GraphGpu(lua_State* L) {
  CheckOptions(L, 2, "gpu");
  const transforms::CostModel& m = ModelOrRaise(L, OriginKey(L, 2, "gpu"));
  const depgraph::Graph& g = GraphOrRaise(L);
  const bool moved = !g.gpu_key().empty();
  PushGpu(L, transforms::GpuNow(g, m));
  SetString(L, "trace_gpu", m.gpu.spec.key);
  lua_pushboolean(L, moved);
  lua_setfield(L, -2, "moved");
  SetString(L, "matched_by",
            moved
                ? absl::StrCat("moved there by a script (graph:set_gpu) from ", Sv(m.gpu.spec.key))
                : m.gpu.matched_by);
  SetString(L, "device_name", moved ? std::string() : m.gpu.device_name);
  const size_t from_trace = moved ? 0 : m.gpu.from_trace.size();
  lua_createtable(L, static_cast<int>(from_trace), 0);
  for (size_t i = 0; i < from_trace; ++i) {
    PushView(L, m.gpu.from_trace[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "from_trace");
  return 1;
}

// graph:cost_model([{gpu = KEY}]) -> what the model calibrated.
int GraphCostModel(lua_State* L) {
  CheckOptions(L, 2, "cost_model");
  const transforms::CostModel& m = ModelOrRaise(L, OriginKey(L, 2, "cost_model"));
  lua_createtable(L, 0, 10);
  SetString(L, "gpu", m.gpu.spec.key);
  SetIntField(L, "kernels", m.kernels);
  SetIntField(L, "kernels_with_work", m.kernels_with_work);
  SetNumber(L, "memory_gbs", m.memory_gbs());
  SetNumber(L, "host_link_gbs", hardware::HostLinkGbs(m.gpu.spec));
  SetNumber(L, "scaleup_gbs", m.gpu.spec.scaleup_gbs);
  SetNumber(L, "link_efficiency", transforms::kLinkEfficiency);
  lua_createtable(L, 0, depgraph::kKernelClassCount);
  for (int c = 0; c < depgraph::kKernelClassCount; ++c) {
    PushCurve(L, m.curve[c]);
    lua_setfield(L, -2, std::string(depgraph::KernelClassName(static_cast<depgraph::KernelClass>(c))).c_str());
  }
  lua_setfield(L, -2, "classes");
  lua_createtable(L, 0, transforms::kCopyKindCount);
  for (int k = 0; k < transforms::kCopyKindCount; ++k) {
    const transforms::LinkRate& r = m.copy[k];
    lua_createtable(L, 0, 4);
    SetNumber(L, "gbs", r.gbs);
    SetNumber(L, "fixed_ns", r.fixed_ns);
    SetIntField(L, "samples", r.samples);
    SetString(L, "from", r.from);
    lua_setfield(L, -2, std::string(transforms::CopyKindName(static_cast<transforms::CopyKind>(k))).c_str());
  }
  lua_setfield(L, -2, "copies");
  return 1;
}

std::optional<transforms::CopyKind> ParseCopyKind(std::string_view s) {
  for (int k = 0; k < transforms::kCopyKindCount; ++k) {
    if (transforms::CopyKindName(static_cast<transforms::CopyKind>(k)) == s) {
      return static_cast<transforms::CopyKind>(k);
    }
  }
  return std::nullopt;
}

// graph:copy_ns(kind, bytes [, {to = KEY, gpu = KEY}]) -> ns by the model.
int GraphCopyNs(lua_State* L) {
  const std::string_view kind = CheckView(L, 2);
  if (lua_type(L, 3) != LUA_TNUMBER) {
    return luaL_error(L, "copy_ns: bytes must be a number, got %s", luaL_typename(L, 3));
  }
  const double bytes = lua_tonumber(L, 3);
  const std::optional<transforms::CopyKind> k = ParseCopyKind(kind);
  if (!k) {
    Raise(L, absl::StrCat("copy_ns: unknown copy kind '", Quoted(kind),
                          "' (htod_pageable, dtoh_pageable, htod_pinned, dtoh_pinned, dtod)"));
  }
  if (!(bytes >= 0) || bytes > 1e18) Raise(L, "copy_ns: bytes must be in [0, 1e18]");
  CheckOptions(L, 4, "copy_ns");
  const GpuSpec* dest = nullptr;
  if (const std::string_view to = KeyField(L, 4, "to", "copy_ns"); !to.empty()) {
    dest = &CheckGpuKey(L, to, "copy_ns");
  }
  const transforms::CostModel& m = ModelOrRaise(L, OriginKey(L, 4, "copy_ns"));
  const depgraph::Graph& g = GraphOrRaise(L);
  if (dest == nullptr && !g.gpu_key().empty()) dest = &transforms::GpuNow(g, m);
  lua_pushnumber(L, transforms::CopyNs(m, *k, bytes, dest));
  return 1;
}

// graph:batch() -> the batch the kernels now run, as a multiple of the
// trace's; graph:set_batch(f) records it (batch_size.lua, once it scaled
// them): later retimes scale work from it.
int GraphBatch(lua_State* L) {
  lua_pushnumber(L, GraphOrRaise(L).batch_factor());
  return 1;
}

int GraphSetBatch(lua_State* L) {
  if (lua_type(L, 2) != LUA_TNUMBER) {
    return luaL_error(L, "set_batch: the factor must be a number, got %s", luaL_typename(L, 2));
  }
  const lua_Number f = lua_tonumber(L, 2);
  if (!(f >= 1e-9 && f <= 1e9)) {
    Raise(L, absl::StrCat("set_batch: the factor must be in [1e-9, 1e9], got ", f));
  }
  MutableGraphOrRaise(L).set_batch_factor(f);
  return 0;
}

// graph:set_gpu(KEY): the graph's kernels now stand for a run on KEY
// (retarget_gpu.lua, once it moved them): graph:gpu(), retime, copy_ns and
// kernel_ns start from it.
int GraphSetGpu(lua_State* L) {
  const GpuSpec& g = CheckGpuKey(L, CheckView(L, 2), "set_gpu");
  MutableGraphOrRaise(L).set_gpu_key(std::string(g.key));
  return 0;
}

// graph:batch_frees() -> {frees = {{task, bytes, stretch_ns, step}...},
// calibrated, fixed_ns, ns_per_byte, samples}: the host frees of buffers a
// batch was copied from, and the line the trace's own frees give for what
// freeing costs (transforms/host_memory.h).
int GraphBatchFrees(lua_State* L) {
  EngineState& S = State(L);
  if (S.run.session == nullptr) Raise(L, "batch_frees needs a script's graph");
  // The trace's frees, as measured: an earlier script that resized the
  // batch's copies (batch_size.lua) changes neither which frees they are
  // nor what they cost.
  const depgraph::Graph& measured = CalibrationGraph(S);
  const depgraph::Graph& g = GraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(measured.task_count() + measured.memory_events().size()));
  const std::vector<transforms::BatchFree> frees = transforms::BatchFrees(measured);
  const transforms::HostFreeRate rate = transforms::FitHostFreeRate(frees);
  lua_createtable(L, 0, 5);
  lua_createtable(L, static_cast<int>(std::min<size_t>(frees.size(), INT32_MAX)), 0);
  int n = 0;
  for (const transforms::BatchFree& f : frees) {
    if (f.task.value() >= g.task_count() || g.removed(f.task)) continue;  // removed since
    lua_createtable(L, 0, 4);
    PushTask(L, f.task);
    lua_setfield(L, -2, "task");
    SetIntField(L, "bytes", f.bytes);
    SetIntField(L, "stretch_ns", f.stretch_ns);
    SetIntField(L, "step", f.step);
    lua_rawseti(L, -2, ++n);
  }
  lua_setfield(L, -2, "frees");
  lua_pushboolean(L, rate.calibrated);
  lua_setfield(L, -2, "calibrated");
  SetNumber(L, "fixed_ns", rate.fixed_ns);
  SetNumber(L, "ns_per_byte", rate.ns_per_byte);
  SetIntField(L, "samples", rate.samples);
  return 1;
}

// graph:scale_batch_memory(factor [, {gpu = KEY}]) -> {scaled, kept,
// batch_sizes, bytes_before, bytes_after, frees_by_size, made_by_scripts,
// estimated}: the GPU allocations of the batch's tensors x factor
// (transforms/memory_scale.h), from the batch the graph runs now
// (graph:batch(); call before graph:set_batch).
int GraphScaleBatchMemory(lua_State* L) {
  if (lua_type(L, 2) != LUA_TNUMBER) {
    return luaL_error(L, "scale_batch_memory: factor must be a number, got %s", luaL_typename(L, 2));
  }
  const double factor = lua_tonumber(L, 2);
  if (!(factor > 0) || factor > 1e6) Raise(L, "scale_batch_memory: factor must be in (0, 1e6]");
  CheckOptions(L, 3, "scale_batch_memory");
  const transforms::CostModel& m = ModelOrRaise(L, OriginKey(L, 3, "scale_batch_memory"));
  depgraph::Graph& g = MutableGraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(g.task_count() + g.memory_events().size()));
  const double from = g.batch_factor();
  const transforms::MemoryScaleStats st =
      transforms::ScaleBatchMemory(g, CalibrationGraph(State(L)), m, from, from * factor);
  lua_createtable(L, 0, 8);
  lua_pushboolean(L, st.estimated);
  lua_setfield(L, -2, "estimated");
  SetIntField(L, "scaled", st.scaled);
  SetIntField(L, "made_by_scripts", st.made_by_scripts);
  SetIntField(L, "frees_by_size", st.frees_by_size);
  SetIntField(L, "kept", st.kept);
  SetIntField(L, "batch_sizes", st.batch_sizes);
  SetIntField(L, "bytes_before", st.bytes_before);
  SetIntField(L, "bytes_after", st.bytes_after);
  return 1;
}

// sel:retime{work = f, dtype = "fp16", to = KEY, gpu = KEY}
int SelRetime(lua_State* L) {
  SelectionUd* sel = CheckSelection(L, 1);
  CheckFields(L, 2, "retime", {"work", "dtype", "to", "gpu"});
  transforms::RetimeSpec spec;
  const int work_type = lua_getfield(L, 2, "work");
  if (work_type == LUA_TNUMBER) {
    spec.work_factor = lua_tonumber(L, -1);
  } else if (work_type != LUA_TNIL) {
    return luaL_error(L, "retime: 'work' must be a number");
  }
  lua_pop(L, 1);
  if (lua_getfield(L, 2, "dtype") != LUA_TNIL) {
    const std::string_view d = CheckView(L, -1);
    spec.dtype = hardware::ParseMath(d);
    if (!spec.dtype) Raise(L, absl::StrCat("retime: unknown dtype '", Quoted(d), "' (fp32, tf32, bf16, fp16, fp8, fp64)"));
  }
  lua_pop(L, 1);
  if (const std::string_view to = KeyField(L, 2, "to", "retime"); !to.empty()) {
    spec.dest = &CheckGpuKey(L, to, "retime");
  }
  const transforms::CostModel& m = ModelOrRaise(L, OriginKey(L, 2, "retime"));
  depgraph::Graph& g = MutableGraphOrRaise(L);
  ChargeWork(L, SatMul(16, static_cast<int64_t>(sel->count)));
  absl::StatusOr<transforms::RetimeStats> r = transforms::Retime(g, ToSelection(sel), m, spec);
  RaiseIfError(L, r.status());
  lua_createtable(L, 0, 6);
  SetIntField(L, "kernels", r->kernels);
  SetIntField(L, "with_work", r->with_work);
  SetIntField(L, "unaligned", r->unaligned);
  SetIntField(L, "skipped", r->skipped);
  SetIntField(L, "before_ns", r->before_ns);
  SetIntField(L, "after_ns", r->after_ns);
  return 1;
}

// graph:op_inputs(id) -> {{type, concrete, list, shapes = {{2, 3}, ...}}, ...}
// as the profiler recorded them, or nil (no shapes recorded).
int GraphOpInputs(lua_State* L) {
  const lua_Integer id = CheckInteger(L, 2, "op_inputs: id");
  const depgraph::Graph& g = GraphOrRaise(L);
  if (id < 0 || static_cast<uint64_t>(id) >= g.op_count()) return 0;
  const hardware::OpArgs* in = g.op_inputs(depgraph::OpId(static_cast<uint32_t>(id)));
  if (in == nullptr) return 0;
  int64_t work = 0;
  for (const hardware::OpArg& a : *in) {
    work = SatAdd(work, 4);
    for (const auto& s : a.shapes) work = SatAdd(work, 1 + static_cast<int64_t>(s.size()));
  }
  ChargeWork(L, work);
  ChargeMemory(L, SatMul(64, work));
  lua_createtable(L, static_cast<int>(in->size()), 0);
  for (size_t i = 0; i < in->size(); ++i) {
    const hardware::OpArg& a = (*in)[i];
    lua_createtable(L, 0, 4);
    SetString(L, "type", a.type);
    SetString(L, "concrete", a.concrete);
    lua_pushboolean(L, a.is_list);
    lua_setfield(L, -2, "list");
    lua_createtable(L, static_cast<int>(a.shapes.size()), 0);
    for (size_t k = 0; k < a.shapes.size(); ++k) {
      lua_createtable(L, static_cast<int>(a.shapes[k].size()), 0);
      for (size_t d = 0; d < a.shapes[k].size(); ++d) {
        lua_pushinteger(L, a.shapes[k][d]);
        lua_rawseti(L, -2, static_cast<lua_Integer>(d + 1));
      }
      lua_rawseti(L, -2, static_cast<lua_Integer>(k + 1));
    }
    lua_setfield(L, -2, "shapes");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

double NumberFieldOr(lua_State* L, int t, const char* key, double dflt, const char* what) {
  double v = dflt;
  const int type = lua_getfield(L, t, key);
  if (type == LUA_TNUMBER) {
    v = lua_tonumber(L, -1);
  } else if (type != LUA_TNIL) {
    luaL_error(L, "%s: '%s' must be a number", what, key);
  }
  lua_pop(L, 1);
  if (!(v >= 0) || v > 1e30) luaL_error(L, "%s: '%s' must be in [0, 1e30]", what, key);
  return v;
}

// graph:kernel_ns{class = "elementwise", flops = F, bytes = B [, math = "fp16",
// matrix = true, gpu = KEY]} -> the time (ns) the model gives a new kernel of
// that class and work: its class's curve at the kernel's roofline.
int GraphKernelNs(lua_State* L) {
  CheckFields(L, 2, "kernel_ns", {"class", "flops", "bytes", "math", "matrix", "gpu"});
  depgraph::KernelClass cls = depgraph::KernelClass::kElementwise;
  if (lua_getfield(L, 2, "class") != LUA_TNIL) {
    const std::string_view name = CheckView(L, -1);
    bool found = false;
    for (int c = 0; c < depgraph::kKernelClassCount; ++c) {
      if (depgraph::KernelClassName(static_cast<depgraph::KernelClass>(c)) == name) {
        cls = static_cast<depgraph::KernelClass>(c);
        found = true;
      }
    }
    if (!found) Raise(L, absl::StrCat("kernel_ns: unknown kernel class '", Quoted(name), "'"));
  }
  lua_pop(L, 1);
  const double flops = NumberFieldOr(L, 2, "flops", 0, "kernel_ns");
  const double bytes = NumberFieldOr(L, 2, "bytes", 0, "kernel_ns");
  Math math = Math::kFp32;
  if (lua_getfield(L, 2, "math") != LUA_TNIL) {
    const std::string_view d = CheckView(L, -1);
    const std::optional<Math> m = hardware::ParseMath(d);
    if (!m) Raise(L, absl::StrCat("kernel_ns: unknown math '", Quoted(d), "'"));
    math = *m;
  }
  lua_pop(L, 1);
  lua_getfield(L, 2, "matrix");
  const bool matrix = lua_toboolean(L, -1);
  lua_pop(L, 1);
  const transforms::CostModel& m = ModelOrRaise(L, OriginKey(L, 2, "kernel_ns"));
  const double r =
      hardware::RooflineNs(transforms::GpuNow(GraphOrRaise(L), m), flops, bytes, math, matrix);
  lua_pushnumber(L, m.curve[static_cast<int>(cls)].TimeNs(r));
  return 1;
}

}  // namespace

void PushKernelWork(lua_State* L, depgraph::TaskId t) {
  EngineState& S = State(L);
  if (S.run.session == nullptr || S.read_only) {
    lua_pushnil(L);
    return;
  }
  // The work does not depend on the GPU: any model this run calibrated
  // serves (a script that named the origin GPU); else the trace's own, and
  // nil when the trace names no GPU.
  const transforms::CostModel* found = nullptr;
  for (const auto& [key, model] : S.cost_models) {
    if (model->ok()) found = &**model;
  }
  if (found == nullptr) {
    if (S.run.model == nullptr || S.run.model->devices.empty()) {
      lua_pushnil(L);
      return;
    }
    found = &ModelOrRaise(L, {});
  }
  const transforms::CostModel& m = *found;
  const transforms::KernelWork* w = m.WorkOf(t);
  if (w == nullptr) {
    lua_pushnil(L);
    return;
  }
  lua_createtable(L, 0, 10);
  SetString(L, "kind", hardware::WorkKindName(w->kind));
  SetNumber(L, "flops", w->flops);
  SetNumber(L, "bytes", w->bytes);
  SetString(L, "math", hardware::MathName(w->math));
  lua_pushboolean(L, w->matrix);
  lua_setfield(L, -2, "matrix");
  SetNumber(L, "roofline_ns", m.RooflineNs(*w, m.gpu.spec));
  SetNumber(L, "share", w->share);
  SetNumber(L, "flops_share", w->flops_share);
  SetString(L, "op", CalibrationGraph(S).op_name(w->op));
  SetIntField(L, "op_id", w->op.value());
}

void RegisterCostFunctions(lua_State* L) {
  // On the `reverie` table at the top of the stack.
  static const luaL_Reg kFns[] = {
      {"gpu", ReverieGpu}, {"gpus", ReverieGpus}, {"match_gpu", ReverieMatchGpu},
      {"runs_on", ReverieRunsOn}, {nullptr, nullptr}};
  SetBindings(L, kFns);
}

void RegisterCostGraphMethods(lua_State* L) {
  // On the graph method table at the top of the stack.
  static const luaL_Reg kFns[] = {{"gpu", GraphGpu},
                                  {"set_gpu", GraphSetGpu},
                                  {"batch", GraphBatch},
                                  {"set_batch", GraphSetBatch},
                                  {"cost_model", GraphCostModel},
                                  {"copy_ns", GraphCopyNs},
                                  {"batch_frees", GraphBatchFrees},
                                  {"scale_batch_memory", GraphScaleBatchMemory},
                                  {"kernel_ns", GraphKernelNs},
                                  {"op_inputs", GraphOpInputs},
                                  {nullptr, nullptr}};
  SetBindings(L, kFns);
}

void RegisterCostSelectionMethods(lua_State* L) {
  PushBinding(L, SelRetime, 0);
  lua_setfield(L, -2, "retime");
}

}  // namespace reverie::lua::internal
