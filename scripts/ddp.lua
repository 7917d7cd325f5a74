-- ddp.lua: data-parallel training with PyTorch DistributedDataParallel
-- (Daydream §5.1 "Distributed Training", evaluated in §6.5).
--
-- Model. Each worker runs the profiled single-GPU step unchanged; DDP adds one
-- all-reduce per gradient bucket. An all-reduce is a task on a communication
-- channel (one at a time, NCCL runs collectives of a process group in
-- order), issued as soon as the backward of the bucket's last layer is done
-- (wait-free backpropagation, the bucket's "ready" GPU task -> all-reduce
-- edge), and the step's weight update waits for every all-reduce of the step
-- (all-reduce -> first update GPU task edge). An all-reduce takes the ring
-- time
--     2 (N - 1) / N * bytes / bandwidth + latency
-- (N = workers; NCCL's bus-bandwidth convention, the formula Daydream uses
-- from [57]); with one worker there is no communication and the step is
-- unchanged.
--
-- Buckets come from the trace's GradientBucket records when present, else
-- from Parameter records packed into `bucket_mb` buckets in backward order,
-- else from an estimate of the gradient size (lib/gradients.lua explains each
-- source and its assumptions).
--
-- Assumptions: every worker is as fast as the profiled one (no stragglers);
-- the network, not the GPU, bounds a collective (Daydream measured NCCL 34%
-- slower than this formula when it competes with kernels, §6.5: raise
-- `latency_us` or lower `bandwidth_gbps` to account for it); gradient copies
-- into buckets are not modelled.
local C = reverie.include("lib/common.lua")
local G = reverie.include("lib/gradients.lua")

local P = reverie.params(G.param_specs{
  workers = {default = 1, min = 1, integer = true, doc = "number of data-parallel workers (GPUs)"},
  bandwidth_gbps = {default = 25, min = 0.001,
                    doc = "network bandwidth per worker in Gbit/s (Daydream evaluated 10-40)"},
  latency_us = {default = 10, min = 0, doc = "fixed cost of one all-reduce in microseconds"},
})

local steps = C.steps(graph)
local source = G.source(graph)
local total, how = nil, nil
if source == "estimate" then total, how = G.estimate_total(graph, P, steps) end

local channel = graph:add_channel("allreduce (NCCL ring)")
local inserted, bytes_per_step = 0, nil
for s, step in ipairs(steps) do
  local buckets = G.step_buckets(graph, P, step, source, total)
  local consumer = G.consumer(steps, s)
  if buckets then
    local sum = 0
    for _, b in ipairs(buckets) do
      local ar = graph:insert{kind = "comm", name = string.format("allreduce bucket %d", b.index),
                              resource = channel, bytes = math.floor(b.bytes),
                              duration_ns = C.ring_allreduce_ns(b.bytes, P.workers,
                                                                P.bandwidth_gbps, P.latency_us),
                              phase = "backward", iteration = b.ready.iteration}
      graph:add_edge(b.ready, ar, {kind = "comm"})
      if consumer then graph:add_edge(ar, consumer, {kind = "comm"}) end
      inserted = inserted + 1
      sum = sum + b.bytes
    end
    bytes_per_step = bytes_per_step or sum
  end
end

reverie.log(string.format("%d steps, %d all-reduces; gradients from %s%s; %.1f MiB per step",
                          #steps, inserted, source, how and (" (" .. how .. ")") or "",
                          (bytes_per_step or 0) / G.MB))
