-- batch_size.lua: what if the batch were `factor` times larger (or smaller)?
--
--   reverie predict trace.json.gz --script batch_size --set factor=4
--
-- Model. The step's per-sample work grows with the batch, its per-step work
-- does not:
-- - Forward and backward kernels: their work (FLOPs and bytes, from the
--   ops' recorded shapes) grows `factor` times, and the cost model
--   (transforms/cost_model.h, docs/LUA_API.md "The hardware model") retimes
--   them: time = fixed + slope x roofline, with the efficiency curve of
--   each kernel class fitted on the trace's own kernels (a bigger GEMM runs
--   closer to peak, a small one is mostly fixed cost) and wave quantization
--   of the grid, whose blocks grow with the work (the tile kept). A kernel
--   whose op recorded no shapes is placed on its class's curve by its own
--   time and scaled the same way.
-- - Copies in forward/backward (the input batch to the GPU, outputs back):
--   bytes scale; a copy keeps its recorded time plus the model's time for
--   the bytes added (or less that of the bytes taken away, keeping at least
--   its share of the recorded time), the model's for its kind (host to
--   device or back, pageable or pinned: fitted on the trace's copies against
--   the GPU's host link from the table; a pageable copy at most half a
--   pinned one), so factor 1 changes nothing; `pageable_gbs` / `pinned_gbs`
--   set the rate outright instead. Device copies scale with the
--   bytes.
-- - Weight-update kernels and copies keep their time (parameter-sized).
-- - CPU time keeps its time (an op's dispatch does not depend on the batch),
--   except loading the batch on the main thread (DataLoader with
--   num_workers=0, phase data_loading), which scales with the samples, and
--   `per_sample_framework`, the share of the framework (Python) time outside
--   ops that is per-sample host work of the training loop (metrics computed
--   on the host, Python over the outputs, freeing the batch's shared
--   memory): 0 by default, since a trace does not say which Python is per
--   sample.
-- - Freeing the host buffer of each batch (the tensor a host-to-device copy
--   read, dropped when `x = x.to(device)` rebinds it; with DataLoader
--   workers it is shared memory, unmapped page by page): the CPU time before
--   each such free grows with its bytes, at the rate the trace's own frees
--   give (fixed + bytes / rate, fitted when they come in two sizes or more;
--   transforms/host_memory.h). Needs `profile_memory=True`; otherwise, or
--   with `release_per_byte=false`, that time is kept.
-- Memory: the GPU allocations of the batch's tensors (the sizes of the ops'
-- recorded inputs that are not parameters) grow `factor` times; parameters,
-- their gradients, optimizer state and library workspaces keep their sizes
-- (transforms/memory_scale.h); `predict` prints the predicted peak and
-- whether it fits the GPU. Without recorded shapes the allocations the
-- forward and backward freed again grow instead, and the peak says it is
-- an estimate (likely high); with neither shapes nor tied frees it says the
-- peak is not predicted.
-- Preconditions: none on what the run does (any batch can change); the
-- trace's GPU in the GPU table (else `gpu`), which the cost model needs;
-- refused when no kernel ran in a forward or backward phase (a trace that
-- captured no GPU activity, or no span says which phase ran what): a batch
-- whose GPU work is unknown would grow for free.
-- Ignores: libraries picking other kernels for other shapes beyond what the
-- efficiency curve captures, weight-gradient GEMMs whose grid is the
-- weight's shape (the model grows their grid too), memory limits (a batch
-- that does not fit), and the optimizer's change of learning dynamics (not a
-- performance question).
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  factor = {default = 2, min = 0.001, doc = "new batch size / recorded batch size"},
  batch = {default = 0, min = 0, integer = true,
           doc = "recorded batch size (samples per step), for samples/s; 0 = unknown"},
  pageable_gbs = {default = 0, min = 0,
                  doc = "host<->device copy bandwidth from pageable memory, GB/s; 0 = from the model"},
  pinned_gbs = {default = 0, min = 0,
                doc = "host<->device copy bandwidth from pinned memory, GB/s; 0 = from the model"},
  gpu = {default = "", doc = "the trace's GPU as a key of the GPU table (reverie.gpus()) when the " ..
           "trace lacks deviceProperties"},
  per_sample_framework = {default = 0, min = 0, max = 1,
                          doc = "share of framework time outside ops that grows with the batch"},
  release_per_byte = {default = true,
                      doc = "scale the time before each host free of a copied batch by its bytes"},
}

