// Lua bindings of the memory edits (transforms/memory_edit.h):
// graph:allocations(), graph:stash(id, {...}), graph:allocate{...},
// graph:resize_allocation(id, n).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lua/lua_internal.h"
#include "transforms/memory_edit.h"

namespace reverie::lua::internal {
namespace {

// Each stash appends up to four events to the graph's memory list.
constexpr int64_t kMemoryEventBytes = 96;

uint32_t CheckAllocationId(lua_State* L, int idx, const char* what) {
  const lua_Integer id = CheckInteger(L, idx, what);
  if (id < 0 || id > UINT32_MAX) Raise(L, std::string(what) + ": no such allocation");
  return static_cast<uint32_t>(id);
}

void PushAllocation(lua_State* L, const depgraph::Graph& g, const transforms::Allocation& a) {
  lua_createtable(L, 0, 10);
  SetIntField(L, "id", a.index);
  SetIntField(L, "bytes", a.bytes);
  SetIntField(L, "device", a.device);
  SetIntField(L, "step", a.step);
  SetString(L, "phase", depgraph::PhaseName(a.phase));
  if (a.layer.valid() && a.layer.value() < g.layer_count()) SetString(L, "layer", g.layer(a.layer).path);
  if (a.producer.valid()) {
    PushTask(L, a.producer);
    lua_setfield(L, -2, "producer");
  }
  if (a.free != 0) {
    SetString(L, "freed_in", depgraph::PhaseName(a.freed_in));
    if (a.freed_at.valid()) {
      PushTask(L, a.freed_at);
      lua_setfield(L, -2, "freed_at");
    }
  }
  lua_pushboolean(L, a.saved());
  lua_setfield(L, -2, "saved");
}

// graph:allocations() -> {{id, bytes, device, step, phase, layer, producer,
// freed_in, freed_at, saved}...} in the trace's order.
int GraphAllocations(lua_State* L) {
  const depgraph::Graph& g = GraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(g.task_count() + g.memory_events().size()));
  const std::vector<transforms::Allocation> all = transforms::Allocations(g);
  lua_createtable(L, static_cast<int>(std::min<size_t>(all.size(), INT32_MAX)), 0);
  int n = 0;
  for (const transforms::Allocation& a : all) {
    PushAllocation(L, g, a);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

// graph:stash(id, {release = task, restore = task [, stashed_bytes = n]})
int GraphStash(lua_State* L) {
  const uint32_t id = CheckAllocationId(L, 2, "stash: id");
  CheckFields(L, 3, "stash", {"release", "restore", "stashed_bytes"});
  if (lua_getfield(L, 3, "release") == LUA_TNIL) return luaL_error(L, "stash: 'release' is required");
  const depgraph::TaskId release = CheckTask(L, -1);
  if (lua_getfield(L, 3, "restore") == LUA_TNIL) return luaL_error(L, "stash: 'restore' is required");
  const depgraph::TaskId restore = CheckTask(L, -1);
  int64_t stashed = 0;
  if (lua_getfield(L, 3, "stashed_bytes") != LUA_TNIL) stashed = CheckBytes(L, -1, "stash: stashed_bytes");
  depgraph::Graph& g = MutableGraphOrRaise(L);
  ChargeMemory(L, 4 * kMemoryEventBytes);
  // Charged after, for the events read looking for the free: usually a
  // step's, every one after the allocation when the trace never freed it.
  int64_t scanned = 0;
  const absl::Status stashed_status = transforms::Stash(g, id, release, restore, stashed, &scanned);
  ChargeWork(L, scanned + 1);
  RaiseIfError(L, stashed_status);
  return 0;
}

// graph:resize_allocation(id, bytes), or graph:resize_allocation{[id] =
// bytes, ...}: many in one pass over the memory events.
int GraphResizeAllocation(lua_State* L) {
  std::vector<std::pair<uint32_t, int64_t>> sizes;
  if (lua_type(L, 2) == LUA_TTABLE) {
    if (!lua_isnone(L, 3)) Raise(L, "resize_allocation: a table of sizes takes no second argument");
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
      ChargeWork(L, 1);
      ChargeMemory(L, sizeof(sizes[0]));
      const int64_t bytes = CheckBytes(L, -1, "resize_allocation: bytes");
      sizes.emplace_back(CheckAllocationId(L, -2, "resize_allocation: id"), bytes);
      lua_pop(L, 1);
    }
  } else {
    const uint32_t id = CheckAllocationId(L, 2, "resize_allocation: id");
    sizes.emplace_back(id, CheckBytes(L, 3, "resize_allocation: bytes"));
  }
  depgraph::Graph& g = MutableGraphOrRaise(L);
  ChargeWork(L, static_cast<int64_t>(g.memory_events().size()));
  RaiseIfError(L, transforms::ResizeAllocations(g, sizes));
  return 0;
}

// graph:allocate{bytes = n, at = task [, free_at = task, device = n,
// batch = bool]} -> id; device defaults to the GPU of `at`'s stream.
int GraphAllocate(lua_State* L) {
  CheckFields(L, 2, "allocate", {"bytes", "at", "free_at", "device", "batch"});
  if (lua_getfield(L, 2, "bytes") == LUA_TNIL) return luaL_error(L, "allocate: 'bytes' is required");
  const int64_t bytes = CheckBytes(L, -1, "allocate: bytes");
  if (lua_getfield(L, 2, "at") == LUA_TNIL) return luaL_error(L, "allocate: 'at' is required");
  const depgraph::TaskId at = CheckTask(L, -1);
  depgraph::TaskId free_at;
  if (lua_getfield(L, 2, "free_at") != LUA_TNIL) free_at = CheckTask(L, -1);
  depgraph::Graph& g = MutableGraphOrRaise(L);
  int32_t device = g.resource(g.resource_of(at)).device;
  if (lua_getfield(L, 2, "device") != LUA_TNIL) {
    device = CheckInt32(L, -1, "allocate: device");
  } else if (device < 0) {
    // A CPU task has no GPU: an allocation left on the host there by
    // default would count in no GPU's peak, unseen.
    Raise(L, absl::StrCat("allocate: 'at' (task ", at.value(),
                          ") is not on a GPU stream: give device = the GPU's ordinal, or -1 for "
                          "host memory"));
  }
  if (device < -1) Raise(L, "allocate: device must be a GPU ordinal or -1 (the host)");
  bool batch = false;
  if (lua_getfield(L, 2, "batch") != LUA_TNIL) {
    if (!lua_isboolean(L, -1)) {
      return luaL_error(L, "allocate: batch must be a boolean, got %s", luaL_typename(L, -1));
    }
    batch = lua_toboolean(L, -1);
  }
  ChargeMemory(L, 2 * kMemoryEventBytes);
  absl::StatusOr<uint32_t> id = transforms::Allocate(g, device, bytes, at, free_at, batch);
  RaiseIfError(L, id.status());
  lua_pushinteger(L, *id);
  return 1;
}

// graph:note_memory_estimate(why): the prediction's peak is an estimate
// because of what this script does not model (`why`, one line); `predict`'s
// peak line and JSON say it.
int GraphNoteMemoryEstimate(lua_State* L) {
  size_t n = 0;
  const char* why = luaL_checklstring(L, 2, &n);
  const std::string_view text(why, n);
  if (n == 0 || n > 400) Raise(L, "note_memory_estimate: give one line of 1 to 400 characters");
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20)
      Raise(L, "note_memory_estimate: give one line of text");
  }
  depgraph::Graph& g = MutableGraphOrRaise(L);
  // Bounded, so that checking a note against the earlier ones stays cheap.
  if (g.memory_estimate().size() + n > 4096) {
    Raise(L, "note_memory_estimate: the notes would pass 4096 characters");
  }
  ChargeMemory(L, static_cast<int64_t>(n) + 2);
  g.AddMemoryEstimate(text);
  return 0;
}

}  // namespace

void RegisterMemoryGraphMethods(lua_State* L) {
  // On the graph method table at the top of the stack.
  static const luaL_Reg kFns[] = {{"allocations", GraphAllocations},
                                  {"stash", GraphStash},
                                  {"allocate", GraphAllocate},
                                  {"resize_allocation", GraphResizeAllocation},
                                  {"note_memory_estimate", GraphNoteMemoryEstimate},
                                  {nullptr, nullptr}};
  SetBindings(L, kFns);
}

}  // namespace reverie::lua::internal
