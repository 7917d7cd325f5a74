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
-- Preconditions (graph:facts().distributed and the recorded collectives):
-- a training trace (backward and update phases) for inserted all-reduces;
-- a trace that already communicates is re-timed, never given a second set
-- of all-reduces (below), and refused in one line when it records neither
-- its world size nor its collectives' group size (give measured_workers);
-- refused when it communicates without a backward pass (facts'
-- data_parallel.inference): a tensor-parallel inference's collectives carry
-- activations, not the gradients DDP all-reduces; refused when none of its
-- communication kernels is an all-reduce (send/recv of an all-to-all
-- scales by a rule of its own), and other collectives beside all-reduces are
-- left as recorded, the log counting them. With workers = 1 the
-- all-reduces take no time and the step is unchanged.
--
-- Assumptions: every worker is as fast as the profiled one (no stragglers);
-- the network, not the GPU, bounds a collective (Daydream measured NCCL 34%
-- slower than this formula when it competes with kernels, §6.5: raise
-- `latency_us` or lower `bandwidth_gbps` to account for it); gradient copies
-- into buckets are not timed.
-- Memory: the buckets DDP's reducer holds (the gradients' size, unless
-- `bucket_view`: gradient_as_bucket_view=True) are allocated from the first
-- step on the trace's GPU when the script adds the all-reduces for more
-- than one worker (a trace that recorded its own already holds them).
--
-- Traces that already communicate. A trace recorded with data parallelism
-- holds the NCCL / RCCL kernels of its collectives on their own stream
-- (class "communication", depgraph/kernel_class.h). Adding all-reduces would count communication
-- twice, so then nothing is inserted and each recorded all-reduce kernel is
-- re-timed instead. Recorded with N0 workers (`measured_workers`, default the
-- trace's distributed world size, else its collectives' group size), a kernel
-- of measured duration d0 is
--     d0 = t_fixed + 2 (N0 - 1) / N0 * bytes / bw0
-- with t_fixed = min(latency_us, d0). For N workers it becomes
--     t_fixed + 2 (N - 1) / N * bytes / bandwidth_gbps
-- (0 for one worker). With bandwidth_gbps = 0 ("as measured") the network
-- is the recorded one and the transfer part just scales by the ring factor,
-- (d0 - t_fixed) * [2(N-1)/N] / [2(N0-1)/N0]: bytes are not needed and
-- workers = N0 reproduces the trace. With a bandwidth given, bytes come from
-- the trace's sized all-reduce Collective records (in_nelems x element
-- size) of the call that launched each kernel (graph:collectives(), c.kernel:
-- RCCL's and NCCL 2.19's ncclDevKernel_Generic say nothing by name), else
-- matched to the kernels in measured order when both counts agree; else they
-- are inferred from the kernel as (d0 - t_fixed) * measured_bandwidth_gbps /
-- [2(N0-1)/N0]. Bandwidths are NCCL bus bandwidths in Gbit/s. Other
-- collectives (broadcast, all-gather, ...) keep their measured time.
local C = reverie.include("lib/common.lua")
local G = reverie.include("lib/gradients.lua")

local P = reverie.params(G.param_specs{
  workers = {default = 1, min = 1, integer = true, doc = "number of data-parallel workers (GPUs)"},
  bandwidth_gbps = {default = 0, min = 0,
                    doc = "network bandwidth per worker in Gbit/s (Daydream evaluated 10-40); " ..
                      "0 = as measured on a trace with NCCL kernels, else the GPU's peer link " ..
                      "from the GPU table (NVLink / Infinity Fabric, else PCIe)"},
  latency_us = {default = 10, min = 0, doc = "fixed cost of one all-reduce in microseconds"},
  measured_workers = {default = 0, min = 0, integer = true,
                      doc = "workers the trace was recorded with when it has NCCL kernels; " ..
                        "0 = its world size, else its collectives' group size"},
  measured_bandwidth_gbps = {default = 0, min = 0,
                             doc = "bus bandwidth the recorded all-reduces ran at, used to infer " ..
                               "their bytes when the trace has no all-reduce Collective records; " ..
                               "0 = the GPU's peer link from the GPU table"},
  bucket_view = G.BUCKET_VIEW_SPEC,
})

local dp = graph:facts().data_parallel
if dp.used and dp.inference then
  reverie.refuse(string.format("the trace's %d ranks communicate without a backward pass: their " ..
                               "collectives are a model-parallel job's (tensor, pipeline), not the " ..
                               "gradient all-reduces of data parallelism", dp.world_size))
end

-- The bus bandwidth the recorded all-reduces ran at (Gbit/s): given, else
-- the GPU's peer link.
local function measured_gbps()
  if P.measured_bandwidth_gbps > 0 then return P.measured_bandwidth_gbps end
  return (C.peer_link_gbps(graph, P.gpu ~= "" and P.gpu or nil))
end

