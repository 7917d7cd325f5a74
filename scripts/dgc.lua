-- dgc.lua: Deep Gradient Compression (Lin et al., ICLR'18; Daydream §5.2):
-- data-parallel training that sends only the largest gradients.
--
-- Model (Daydream: "scale the duration of communication; insert the GPU tasks
-- of compression and decompression"). Per gradient bucket (as in ddp.lua,
-- lib/gradients.lua):
-- - a compression kernel (top-k selection by sampled threshold, momentum
--   correction, masking) on the compute stream right after the bucket is
--   ready; memory-bound, it streams the bucket `compress_passes` times:
--     compress_passes * bytes / gpu_memory_bandwidth;
-- - communication of the sparse gradient, values and 32-bit indices
--   (2 x density x bytes per worker), gathered from every worker with a ring
--   all-gather: (N - 1) * 2 * density * bytes / bandwidth + latency;
-- - a decompression kernel before the weight update that scatters the N
--   sparse gradients into a dense one: (N * 2 * density * bytes + bytes) /
--   gpu_memory_bandwidth.
-- Kernel durations come from the element-wise (memory-bound) throughput the
-- trace's own kernels achieve (the GPU table's bandwidth x their efficiency,
-- graph:cost_model().memory_gbs, or gpu_memory_gbs when given), not from a
-- DGC implementation; warm-up epochs with lower sparsity are not modelled.
-- Preconditions: a training trace (backward and update phases). A trace
-- that already ran data-parallel has its all-reduce kernels linked to their
-- Collective records, which size the buckets (lib/gradients.lua, source
-- "records"); this scheme replaces them: they take no time any more (their
-- recorded time includes waiting for the slowest rank, not modelled here).
local C = reverie.include("lib/common.lua")
local G = reverie.include("lib/gradients.lua")

local P = reverie.params(G.param_specs{
  workers = {default = 8, min = 1, integer = true, doc = "number of data-parallel workers"},
  bandwidth_gbps = {default = 10, min = 0.001, doc = "network bandwidth per worker in Gbit/s"},
  latency_us = {default = 10, min = 0, doc = "fixed cost of one collective in microseconds"},
  density = {default = 0.001, min = 0, max = 1,
             doc = "fraction of gradient values sent (DGC: 99.9% sparsity = 0.001)"},
  compress_passes = {default = 4, min = 0, doc = "passes of the compression kernel over a bucket"},
})

-- A trace that already ran data-parallel: this scheme replaces its recorded
-- all-reduces (lib/gradients.lua, source "records").
local plan = G.replacement_plan(graph, P)
local steps, source, total, how = plan.steps, plan.source, plan.total, plan.how
local mem_bps = G.memory_gbs(graph, P) * 1e9

local channel = graph:add_channel("sparse all-gather")
local edges, buckets, bucket_bytes, bucket_step = {}, 0, 0, nil
local recorded = source == "records" and G.recorded_allreduces(graph) or nil
for s, step in ipairs(steps) do
  local consumer = G.consumer(steps, s)
  for _, b in ipairs(G.step_buckets(graph, P, step, source, total, recorded) or {}) do
    local sparse = 2 * P.density * b.bytes
    local comp = graph:insert{kind = "kernel", name = "dgc_compress (top-k)", after = b.ready,
                              duration_ns = math.floor(P.compress_passes * b.bytes / mem_bps * 1e9 + 0.5)}
    local comm_ns = 0
    if P.workers > 1 then
      comm_ns = C.transfer_ns((P.workers - 1) * sparse, P.bandwidth_gbps, P.latency_us)
    end
    local ag = graph:insert{kind = "comm", name = "sparse all-gather", resource = channel,
                            bytes = math.floor(sparse), duration_ns = comm_ns,
                            step = b.ready.step, phase = "backward"}
    edges[#edges + 1] = {comp, ag, kind = "comm"}
    if consumer then
      local dec = graph:insert{kind = "kernel", name = "dgc_decompress (scatter-add)", before = consumer,
                               duration_ns = math.floor((P.workers * sparse + b.bytes) / mem_bps * 1e9 + 0.5)}
      edges[#edges + 1] = {ag, dec, kind = "comm"}
    end
    buckets = buckets + 1
    -- The gradients' size: the first step with buckets.
    bucket_step = bucket_step or s
    if s == bucket_step then bucket_bytes = bucket_bytes + b.bytes end
  end
end
graph:add_edges(edges)
reverie.log(string.format("%d buckets compressed to %.3g%% density; %d workers; gradients from %s%s",
                          buckets, P.density * 100, P.workers, source, how and (" (" .. how .. ")") or "") ..
            C.network_note(P.bandwidth_gbps) .. plan.note)
G.note_bucket_memory(graph, "dgc.lua", source, bucket_bytes, P.workers, " or its compression buffers")
