// Lua bindings: the `graph` object's schedule policy, simulation and
// read-only facts (launch model, changes so far, model records).
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "depgraph/kernel_class.h"
#include "lua/lua_internal.h"
#include "transforms/collectives.h"

namespace reverie::lua::internal {
using depgraph::Graph;

// ---- schedule and simulation -----------------------------------------------

static absl::Status SetNamedPolicy(EngineState& S, const char* name) {
  transforms::ScheduleChoice c;
  if (std::strcmp(name, "priority") == 0) {
    c.kind = transforms::ScheduleChoice::Kind::kPriority;
    c.description = "priority";
  } else if (std::strcmp(name, "earliest_ready") != 0 && std::strcmp(name, "earliest") != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown schedule policy '", name, "' (earliest_ready, priority, or a key function)"));
  }
  S.run.session->schedule() = std::move(c);
  return absl::OkStatus();
}

static void SetCustomPolicy(EngineState& S, std::shared_ptr<const depgraph::SchedulePolicy> p,
                     const char* where) {
  transforms::ScheduleChoice c;
  c.kind = transforms::ScheduleChoice::Kind::kCustom;
  c.custom = std::move(p);
  c.description = absl::StrCat("lua key function (", where, ")");
  S.run.session->schedule() = std::move(c);
}

int GraphSetPolicy(lua_State* L) {
  MutableGraphOrRaise(L);
  EngineState& S = State(L);
  if (lua_isfunction(L, 2)) {
    lua_Debug ar;
    lua_pushvalue(L, 2);
    lua_getinfo(L, ">S", &ar);
    const char* where = lua_pushfstring(L, "%s:%d", ar.short_src, ar.linedefined);
    SetCustomPolicy(S, MakeLuaPolicy(L, 2), where);
    return 0;
  }
  RaiseIfError(L, SetNamedPolicy(S, luaL_checkstring(L, 2)));
  return 0;
}

int GraphSimulate(lua_State* L) {
  // Not from inside a schedule policy. A priority-queue pass over the graph,
  // then a timeline of it in Lua memory.
  const Graph& g = MutableGraphOrRaise(L);
  ChargeAdjacency(L);
  ChargeWork(L, 8 * GraphWork(g));
  EngineState& S = State(L);
  depgraph::SimOptions o;
  o.policy = S.run.session->schedule().policy();
  o.step_frame = S.run.step_frame;  // the steps the command will print
  depgraph::SimResult sim;
  const absl::Status st = depgraph::SimulateInto(g, o, &sim);
  if (!S.results.key_error.empty()) {
    lua_pushstring(L, S.results.key_error.c_str());  // already "file:line: message"
    return lua_error(L);
  }
  RaiseIfError(L, st);
  PushTimeline(L, sim);
  return 1;
}

int GraphLaunchModel(lua_State* L) {
  MutableGraphOrRaise(L);
  // Inferred once per run from the base graph (a pass over it), then cached.
  if (!State(L).launch_model.has_value()) ChargeWork(L, GraphWork(CalibrationGraph(State(L))));
  const transforms::LaunchModel& m = SessionLaunchModel(State(L));
  lua_createtable(L, 0, 5);
  SetIntField(L, "kernel_launch_ns", m.kernel_launch_ns);
  SetIntField(L, "memcpy_launch_ns", m.memcpy_launch_ns);
  SetIntField(L, "memset_launch_ns", m.memset_launch_ns);
  SetIntField(L, "launch_delay_ns", m.launch_delay_ns);
  SetIntField(L, "samples", m.kernel_launch_samples);
  return 1;
}

int GraphValidate(lua_State* L) {
  ChargeWork(L, 2 * GraphWork(MutableGraphOrRaise(L)));
  RaiseIfError(L, State(L).run.session->Validate());
  return 0;
}

int GraphChanges(lua_State* L) {
  ChargeWork(L, 2 * GraphWork(MutableGraphOrRaise(L)));  // a diff against the base
  EngineState& S = State(L);
  const transforms::ChangeSummary c = transforms::Diff(S.run.session->base(), S.run.session->graph());
  lua_createtable(L, 0, 6);
  SetIntField(L, "added", c.added);
  SetIntField(L, "removed", c.removed);
  SetIntField(L, "modified", c.modified);
  SetIntField(L, "edges_added", c.edges_added);
  SetIntField(L, "edges_removed", c.edges_removed);
  SetIntField(L, "resources_added", c.resources_added);
  return 1;
}

int GraphParameters(lua_State* L) {
  EngineState& S = State(L);
  lua_newtable(L);
  if (S.run.model == nullptr) return 1;
  ChargeWork(L, 8 * static_cast<int64_t>(S.run.model->parameters.size()));
  int n = 0;
  for (const depgraph::ParameterInfo& p : S.run.model->parameters) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, p.name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushstring(L, p.layer.c_str());
    lua_setfield(L, -2, "layer");
    SetIntField(L, "bytes", p.bytes);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

static void PushStrings(lua_State* L, const std::vector<std::string>& v) {
  lua_createtable(L, static_cast<int>(v.size()), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    lua_pushstring(L, v[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

int GraphGradientBuckets(lua_State* L) {
  EngineState& S = State(L);
  lua_newtable(L);
  if (S.run.model == nullptr) return 1;
  int64_t work = 0;
  for (const depgraph::BucketInfo& b : S.run.model->buckets) {
    work += 8 + static_cast<int64_t>(b.parameters.size() + b.layers.size());
  }
  ChargeWork(L, work);
  int n = 0;
  for (const depgraph::BucketInfo& b : S.run.model->buckets) {
    lua_createtable(L, 0, 4);
    SetIntField(L, "index", b.index);
    SetIntField(L, "bytes", b.bytes);
    PushStrings(L, b.parameters);
    lua_setfield(L, -2, "parameters");
    PushStrings(L, b.layers);
    lua_setfield(L, -2, "layers");
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

const std::vector<depgraph::TaskId>& CollectiveKernels(lua_State* L) {
  static const std::vector<depgraph::TaskId> kNone;
  EngineState& S = State(L);
  if (S.collective_links.has_value()) return S.collective_links->kernels;
  if (S.run.model == nullptr || S.run.session == nullptr) return kNone;
  // Linking reads every task once (and sorts the records).
  const depgraph::Graph& g = S.run.session->graph();
  ChargeWork(L, static_cast<int64_t>(g.task_count()) +
                    8 * static_cast<int64_t>(S.run.model->collectives.size()));
  EngineState::CollectiveLinks& links = S.collective_links.emplace();
  links.kernels = transforms::KernelsOfCollectives(g, S.run.model->collectives);
  for (uint32_t i = 0; i < links.kernels.size(); ++i) {
    if (links.kernels[i].valid()) links.by_task.push_back({links.kernels[i].value(), i});
  }
  std::sort(links.by_task.begin(), links.by_task.end());
  return links.kernels;
}

int64_t CollectiveRecordOf(lua_State* L, depgraph::TaskId t) {
  CollectiveKernels(L);
  const EngineState& S = State(L);
  if (!S.collective_links.has_value()) return -1;  // no model
  const auto& by_task = S.collective_links->by_task;
  const auto it = std::lower_bound(by_task.begin(), by_task.end(),
                                   std::pair<uint32_t, uint32_t>{t.value(), 0});
  if (it == by_task.end() || it->first != t.value()) return -1;
  return static_cast<int64_t>(it->second);
}

int GraphCollectives(lua_State* L) {
  EngineState& S = State(L);
  lua_newtable(L);
  if (S.run.model == nullptr) return 1;
  ChargeWork(L, 8 * static_cast<int64_t>(S.run.model->collectives.size()));
  const std::vector<depgraph::TaskId>& kernels = CollectiveKernels(L);
  int n = 0;
  for (size_t i = 0; i < S.run.model->collectives.size(); ++i) {
    const depgraph::CollectiveInfo& c = S.run.model->collectives[i];
    lua_createtable(L, 0, 7);
    lua_pushstring(L, c.name.c_str());
    lua_setfield(L, -2, "name");
    const std::string_view kind = depgraph::CollectiveName(depgraph::CollectiveOfName(c.name));
    lua_pushlstring(L, kind.data(), kind.size());
    lua_setfield(L, -2, "collective");
    SetIntField(L, "bytes", c.bytes);
    SetIntField(L, "group_size", c.group_size);
    SetIntField(L, "measured_start_ns", c.start_ns);
    SetIntField(L, "measured_end_ns", c.end_ns);
    if (i < kernels.size() && kernels[i].valid()) {
      PushTask(L, kernels[i]);
      lua_setfield(L, -2, "kernel");
    }
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

int GraphWorldSize(lua_State* L) {
  EngineState& S = State(L);
  lua_pushinteger(L, S.run.model == nullptr ? 0 : S.run.model->world_size);
  return 1;
}

namespace {

void SetBool(lua_State* L, const char* key, bool v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, key);
}
void SetOrigin(lua_State* L, const depgraph::Origin& o) {
  SetString(L, "source", depgraph::FactSourceName(o.source));
  SetString(L, "how", o.how);
}
void SetUsed(lua_State* L, const char* key, const depgraph::UsedFact& u) {
  lua_createtable(L, 0, 4);
  SetBool(L, "used", u.used);
  SetNumber(L, "count", u.count);
  SetOrigin(L, u.origin);
  lua_setfield(L, -2, key);
}

}  // namespace

// graph:facts(): what the run already does (depgraph/facts.h), the same
// fields as `info --json`'s "facts", for a script's preconditions.
int GraphFacts(lua_State* L) {
  EngineState& S = State(L);
  const depgraph::TraceFacts empty;
  const depgraph::TraceFacts& f = S.run.model != nullptr ? S.run.model->facts : empty;
  ChargeWork(L, 64);
  lua_createtable(L, 0, 10);
  SetIntField(L, "counted_steps", f.counted_steps);
  lua_createtable(L, 0, 5);
  SetString(L, "name", f.gpu.name);
  SetString(L, "vendor", f.gpu.vendor);
  SetIntField(L, "devices_used", f.gpu.devices_used);
  SetOrigin(L, f.gpu.origin);
  lua_setfield(L, -2, "gpu");
  lua_createtable(L, 0, 5);
  SetString(L, "compute", f.precision.compute);
  SetNumber(L, "share", f.precision.share);
  SetBool(L, "half_or_lower", f.precision.half_or_lower());
  SetOrigin(L, f.precision.origin);
  lua_setfield(L, -2, "precision");
  const depgraph::OptimizerFact& o = f.optimizer;
  lua_createtable(L, 0, 10);
  SetString(L, "name", o.name);
  SetString(L, "implementation", o.implementation);
  SetNumber(L, "step_us", o.step_us);
  SetNumber(L, "step_kernels", o.step_kernels);
  SetNumber(L, "step_gpu_us", o.step_gpu_us);
  SetNumber(L, "zero_grad_us", o.zero_grad_us);
  SetNumber(L, "zero_grad_kernels", o.zero_grad_kernels);
  SetOrigin(L, o.origin);
  lua_setfield(L, -2, "optimizer");
  const depgraph::DataParallelFact& d = f.data_parallel;
  lua_createtable(L, 0, 12);
  SetBool(L, "used", d.used);
  SetString(L, "backend", d.backend);
  SetIntField(L, "world_size", d.world_size);
  SetNumber(L, "collectives_per_step", d.collectives_per_step);
  SetNumber(L, "allreduce_bytes_per_step", d.allreduce_bytes_per_step);
  SetNumber(L, "comm_kernels_per_step", d.comm_kernels_per_step);
  SetNumber(L, "comm_kernel_us_per_step", d.comm_kernel_us_per_step);
  SetBool(L, "generic_kernels", d.generic_kernels);
  SetIntField(L, "buckets", d.buckets);
  SetBool(L, "inference", d.inference);
  SetOrigin(L, d.origin);
  lua_setfield(L, -2, "data_parallel");
  SetUsed(L, "activation_checkpointing", f.checkpointing);
  SetUsed(L, "cuda_graphs", f.cuda_graphs);
  SetUsed(L, "compiled", f.compiled);
  lua_createtable(L, 0, 4);
  SetString(L, "mode", f.dataloader.mode);
  SetNumber(L, "loading_us_per_step", f.dataloader.loading_us_per_step);
  SetOrigin(L, f.dataloader.origin);
  lua_setfield(L, -2, "dataloader");
  lua_createtable(L, 0, 6);
  SetIntField(L, "pageable", f.copies.pageable);
  SetIntField(L, "pinned", f.copies.pinned);
  SetIntField(L, "device", f.copies.device);
  SetIntField(L, "other", f.copies.other);
  SetOrigin(L, f.copies.origin);
  lua_setfield(L, -2, "copies");
  return 1;
}

}  // namespace reverie::lua::internal
