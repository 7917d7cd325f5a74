-- blueconnect.lua: BlueConnect (Cho et al., SysML'19; Daydream §5.2):
-- hierarchical all-reduce decomposed into reduce-scatter and all-gather
-- stages on parallel communication channels.
--
-- Model. N = nodes x gpus_per_node workers. Each gradient bucket (as in
-- ddp.lua, lib/gradients.lua) is all-reduced in three stages instead of one
-- flat ring:
--   1. reduce-scatter inside each node over the fast link:
--        (g - 1) / g * bytes / intra_bandwidth
--   2. all-reduce of each GPU's 1/g shard across nodes, the g shards on g
--      parallel channels that share the node's network bandwidth:
--        2 (n - 1) / n * (bytes / g) / (inter_bandwidth / g)
--   3. all-gather inside each node: (g - 1) / g * bytes / intra_bandwidth
-- (ring formulas of [57], as Daydream estimates them). Each stage runs on its
-- own channel, so stage 1 of one bucket overlaps stage 2 of the previous one;
-- the weight update waits for every bucket's all-gather.
-- Memory: as ddp.lua, the buckets DDP's reducer holds (the gradients' size,
-- unless `bucket_view`) from the first step, where the script adds them.
-- Assumptions: identical nodes; each stage is bandwidth-bound plus
-- `latency_us`; no contention between the intra-node stages and compute.
-- Preconditions: a training trace (backward and update phases). A trace
-- that already ran data-parallel has its all-reduce kernels linked to their
-- Collective records, which size the buckets (lib/gradients.lua, source
-- "records"); this scheme replaces them: they take no time any more (their
-- recorded time includes waiting for the slowest rank, not modelled here).
local C = reverie.include("lib/common.lua")
local G = reverie.include("lib/gradients.lua")

local P = reverie.params(G.param_specs{
  nodes = {default = 2, min = 1, integer = true, doc = "machines"},
  gpus_per_node = {default = 4, min = 1, integer = true, doc = "GPUs (workers) per machine"},
  intra_gbps = {default = 0, min = 0,
                doc = "intra-node link bandwidth in Gbit/s; 0 = the GPU's peer link from the GPU table " ..
                  "(NVLink / Infinity Fabric, else PCIe)"},
  inter_gbps = {default = 10, min = 0.001, doc = "network bandwidth per machine in Gbit/s"},
  latency_us = {default = 10, min = 0, doc = "fixed cost of each stage in microseconds"},
  bucket_view = G.BUCKET_VIEW_SPEC,
})

local n, g = P.nodes, P.gpus_per_node
local intra_gbps, intra_note = P.intra_gbps, "given"
if intra_gbps <= 0 and g > 1 then intra_gbps, intra_note = C.peer_link_gbps(graph, P.gpu ~= "" and P.gpu or nil) end
local function ns(seconds) return math.floor(seconds * 1e9 + P.latency_us * 1e3 + 0.5) end
local function rs_ag(bytes)  -- one intra-node reduce-scatter or all-gather
  if g <= 1 then return 0 end
  return ns((g - 1) / g * bytes * 8 / (intra_gbps * 1e9))
end
local function inter(bytes)  -- one shard's cross-node all-reduce
  if n <= 1 then return 0 end
  return ns(2 * (n - 1) / n * (bytes / g) * 8 / (P.inter_gbps / g * 1e9))
end

-- A trace that already ran data-parallel: this scheme replaces its recorded
-- all-reduces (lib/gradients.lua, source "records").
local plan = G.replacement_plan(graph, P)
local steps, source, total, how = plan.steps, plan.source, plan.total, plan.how

local rs_ch = graph:add_channel("intra-node reduce-scatter")
local ag_ch = graph:add_channel("intra-node all-gather")
local inter_ch = {}
for k = 1, g do inter_ch[k] = graph:add_channel("inter-node shard " .. k) end

local edges, buckets, bucket_bytes, bucket_step = {}, 0, 0, nil
local recorded = source == "records" and G.recorded_allreduces(graph) or nil
for s, step in ipairs(steps) do
  local consumer = G.consumer(steps, s)
  for _, b in ipairs(G.step_buckets(graph, P, step, source, total, recorded) or {}) do
    local it = b.ready.step
    local function task(name, ch, d)
      return graph:insert{kind = "comm", name = name, resource = ch, bytes = math.floor(b.bytes),
                          duration_ns = d, step = it, phase = "backward"}
    end
    local rs = task("reduce-scatter (intra)", rs_ch, rs_ag(b.bytes))
    local ag = task("all-gather (intra)", ag_ch, rs_ag(b.bytes))
    edges[#edges + 1] = {b.ready, rs, kind = "comm"}
    for k = 1, g do
      local ar = task("all-reduce shard (inter)", inter_ch[k], inter(b.bytes))
      edges[#edges + 1] = {rs, ar, kind = "comm"}
      edges[#edges + 1] = {ar, ag, kind = "comm"}
    end
    if consumer then edges[#edges + 1] = {ag, consumer, kind = "comm"} end
    buckets = buckets + 1
    -- The gradients' size: the first step with buckets.
    bucket_step = bucket_step or s
    if s == bucket_step then bucket_bytes = bucket_bytes + b.bytes end
  end
end
graph:add_edges(edges)
reverie.log(string.format("%d buckets x (reduce-scatter, %d shard all-reduces, all-gather); %d workers; " ..
                          "intra-node %.0f Gbit/s (%s); gradients from %s%s", buckets, g, n * g,
                          intra_gbps, intra_note, source, how and (" (" .. how .. ")") or "") ..
            C.network_note(P.inter_gbps) .. plan.note)
local bucket_line = G.add_bucket_memory(graph, P, steps, source, bucket_bytes, n * g)
if bucket_line then reverie.log(bucket_line) end
