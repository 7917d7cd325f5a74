-- async_copy.lua: what if device-to-host copies were non-blocking
-- (`tensor.to("cpu", non_blocking=True)`, pinned host buffers)?
--
-- The trace. A blocking `.to("cpu")` copies into pageable host memory and
-- then waits for the copy: a cudaMemcpyAsync whose copy ("Memcpy DtoH
-- (Device -> Pageable)") is followed by a cudaStreamSynchronize that blocks
-- the CPU until it ends (the builder's sync edges from the copy to the CPU
-- calls that waited, depgraph/builder_sync.cc). While the thread waits it
-- launches nothing, so the GPU work queued behind it starves.
--
-- Model, per device-to-host copy into pageable memory:
-- - the CPU no longer waits for it: its sync edges to CPU calls go, and the
--   synchronize calls that only waited for it are removed (their op, the
--   copy's aten::copy_, keeps its own CPU time, since it still issues the
--   copy);
-- - the copy goes to pinned memory (PyTorch allocates a pinned destination
--   for non-blocking device-to-host copies), at the cost model's pinned
--   rate for its direction (transforms/cost_model.h): fitted on the trace's
--   own pinned copies when it has some; else twice the rate the trace's
--   pageable copies of that direction achieved (a pageable copy is a copy
--   into a pinned staging buffer and the DMA, in turn), at most the host
--   link of the GPU table x its efficiency; `pinned_gbs` overrides it.
-- - host-to-device copies from pageable memory stay as they are
--   (non_blocking needs pinned sources: `pin_memory = true` makes them
--   asynchronous and pinned-speed too, as a DataLoader with pin_memory=True
--   would).
-- Preconditions: device-to-host copies into pageable memory (with
-- `pin_memory`, host-to-device ones too), else nothing to change; the
-- trace's GPU in the GPU table (else `gpu`, or `pinned_gbs`).
-- Ignores: the cost of allocating pinned memory (cached by PyTorch's pinned
-- allocator after the first step), synchronization the program needs before
-- it reads the copied data (add it where your code reads it), and other
-- streams' copies competing for the link and for host memory (a pageable
-- copy's staging slows when another copy runs).
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  pinned_gbs = {default = 0, min = 0, doc = "pinned host copy bandwidth in GB/s (0: from the model)"},
  pin_memory = {default = false, doc = "also make pageable host-to-device copies pinned and asynchronous"},
  gpu = {default = "", doc = "the trace's GPU as a key of the GPU table when the trace lacks deviceProperties"},
}
local gpu_key = P.gpu ~= "" and P.gpu or nil

local copies = graph:select{kind = "memcpy", name = {"DtoH", "HtoD"}}
local candidates = 0
for t in copies:tasks() do
  if t.name:find("Pageable") and (t.name:find("DtoH") or P.pin_memory) then candidates = candidates + 1 end
end
if candidates == 0 then
  reverie.nothing_to_change(P.pin_memory and "no host copy in pageable memory: nothing to make non-blocking" or
                            "no device-to-host copy into pageable memory: nothing to make non-blocking " ..
                            "(pin_memory=true also takes pageable host-to-device copies)")
end
local model = C.cost_model(graph, gpu_key)
-- The pinned copy's time: the model's, or bytes / pinned_gbs.
local function pinned_ns(t)
  if P.pinned_gbs > 0 then return t.bytes / P.pinned_gbs end
  local kind = t.name:find("DtoH") and "dtoh_pinned" or "htod_pinned"
  return graph:copy_ns(kind, t.bytes, {gpu = gpu_key})
end

local changed, syncs, before_ns, after_ns, kept = 0, 0, 0, 0, 0
local directions = {}  -- the model's rate names of the directions changed, for the log
local doomed = {}
for t in copies:tasks() do
  local pageable = t.name:find("Pageable")
  local d2h = t.name:find("DtoH")
  if pageable and (d2h or P.pin_memory) then
    local seen = {}
    for _, c in ipairs(t:children("sync")) do
      if (c.kind == "cpu_api" or c.kind == "cpu_work") and not seen[c.id] then
        seen[c.id] = true
        graph:remove_edge(t, c)
        if c.name:find("Synchronize") and #c:parents("sync") == 0 then doomed[#doomed + 1] = c end
      end
    end
    before_ns = before_ns + t.duration_ns
    if t.bytes > 0 then
      -- A pinned copy skips the staging a pageable one pays, so it is never
      -- slower than the copy it replaces, whatever the rate says.
      local d = math.floor(pinned_ns(t) + 0.5)
      if d > t.duration_ns then kept = kept + 1 else t.duration_ns = d end
    end
    after_ns = after_ns + t.duration_ns
    t.name = t.name:gsub("Pageable", "Pinned")
    changed = changed + 1
    directions[d2h and "dtoh_pinned" or "htod_pinned"] = true
  end
end
if #doomed > 0 then
  syncs = #doomed
  graph:remove(graph:from_tasks(doomed))
end
-- The rate of each direction that was changed, and where it came from.
local rates = {}
if P.pinned_gbs > 0 then
  rates[1] = string.format("%.1f GB/s given", P.pinned_gbs)
else
  for _, dir in ipairs{"dtoh_pinned", "htod_pinned"} do
    if directions[dir] then
      local r = model.copies[dir]
      rates[#rates + 1] = string.format("%s %.1f GB/s: %s",
                                        dir == "dtoh_pinned" and "device to host" or "host to device",
                                        r.gbs, r.from)
    end
  end
end
reverie.log(string.format("%d host copies made non-blocking into pinned memory (%s): " ..
                          "%.1f -> %.1f us; %d synchronize calls removed", changed,
                          table.concat(rates, "; "), before_ns / 1e3, after_ns / 1e3, syncs))
if kept > 0 then
  reverie.log(string.format("  %d of them kept their recorded time: the pinned rate would have made " ..
                            "them slower than the pageable copies the trace measured", kept))
end