local gpu_key = P.gpu ~= "" and P.gpu or nil
-- Read before the copies grow: a batch free is known by its copy's bytes.
local frees = graph:batch_frees()
local model = C.cost_model(graph, gpu_key)
local phases = {"forward", "backward"}
local kernels = graph:select{kind = "kernel", phase = phases}
-- Without the step's GPU work a larger batch would cost nothing more: a
-- throughput that doubles for free is no answer.
if kernels:empty() then
  local no_kernels = C.no_gpu_kernels(graph)
  reverie.refuse(no_kernels and no_kernels .. ": a larger batch's GPU work cannot be predicted"
                 or "no kernel ran in a forward or backward phase (no ProfilerStep, module or " ..
                    "autograd spans say which): nothing to scale")
end
-- The batch the graph runs before and after this change, as multiples of
-- the trace's (an earlier batch_size.lua in the run changed it): kernels,
-- copies, frees and memory are functions of it, so changes compose.
local before_batch = graph:batch()
local after_batch = before_batch * P.factor
local st = kernels:retime{work = P.factor, gpu = gpu_key}

-- A copy's kind as the model names it.
local function copy_kind(name)
  local pinned = name:find("Pinned") ~= nil
  if name:find("HtoD") then return pinned and "htod_pinned" or "htod_pageable" end
  if name:find("DtoH") then return pinned and "dtoh_pinned" or "dtoh_pageable" end
  if name:find("DtoD") then return "dtod" end
  return nil
end

local copies_before, copies_after = 0, 0
for t in graph:select{kind = "memcpy", phase = phases}:tasks() do
  local d0 = t.duration_ns
  local kind = copy_kind(t.name)
  local bytes = t.bytes * P.factor
  local d
  if kind and t.bytes > 0 then
    local gbs = kind:find("pageable") and P.pageable_gbs or P.pinned_gbs
    if kind ~= "dtod" and gbs > 0 then
      d = bytes / gbs
    else
      -- The recorded copy plus the model's time for the bytes added (or
      -- less the bytes taken away): what was measured stays a fact, and
      -- factor 1 leaves it as measured. Not the recorded time scaled by the
      -- model's ratio: a small copy's measured rate is the driver's
      -- small-copy path (B1: 131 KB in 6-8 us, 20 GB/s), not a large one's
      -- (16.9 MB in 1.57 ms, 10.8 GB/s). A copy smaller than the trace's
      -- keeps at least its share of that time (the model's rate may be
      -- slower than the measured one). As a function of the total batch
      -- F: T(F) = T1 + added(F), and at least T1 x F below 1; T1, the copy
      -- at the trace's batch, is recovered from the time it has now (after
      -- an earlier batch change, or another script's change to it), so
      -- changes compose: x2 then x0.5 gives the copy it had.
      local recorded = t.bytes / before_batch
      local at_recorded = graph:copy_ns(kind, recorded, {gpu = gpu_key})
      local function added(f) return graph:copy_ns(kind, recorded * f, {gpu = gpu_key}) - at_recorded end
      local t1 = d0 - added(before_batch)
      if before_batch < 1 then t1 = math.min(d0 / before_batch, t1) end
      d = t1 + added(after_batch)
      if after_batch < 1 then d = math.max(d, t1 * after_batch) end
    end
    -- A copy of more bytes never gets faster, nor one of fewer slower.
    if P.factor >= 1 then d = math.max(d0, d) else d = math.min(d0, d) end
  else
    d = d0 * P.factor
  end
  t.duration_ns = math.floor(d + 0.5)
  t.bytes = math.floor(t.bytes * P.factor + 0.5)
  copies_before, copies_after = copies_before + d0, copies_after + t.duration_ns
end

local framework_before, framework_after = 0, 0
if P.per_sample_framework > 0 then
  local fw = graph:select{cpu_time = "framework"} - graph:select{phase = "data_loading"}
  framework_before = fw:total_duration()
  for t in fw:tasks() do
    t.duration_ns = math.floor(t.duration_ns * (1 - P.per_sample_framework +
                                                 P.per_sample_framework * P.factor) + 0.5)
  end
  framework_after = fw:total_duration()
