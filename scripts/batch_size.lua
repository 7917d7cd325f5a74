-- batch_size.lua: what if the batch were `factor` times larger (or smaller)?
--
--   reverie predict trace.json.gz --script batch_size --set factor=4
--
-- Model. The step's per-sample work grows with the batch, its per-step work
-- does not:
-- - Forward and backward kernels: their grids grow with the batch while a
--   kernel keeps its tile, so each runs ceil(blocks * factor) blocks; time
--   scales with whole waves on the trace's GPU (transforms/gpu_scaling.h
--   ScaleWork: W = resident blocks per SM x SMs, from the kernel's recorded
--   launch geometry and the GPU's occupancy limits). A kernel that stays
--   within one wave keeps its time: small kernels are latency-bound, which
--   is why a small model barely slows down with a larger batch. A kernel
--   without recorded geometry scales linearly.
-- - Copies in forward/backward (the input batch to the GPU, outputs back):
--   bytes scale; a copy takes max(its time, bytes * factor / bandwidth), at
--   `pageable_gbs` for pageable host memory and `pinned_gbs` for pinned
--   (PCIe 4.0 x16 carries ~25 GB/s pinned; a pageable copy goes through a
--   staging buffer at about half that). Device copies scale with the bytes.
-- - Weight-update kernels and copies keep their time (parameter-sized).
-- - CPU time keeps its time (an op's dispatch does not depend on the batch),
--   except loading the batch on the main thread (DataLoader with
--   num_workers=0, phase data_loading), which scales with the samples, and
--   `per_sample_framework`, the share of the framework (Python) time outside
--   ops that is per-sample host work of the training loop (metrics computed
--   on the host, Python over the outputs): 0 by default, since a trace does
--   not say which Python is per sample.
-- Ignores: libraries picking other kernels for other shapes (cuBLAS moves to
-- larger tiles at large sizes, which makes big GEMMs faster than wave
-- scaling says: expect overestimates there), weight-gradient GEMMs whose
-- grid is the weight's shape (their per-block work grows instead; wave
-- scaling then underestimates), memory limits (a batch that does not fit),
-- and the optimizer's change of learning dynamics (not a performance
-- question).
local G = reverie.include("lib/gpus.lua")

local P = reverie.params{
  factor = {default = 2, min = 0.001, doc = "new batch size / recorded batch size"},
  batch = {default = 0, min = 0, integer = true,
           doc = "recorded batch size (samples per step), for samples/s; 0 = unknown"},
  pageable_gbs = {default = 12.5, min = 0.001, doc = "host<->device copy bandwidth from pageable memory, GB/s"},
  pinned_gbs = {default = 25, min = 0.001, doc = "host<->device copy bandwidth from pinned memory, GB/s"},
  gpu = {default = "", doc = "the trace's GPU as a key of lib/gpus.lua when the trace lacks deviceProperties"},
  per_sample_framework = {default = 0, min = 0, max = 1,
                          doc = "share of framework time outside ops that grows with the batch"},
}

-- The trace's GPU: its deviceProperties, else lib/gpus.lua.
local function trace_gpu()
  local d = graph:devices()[1]
  if P.gpu ~= "" then return G.by_key(P.gpu) end
  if d and d.sm_count > 0 then
    local known = G.by_device_name(d.name)
    return {name = d.name, sm_count = d.sm_count,
            max_threads_per_sm = d.max_threads_per_sm > 0 and d.max_threads_per_sm or (known and known.max_threads_per_sm) or 0,
            max_blocks_per_sm = known and known.max_blocks_per_sm or 0,
            registers_per_sm = d.registers_per_sm > 0 and d.registers_per_sm or (known and known.registers_per_sm) or 0,
            shared_memory_per_sm_kb = d.shared_memory_per_sm_kb > 0 and d.shared_memory_per_sm_kb or
              (known and known.shared_memory_per_sm_kb) or 0}
  end
  error("the trace has no deviceProperties: give --set gpu=<key of lib/gpus.lua>")
end

local gpu = trace_gpu()
local phases = {"forward", "backward"}
local kernels = graph:select{kind = "kernel", phase = phases}
local st = kernels:scale_work{factor = P.factor, gpu = gpu}

local copies_before, copies_after = 0, 0
for t in graph:select{kind = "memcpy", phase = phases}:tasks() do
  local d0 = t.duration_ns
  local host = t.name:find("HtoD") or t.name:find("DtoH")
  local d
  if host and t.bytes > 0 then
    local gbs = t.name:find("Pageable") and P.pageable_gbs or P.pinned_gbs
    d = math.max(d0, t.bytes * P.factor / (gbs * 1e9) * 1e9)
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
if not graph:select{cpu_time = "framework", phase = "data_loading", name = "*SingleProcess*"}:empty() then
  loader:scale(P.factor)
end

reverie.log(string.format("batch x%g on %s: %d forward/backward kernels %.1f -> %.1f us " ..
                          "(%d stay within one wave, %d without geometry scaled linearly); " ..
                          "copies %.1f -> %.1f us; main-thread loading %.1f -> %.1f us",
                          P.factor, gpu.name or "the trace's GPU", st.kernels, st.before_ns / 1e3,
                          st.after_ns / 1e3, st.single_wave, st.unknown_geometry,
                          copies_before / 1e3, copies_after / 1e3, loader_before / 1e3,
                          loader:total_duration() / 1e3))
-- Each step now does `factor` times the samples: the prediction reads as
-- throughput too (a longer step can be a faster run).
reverie.work_per_step{factor = P.factor, samples = P.batch > 0 and P.batch or nil}