-- Re-times the recorded all-reduce kernels for P.workers (header: model).
local function retime_recorded(comm)
  local colls, n0 = {}, P.measured_workers
  -- Bytes of each recorded all-reduce kernel from the framework's record of
  -- the call that launched it (c.kernel; transforms/collectives.h).
  local bytes_of = {}
  if n0 == 0 then n0 = graph:world_size() end
  for _, c in ipairs(graph:collectives()) do
    -- Unsized records (the NCCL annotation beside a sized call) say nothing.
    if c.collective == "AllReduce" and c.bytes > 0 then
      colls[#colls + 1] = c
      if c.kernel then bytes_of[c.kernel.id] = c.bytes end
      if n0 == 0 and c.group_size > 1 then n0 = c.group_size end
    end
  end
  if n0 < 2 then
    reverie.refuse("the trace has communication kernels but records no world size or group " ..
                   "size; give it with --set measured_workers=N")
  end
  local kernels, others = {}, {}
  for k in comm:tasks() do
    if k.collective == "AllReduce" then
      kernels[#kernels + 1] = k
    else
      others[k.collective] = (others[k.collective] or 0) + 1
    end
  end
  local other_names = {}
  for name, n in pairs(others) do other_names[#other_names + 1] = string.format("%d %s", n, name) end
  table.sort(other_names)
  -- Send/recv and all-to-all (embedding exchanges, pipeline stages) scale
  -- with the workers by rules of their own: left as recorded, and said so.
  if #kernels == 0 then
    reverie.refuse(string.format("the trace's communication kernels are no all-reduce (%s): " ..
                                 "ddp.lua re-times data-parallel gradient all-reduces only",
                                 table.concat(other_names, ", ")))
  end
  table.sort(kernels, function(a, b)
    if a.measured_start_ns ~= b.measured_start_ns then return a.measured_start_ns < b.measured_start_ns end
    return a.id < b.id
  end)
  local matched = #colls == #kernels
  local f0, f = C.ring_factor(n0), C.ring_factor(P.workers)
  local before, after, sized = 0, 0, 0
  for i, k in ipairs(kernels) do
    local d0 = k.duration_ns
    local fixed = math.min(P.latency_us * 1e3, d0)
    local transfer
    if P.workers <= 1 then
      fixed, transfer = 0, 0
    elseif P.bandwidth_gbps == 0 then
      transfer = (d0 - fixed) * f / f0
    else
      local bytes = bytes_of[k.id] or (matched and colls[i].bytes or nil)
      if bytes then sized = sized + 1 end
      bytes = bytes or (d0 - fixed) * 1e-9 * measured_gbps() * 1e9 / 8 / f0
      transfer = f * bytes * 8 / (P.bandwidth_gbps * 1e9) * 1e9
    end
    k.duration_ns = math.floor(fixed + transfer + 0.5)
    before, after = before + d0, after + k.duration_ns
  end
  reverie.log(string.format("trace recorded with %d workers: %d communication kernels, none " ..
                            "inserted; %d all-reduce kernels re-timed for %d workers (%s), " ..
                            "%.1f -> %.1f ms%s", n0, #comm, #kernels, P.workers,
                            P.bandwidth_gbps == 0 and "network as measured" or
                              string.format("%g Gbit/s, %d of them sized by Collective records",
                                            P.bandwidth_gbps, sized),
                            before / 1e6, after / 1e6,
                            #other_names > 0 and "; left as recorded: " .. table.concat(other_names, ", ")
                              or ""))
end

local recorded = graph:select{kind = "kernel", class = "communication"}
if not recorded:empty() then
  retime_recorded(recorded)
  return
end
local bandwidth_gbps, link_note = P.bandwidth_gbps, string.format("%g Gbit/s given", P.bandwidth_gbps)
if bandwidth_gbps <= 0 then
  local how
  bandwidth_gbps, how = C.peer_link_gbps(graph, P.gpu ~= "" and P.gpu or nil)
  link_note = string.format("%.0f Gbit/s: %s", bandwidth_gbps, how)
end

local steps = C.steps(graph)
local source = G.source(graph)
local total, how = nil, nil
if source == "estimate" then total, how = G.estimate_total(graph, P, steps) end

local channel = graph:add_channel("allreduce (NCCL ring)")
local inserted, bytes_per_step = 0, nil
local recorded = source == "records" and G.recorded_allreduces(graph) or nil
for s, step in ipairs(steps) do
  local buckets = G.step_buckets(graph, P, step, source, total, recorded)
  local consumer = G.consumer(steps, s)
  if buckets then
    local sum = 0
    for _, b in ipairs(buckets) do
      local ar = graph:insert{kind = "comm", name = string.format("allreduce bucket %d", b.index),
                              resource = channel, bytes = math.floor(b.bytes),
                              duration_ns = C.ring_allreduce_ns(b.bytes, P.workers,
                                                                bandwidth_gbps, P.latency_us),
                              phase = "backward", step = b.ready.step}
      graph:add_edge(b.ready, ar, {kind = "comm"})
      if consumer then graph:add_edge(ar, consumer, {kind = "comm"}) end
      inserted = inserted + 1
      sum = sum + b.bytes
    end
    bytes_per_step = bytes_per_step or sum
  end
end

reverie.log(string.format("%d steps, %d all-reduces over %s; gradients from %s%s; %.1f MiB per step",
                          #steps, inserted, link_note, source, how and (" (" .. how .. ")") or "",
                          (bytes_per_step or 0) / G.MB))
local bucket_line = G.add_bucket_memory(graph, P, steps, source, bytes_per_step, P.workers)
if bucket_line then reverie.log(bucket_line) end
