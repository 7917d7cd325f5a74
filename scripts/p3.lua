-- p3.lua: Priority-Based Parameter Propagation (P3, Jayarajan et al.
-- SysML'19; Daydream §5.1, evaluated in §6.6 on MXNet with one worker and
-- one parameter-server process per machine, errors up to 16.2%).
--
-- Model. Data-parallel training with a parameter server sharded over the N
-- machines (MXNet KVStore, the setup of Daydream §6.6). Gradients are pushed
-- to the servers and the updated parameters pulled back; the optimizer runs
-- on the servers, so the worker's own weight-update kernels are removed
-- (`server_side_update`). P3's two ideas, as Daydream models them:
-- - slicing: every layer's gradient is cut into `slice_kb` slices, each its
--   own push and pull task ("insert multiple push and pull tasks between the
--   backward and the forward GPU tasks for each layer");
-- - priority: the send and receive channels serve the slice whose parameters
--   the next forward pass needs first (layers near the input), by overriding
--   the schedule with a priority queue (`priority`; off = FIFO, plain PS).
-- A slice is pushed when its gradient is ready (lib/gradients.lua), pulled
-- after its push, and the next step's forward waits, at the point where those
-- parameters are first used, for the pull. Each push / pull of b bytes takes
--     (N - 1) / N * b / bandwidth + latency
-- (the 1/N of the parameters served by the worker's own machine do not cross
-- the network). Server-side aggregation and update time are not modelled:
-- with the update gone from the worker, a worker's step can be shorter than
-- the single-GPU step, and the log says by how much it could be.
-- Preconditions: a training trace (backward and update phases). It models
-- a parameter server in place of any data parallelism the trace recorded:
-- a trace that ran data-parallel has its all-reduce kernels linked to their
-- Collective records, which size the slices (lib/gradients.lua, source
-- "records"), and those kernels take no time any more (their recorded time
-- includes waiting for the slowest rank, which is not modelled).
local C = reverie.include("lib/common.lua")
local G = reverie.include("lib/gradients.lua")

local specs = G.param_specs{
  workers = {default = 4, min = 1, integer = true, doc = "machines (one worker and one server each)"},
  bandwidth_gbps = {default = 10, min = 0.001, doc = "network bandwidth per machine in Gbit/s"},
  latency_us = {default = 5, min = 0, doc = "fixed cost of one push or pull in microseconds"},
  slice_kb = {default = 200, min = 1, doc = "slice size in KiB (P3: 50,000 FP32 parameters)"},
  priority = {default = true, doc = "P3 priority scheduling; false = FIFO (plain parameter server)"},
  server_side_update = {default = true, doc = "remove the worker's weight-update kernels"},
}
specs.bucket_mb = nil  -- slices replace buckets
local P = reverie.params(specs)
P.bucket_mb = P.slice_kb / 1024

-- A trace that already ran data-parallel: this scheme replaces its recorded
-- all-reduces (lib/gradients.lua, source "records").
local plan = G.replacement_plan(graph, P)
local steps, source, total, how = plan.steps, plan.source, plan.total, plan.how

local push = graph:add_channel("ps push (send)")
local pull = graph:add_channel("ps pull (receive)")
local edges, slices = {}, 0
local function cost(bytes)
  if P.workers <= 1 then return 0 end
  return math.floor((P.workers - 1) / P.workers * bytes * 8 / (P.bandwidth_gbps * 1e9) * 1e9 +
                    P.latency_us * 1e3 + 0.5)
end
local recorded = source == "records" and G.recorded_allreduces(graph) or nil
for s, step in ipairs(steps) do
  local parts = G.step_buckets(graph, P, step, source, total, recorded)
  local nxt = steps[s + 1]
  for _, b in ipairs(parts or {}) do
    -- Needed first = smallest key: parameters used early in the forward.
    local key = math.floor((1 - b.fraction_end) * 1e6)
    local it = b.ready.step
    local ps = graph:insert{kind = "comm", name = "push slice", resource = push, bytes = math.floor(b.bytes),
                            duration_ns = cost(b.bytes), priority = key, step = it, phase = "backward"}
    local pl = graph:insert{kind = "comm", name = "pull slice", resource = pull, bytes = math.floor(b.bytes),
                            duration_ns = cost(b.bytes), priority = key, step = it, phase = "backward"}
    edges[#edges + 1] = {b.ready, ps, kind = "comm"}
    edges[#edges + 1] = {ps, pl, kind = "comm"}
    local consumer = nxt and G.forward_at(nxt, 1 - b.fraction_end)
    if consumer then edges[#edges + 1] = {pl, consumer, kind = "comm"} end
    slices = slices + 1
  end
end
graph:add_edges(edges)

local removed, update_gpu_ns, update_cpu_ns = 0, 0, 0
if P.server_side_update then
  -- The optimizer's step (class "optimizer"; zero_grad stays on the
  -- worker), else every update-phase kernel when the trace does not say.
  local upd = graph:select{kind = "kernel", class = "optimizer"}
  if upd:empty() then upd = graph:select{kind = "kernel", phase = "update"} end
  update_gpu_ns = upd:total_duration()
  update_cpu_ns = upd:launches():total_duration()
  removed = graph:remove(upd | upd:launches())
end
if P.priority then graph:set_policy("priority") end
local n = math.max(1, #steps)
reverie.log(string.format("%d slices pushed and pulled over %d steps (gradients from %s%s); %s scheduling",
                          slices, #steps, source, how and (" (" .. how .. ")") or "",
                          P.priority and "priority" or "FIFO") .. C.network_note(P.bandwidth_gbps) ..
            plan.note)
if removed > 0 then
  -- Why a worker's step can beat the single-GPU step: its optimizer runs
  -- on the servers (the worker only pushes and pulls).
  reverie.log(string.format("the weight update moves to the servers: %.1f us of update kernels and " ..
                            "%.1f us of their launches per step leave the worker, so its step can " ..
                            "be shorter than the single-GPU one by up to that much when the " ..
                            "pushes and pulls hide behind the backward and forward " ..
                            "(server_side_update=false keeps them)",
                            update_gpu_ns / n / 1e3, update_cpu_ns / n / 1e3))
end