end

local loader = graph:select{cpu_time = "framework", phase = "data_loading"}
local loader_before = loader:total_duration()
local loader_scaled = not graph:select{cpu_time = "framework", phase = "data_loading",
                                       name = "*SingleProcess*"}:empty()
if loader_scaled then loader:scale(P.factor) end

-- Freeing each batch's host buffer (the tensor a host-to-device copy read,
-- dropped when `x = x.to(device)` rebinds it): CPU time before the free that
-- grows with its bytes, by the line the trace's own frees give
-- (transforms/host_memory.h). Not modelled when the trace does not record
-- host memory (profile_memory) or its frees come in one size.
local release_before, release_after = 0, 0
if frees.calibrated and P.release_per_byte then
  -- The stretch before a free as a function of the total batch F (the
  -- trace's, at F = 1, plus the line's time for the bytes added, at least
  -- 0), so changes compose like the copies above.
  for _, f in ipairs(frees.frees) do
    local t = f.task
    if not (loader_scaled and t.phase == "data_loading") then
      local function stretch(batch)
        return math.max(0, f.stretch_ns + frees.ns_per_byte * f.bytes * (batch - 1))
      end
      local was, now = stretch(before_batch), stretch(after_batch)
      release_before = release_before + was
      release_after = release_after + now
      t.duration_ns = math.max(0, math.floor(t.duration_ns - was + now + 0.5))
    end
  end
end

reverie.log(string.format("batch x%g on %s: %d forward/backward kernels %.1f -> %.1f us " ..
                          "(%d with work from recorded shapes, the rest from their class's " ..
                          "curve); copies %.1f -> %.1f us; main-thread loading %.1f -> %.1f us",
                          P.factor, C.runs_on(graph, gpu_key), st.kernels, st.before_ns / 1e3, st.after_ns / 1e3,
                          st.with_work, copies_before / 1e3, copies_after / 1e3,
                          loader_before / 1e3, loader:total_duration() / 1e3))
if frees.calibrated and not P.release_per_byte then
  reverie.log(string.format("freeing the batches' host buffers: kept (%d frees; release_per_byte=false)",
                            #frees.frees))
elseif frees.calibrated then
  reverie.log(string.format("freeing the batches' host buffers (%d frees): %.1f -> %.1f us, " ..
                            "at %.1f us + %.3f ns/byte fitted on the trace's %d frees (an estimate)",
                            #frees.frees, release_before / 1e3, release_after / 1e3,
                            frees.fixed_ns / 1e3, frees.ns_per_byte, frees.samples))
elseif #frees.frees > 0 then
  reverie.log(string.format("freeing the batches' host buffers: kept (%d frees, one size: " ..
                            "no per-byte cost to calibrate)", #frees.frees))
end
-- Memory (the header's model): the prediction's peak is the replay of the
-- resized allocations in the simulated order (depgraph/memory_replay.h).
local mem = graph:scale_batch_memory(P.factor, {gpu = gpu_key})
if mem.scaled + mem.kept > 0 then
  reverie.log(string.format("memory: %d GPU allocations of batch tensors%s %.2f -> %.2f MiB, %d kept " ..
                            "(%d batch-tensor sizes recorded)%s", mem.scaled,
                            mem.made_by_scripts > 0 and string.format(" (%d made by earlier scripts)",
                              mem.made_by_scripts) or "",
                            mem.bytes_before / 2^20, mem.bytes_after / 2^20, mem.kept, mem.batch_sizes,
                            mem.frees_by_size > 0 and string.format("; %d frees the trace does not tie " ..
                              "to their allocation (no addresses) paired by size", mem.frees_by_size) or ""))
  if mem.estimated then
    reverie.log(mem.scaled > 0 and
                "memory: an estimate, likely high: no op recorded its input shapes (record_shapes), so " ..
                "the allocations the forward and backward freed again stand for the batch's tensors" or
                "memory: not predicted: no input shapes and no free tied to its allocation")
  end
end
-- Later retimes (another batch change, amp.lua) scale work from this batch.
graph:set_batch(after_batch)
-- Each step now does `factor` times the samples: the prediction reads as
-- throughput too (a longer step can be a faster run).
reverie.work_per_step{factor = P.factor, samples = P.batch > 0 and P.batch or nil}
