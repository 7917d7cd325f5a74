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
--   for non-blocking device-to-host copies), which runs at pinned speed:
--   bytes / pinned bandwidth, where pinned bandwidth = `pinned_speedup` x
--   the fastest host copy the trace itself measured (pageable copies stage
--   through a pinned buffer and reach about half the link's rate), or
--   `pinned_gbs` when given.
-- - host-to-device copies from pageable memory stay as they are
--   (non_blocking needs pinned sources: `pin_memory = true` makes them
--   asynchronous and pinned-speed too, as a DataLoader with pin_memory=True
--   would).
-- Ignores: the cost of allocating pinned memory (cached by PyTorch's pinned
-- allocator after the first step), synchronization the program needs before
-- it reads the copied data (add it where your code reads it), and other
-- streams' copies competing for the link.
local P = reverie.params{
  pinned_speedup = {default = 2, min = 1, doc = "pinned vs the trace's fastest pageable host copy bandwidth"},
  pinned_gbs = {default = 0, min = 0, doc = "pinned host copy bandwidth in GB/s (0: from the trace)"},
  pin_memory = {default = false, doc = "also make pageable host-to-device copies pinned and asynchronous"},
}

local copies = graph:select{kind = "memcpy", name = {"DtoH", "HtoD"}}
local candidates = 0
for t in copies:tasks() do
  if t.name:find("Pageable") and (t.name:find("DtoH") or P.pin_memory) then candidates = candidates + 1 end
end
if candidates == 0 then
  reverie.log("no device-to-host copy into pageable memory: nothing to make non-blocking")
  return
end
local fastest = 0
for t in copies:tasks() do
  if t.bytes > 0 and t.duration_ns > 0 then
    fastest = math.max(fastest, t.bytes / t.duration_ns)  -- bytes per ns = GB/s
  end
end
local pinned = P.pinned_gbs > 0 and P.pinned_gbs or fastest * P.pinned_speedup
if pinned <= 0 then
  error("the trace's host copies record no sizes: give --set pinned_gbs=<GB/s>")
end

local changed, syncs, before_ns, after_ns = 0, 0, 0, 0
local doomed = {}
for t in copies:tasks() do
  local pageable = t.name:find("Pageable")
  local d2h = t.name:find("DtoH")
  if pageable and (d2h or P.pin_memory) then
    local seen = {}
    for _, c in ipairs(t:children("sync")) do
      if c.kind == "cpu_api" and not seen[c.id] then
        seen[c.id] = true
        graph:remove_edge(t, c)
        if c.name:find("Synchronize") and #c:parents("sync") == 0 then doomed[#doomed + 1] = c end
      end
    end
    before_ns = before_ns + t.duration_ns
    if t.bytes > 0 then t.duration_ns = math.floor(t.bytes / pinned + 0.5) end
    after_ns = after_ns + t.duration_ns
    t.name = t.name:gsub("Pageable", "Pinned")
    changed = changed + 1
  end
end
if #doomed > 0 then
  syncs = #doomed
  graph:remove(graph:from_tasks(doomed))
end
reverie.log(string.format("%d host copies made non-blocking into pinned memory (%.1f GB/s): " ..
                          "%.1f -> %.1f us; %d synchronize calls removed",
                          changed, pinned, before_ns / 1e3, after_ns / 1e3, syncs))
