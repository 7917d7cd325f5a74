-- dataloader.lua: what if the DataLoader had `num_workers` worker processes,
-- or loaded each batch `speedup` times faster?
--
--   reverie predict trace.json.gz --script dataloader --set num_workers=4
--
-- The trace. With num_workers=0 the training loop loads each batch itself:
-- the profiler records it as `enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`
-- on the main thread, and the builder keeps that time as its own tasks, phase
-- data_loading (depgraph/builder_cpu_time.cc). L = their time per step is the
-- measured per-batch loading work.
--
-- Model (steady state of a prefetching pool, torch.utils.data):
-- - `speedup` K: each loading task takes L/K (a faster dataset, a cheaper
--   transform); works on any trace.
-- - `num_workers` N >= 1 on a single-process trace: N workers load batches in
--   parallel while the step runs, so a batch is ready every L/N on average;
--   the main thread waits only when the rest of its step, T_rest (the
--   baseline's simulated step time minus L), is shorter than that, and
--   always pays the fetch from the worker queue:
--       wait = max(fetch_us, L/N - T_rest)
--   per step, with L and T_rest of that step (the builder's step spans).
--   fetch_us is the main thread's cost to take a ready batch from the
--   workers (an inter-process queue get and unpickling the batch's shared-
--   memory tensor handles); its default is an order-of-magnitude estimate,
--   not a fit: set it from a trace with workers when you have one.
-- Ignores: the workers' CPU competing with the main thread for cores (a
-- real effect when cores are few), worker start-up (outside the profiled
-- steps), pin_memory's thread, prefetch_factor (the steady state does not
-- depend on it), batches that take longer than their mean (a slow batch can
-- still stall the loop), and GPU-side changes (none).
-- Preconditions: the trace records the DataLoader's time (an
-- enumerate(DataLoader)# annotation with op spans), else it refuses. A trace
-- already recorded with workers (`_MultiProcessingDataLoaderIter`) shows the
-- wait, not the loading work: num_workers is refused there, only `speedup`
-- applies. With the defaults (num_workers=0, speedup=1) nothing changes.
local P = reverie.params{
  num_workers = {default = 0, min = 0, integer = true,
                 doc = "DataLoader worker processes (0: keep the trace's loader)"},
  speedup = {default = 1, min = 0.001, doc = "per-batch loading time divided by this"},
  fetch_us = {default = 50, min = 0,
              doc = "main-thread cost of taking a ready batch from the worker queue"},
}

local loader = graph:select{cpu_time = "framework", phase = "data_loading"}
if loader:empty() then
  reverie.refuse("the trace records no DataLoader time (no enumerate(DataLoader) annotation with " ..
                 "op spans): record with torch.profiler and iterate the DataLoader inside the " ..
                 "profiled steps")
end
local multi = graph:facts().dataloader.mode == "worker processes"
if P.num_workers > 0 and multi then
  reverie.refuse("the trace's DataLoader already uses worker processes " ..
                 "(_MultiProcessingDataLoaderIter): its main-thread time is the wait for them, " ..
                 "not the loading work; use a num_workers=0 trace, or only --set speedup")
end
if P.num_workers == 0 and P.speedup == 1 then
  reverie.nothing_to_change("num_workers=0 and speedup=1 keep the trace's loader (--set " ..
                            "num_workers=N or speedup=K)")
end

-- Per step: loading time L and the baseline step time.
local tl = graph:simulate()
local load = {}
for t in loader:tasks() do load[t.step] = (load[t.step] or 0) + t.duration_ns end

local before, after = 0, 0
for t in loader:tasks() do
  local d = t.duration_ns / P.speedup
  if P.num_workers > 0 then
    local it = tl.steps[t.step + 1]
    local L = (load[t.step] or 0) / P.speedup
    local rest = it and (it.duration_ns - (load[t.step] or 0)) or 0
    -- This task's share of the step's wait (a step usually has one).
    local share = t.duration_ns / math.max(1, load[t.step] or 1)
    local wait = math.max(P.fetch_us * 1e3, L / P.num_workers - rest)
    d = wait * share
  end
  before = before + t.duration_ns
  t.duration_ns = math.floor(d + 0.5)
  after = after + t.duration_ns
end
local steps = math.max(1, graph:step_count())
reverie.log(string.format("main-thread loading per step %.1f -> %.1f us (%d DataLoader tasks; " ..
                          "num_workers=%d, speedup=%g)", before / steps / 1e3, after / steps / 1e3,
                          #loader, P.num_workers, P.speedup))
