-- lib/gradients.lua: where gradients come from and when they are ready, for
-- the communication scripts (ddp, dgc, blueconnect, p3).
-- Load with `local G = reverie.include("lib/gradients.lua")`.
--
-- Four sources, best first:
--   "records":    the trace already ran data-parallel: its all-reduce
--                 kernels are linked to the framework's records of the calls
--                 that launched them (graph:collectives(), c.kernel), which
--                 give each bucket's exact bytes; a bucket is ready when its
--                 recorded all-reduce was (the kernel is the anchor). Scripts
--                 that replace the all-reduce (blueconnect, dgc, p3) first
--                 take the recorded kernels' time away (G.replace_recorded).
--   "buckets":    GradientBucket records in the trace (frameworks/pytorch
--                 records DDP's real buckets): sizes and layers are exact.
--   "parameters": Parameter records (gradient bytes per layer): buckets are
--                 packed greedily in the order layers finish their backward
--                 (PyTorch fills buckets in reverse parameter order, which is
--                 the backward order), `bucket_mb` each.
--   "estimate":   neither is in the trace. The total gradient size is
--                 `gradient_mb` when given, else inferred from the weight
--                 update: SGD/Adam update kernels are memory-bound and stream
--                 every parameter a fixed number of times, so
--                   bytes = update-kernel time x memory bandwidth / passes
--                 (`update_passes` = 11 for foreach SGD with momentum and weight
--                 decay: weight decay 3, momentum 2 + 3, parameter 3 tensor
--                 passes; the bandwidth is the achieved, not the peak, figure:
--                 the GPU table's peak x the efficiency the trace's own
--                 element-wise kernels reach, graph:cost_model().memory_gbs,
--                 unless `gpu_memory_gbs` is given).
--                 Gradients are taken to become ready in proportion to the
--                 backward GPU time done so far: bucket k is ready at the
--                 backward GPU task where the running backward time first
--                 reaches the share of all gradient bytes that buckets 1..k
--                 hold. This ignores that layers near the output often hold
--                 more parameters (it readies early buckets late), a bias
--                 toward exposing communication.
local C = reverie.include("lib/common.lua")
local G = {}

G.MB = 1024 * 1024

-- Parameters every gradient-based script declares (merge into its own).
function G.param_specs(specs)
  specs.bucket_mb = specs.bucket_mb or
      {default = 25, min = 0.001, doc = "gradient bucket size in MiB (PyTorch DDP bucket_cap_mb)"}
  specs.gradient_mb = specs.gradient_mb or
      {default = 0, min = 0, doc = "total gradient size in MiB when the trace has no Parameter " ..
        "records; 0 = infer it from the weight-update kernels"}
  specs.gpu_memory_gbs = specs.gpu_memory_gbs or
      {default = 0, min = 0, doc = "achieved GPU memory bandwidth in GB/s used to infer the " ..
        "gradient size; 0 = from the model (the GPU table's peak x the trace's element-wise efficiency)"}
  specs.gpu = specs.gpu or
      {default = "", doc = "the trace's GPU as a key of the GPU table when the trace lacks deviceProperties"}
  specs.update_passes = specs.update_passes or
      {default = 11, min = 1, doc = "tensor passes of the update kernels over each gradient " ..
        "(foreach SGD with momentum and weight decay: 11)"}
  return specs
end

-- Layer path of `t`, or nil.
local function layer_of(t) return t.layer end

-- Is `layer` the path `owner` or below it?
local function under(layer, owner)
  return layer == owner or (layer:sub(1, #owner + 1) == owner .. ".")
end

-- Latest backward task (in step order) of each layer in `set` (a map path
-- -> true, matched with sub-layers): returns index into step.backward or nil.
local function last_index_for(step, owners)
  local best = nil
  for i, t in ipairs(step.backward) do
    local l = layer_of(t)
    if l then
      for _, o in ipairs(owners) do
        if under(l, o) then best = i break end
      end
    end
  end
  return best
end

-- Achieved GPU memory bandwidth (GB/s): `gpu_memory_gbs`, else the model's.
function G.memory_gbs(graph, P)
  if P.gpu_memory_gbs > 0 then return P.gpu_memory_gbs end
  return C.cost_model(graph, P.gpu ~= "" and P.gpu or nil).memory_gbs
end

-- Total gradient bytes for the "estimate" source, with a note on how.
function G.estimate_total(graph, P, steps)
  if P.gradient_mb > 0 then
    return P.gradient_mb * G.MB, string.format("gradient_mb = %g", P.gradient_mb)
  end
  local ns, n = 0, 0
  for _, s in ipairs(steps) do
    local k = C.kernels(s.update)
    if #k > 0 then
      for _, t in ipairs(k) do ns = ns + t.duration_ns end
      n = n + 1
    end
  end
  if n == 0 then
    -- A refusal (one line, no traceback): the script cannot model this
    -- trace without the size, and says which --set gives it.
    reverie.refuse("the trace has no Parameter records and no weight-update kernels, so the " ..
                   "gradient size is unknown: give it with --set gradient_mb=N (MiB), or record the " ..
                   "trace with reverie_torch.profile(model, optimizer, ...) (frameworks/pytorch), " ..
                   "which records Parameter and gradient-bucket records")
  end
  local per_step_ns = ns / n
  -- Whole fp32 gradients: a collective moves whole elements (ASTRA-sim
  -- times a size that is not a multiple of 4 bytes as one more chunk, 25%
  -- slower; docs/ACCURACY.md).
  local gbs = G.memory_gbs(graph, P)
  local bytes = per_step_ns * 1e-9 * gbs * 1e9 / P.update_passes
  bytes = math.max(4, math.floor(bytes / 4 + 0.5) * 4)
  return bytes, string.format("%.1f us of update kernels per step x %.0f GB/s%s / %g passes",
                              per_step_ns / 1e3, gbs, P.gpu_memory_gbs > 0 and "" or " (model)",
                              P.update_passes)
end

-- The recorded all-reduces with a size and a kernel: {[kernel id] = bytes}
-- and their count.
function G.recorded_allreduces(graph)
  local bytes_of, n = {}, 0
  for _, c in ipairs(graph:collectives()) do
    if c.collective == "AllReduce" and c.bytes > 0 and c.kernel and not c.kernel.removed then
      bytes_of[c.kernel.id] = c.bytes
      n = n + 1
    end
  end
  return bytes_of, n
end

-- For scripts that replace data parallelism's all-reduce by their own
-- communication: the recorded all-reduce kernels take no time any more (they
-- stay as the points where gradients are ready, with their dependencies).
-- Returns {n = how many, ns = the time taken away over the run}.
function G.replace_recorded(graph)
  local bytes_of = G.recorded_allreduces(graph)
  local out = {n = 0, ns = 0}
  for id in pairs(bytes_of) do
    local k = graph:task(id)
    out.n, out.ns = out.n + 1, out.ns + k.duration_ns
    k.duration_ns = 0
  end
  return out
end

-- The log's clause for G.replace_recorded's result ("" when nothing was).
function G.replaced_note(r)
  if r.n == 0 then return "" end
  return string.format("; replaces the trace's %d recorded all-reduces (%.1f ms of kernels, " ..
                       "which include waiting for the slowest rank: that wait is not modelled)",
                       r.n, r.ns / 1e6)
end

-- A trace made data-parallel by a script (not one that recorded its own
-- collectives): DDP's reducer holds buckets of the gradients' size,
-- allocated when DDP wraps the model, before the first step, unless
-- gradient_as_bucket_view=True makes the gradients views into them
-- (PyTorch's DistributedDataParallel documentation: the memory saved equals
-- the gradients' size). G.add_bucket_memory allocates them on the GPU of
-- the first step's work, from its start, and returns the log line;
-- G.note_bucket_memory only says they are left out (a scheme whose buffers
-- this library does not size).
G.BUCKET_VIEW_SPEC = {default = false, doc = "gradient_as_bucket_view=True: the gradients are views " ..
                        "into DDP's buckets, which then add no memory"}

function G.add_bucket_memory(graph, P, steps, source, bytes, workers)
  if source == "records" or not bytes or bytes <= 0 or workers <= 1 then return nil end
  if P.bucket_view then return "memory: the gradients are views into DDP's buckets (bucket_view): none added" end
  local s1 = steps[1]
  local first = s1 and (s1.forward[1] or s1.backward[1] or s1.update[1])
  if not first then return nil end
  local blocks = math.ceil(bytes / 512) * 512
  graph:allocate{bytes = blocks, at = first, device = first.resource.device}
  if source == "estimate" then
    graph:note_memory_estimate("DDP's gradient buckets are sized by an estimate of the gradients")
  end
  return string.format("memory: DDP's gradient buckets, %.1f MiB (the gradients' size), held from the " ..
                       "first step (bucket_view=true: gradient_as_bucket_view=True, none)", blocks / G.MB)
end

function G.note_bucket_memory(graph, script, source, bytes, workers, extra)
  if source == "records" or not bytes or bytes <= 0 or workers <= 1 then return end
  graph:note_memory_estimate(string.format("%s does not count DDP's gradient buckets (%.1f MiB, the " ..
                                           "gradients' size, unless gradient_as_bucket_view=True)%s",
                                           script, bytes / G.MB, extra or ""))
end

-- What a scheme that replaces data parallelism's all-reduce starts from:
-- {steps (C.steps), source (G.source), total and how (the estimate source's
-- bytes and how they were found), replaced (G.replace_recorded's result; the
-- recorded all-reduces take no time any more), note (its log clause)}.
function G.replacement_plan(graph, P)
  local plan = {steps = C.steps(graph), source = G.source(graph)}
  if plan.source == "estimate" then
    plan.total, plan.how = G.estimate_total(graph, P, plan.steps)
  end
  plan.replaced = plan.source == "records" and G.replace_recorded(graph) or {n = 0}
  plan.note = G.replaced_note(plan.replaced)
  return plan
end

-- The source the graph supports and, for "parameters", bytes per layer.
function G.source(graph)
  local _, recorded = G.recorded_allreduces(graph)
  if recorded > 0 then return "records" end
  local has_layers = #graph:layers() > 0
  if has_layers and #graph:gradient_buckets() > 0 then return "buckets" end
  if has_layers and #graph:parameters() > 0 then return "parameters" end
  return "estimate"
end

-- Buckets of one step, in the order they become ready:
-- {{bytes = n, ready = task, index = k}, ...}. `total_bytes` is only used by
-- the estimate source; `recorded`, G.recorded_allreduces(graph) read once
-- for every step (a pass over the collectives each step would grow with the
-- steps squared), by the records source. Returns nil when the step has no
-- backward GPU work.
function G.step_buckets(graph, P, step, source, total_bytes, recorded)
  local bwd = step.backward
  if #bwd == 0 then return nil end
  local out = {}
  if source == "records" then
    local bytes_of = recorded or G.recorded_allreduces(graph)
    for _, phase in ipairs({"forward", "backward", "update"}) do
      for _, t in ipairs(step[phase]) do
        if bytes_of[t.id] then out[#out + 1] = {bytes = bytes_of[t.id], ready = t, order = step.pos[t.id]} end
      end
    end
    table.sort(out, function(a, b) return a.order < b.order end)
  elseif source == "buckets" then
    for _, b in ipairs(graph:gradient_buckets()) do
      local i = last_index_for(step, b.layers)
      if i then out[#out + 1] = {bytes = b.bytes, ready = bwd[i], order = i} end
    end
    table.sort(out, function(a, b) return a.order < b.order end)
  elseif source == "parameters" then
    local per_layer, layers = {}, {}
    for _, p in ipairs(graph:parameters()) do
      if not per_layer[p.layer] then layers[#layers + 1] = p.layer end
      per_layer[p.layer] = (per_layer[p.layer] or 0) + p.bytes
    end
    local ready = {}
    for _, l in ipairs(layers) do
      local i = last_index_for(step, {l})
      if i then ready[#ready + 1] = {layer = l, order = i} end
    end
    table.sort(ready, function(a, b) return a.order < b.order end)
    local cap = P.bucket_mb * G.MB
    local cur = nil
    for _, r in ipairs(ready) do
      if cur == nil or cur.bytes >= cap then
        cur = {bytes = 0}
        out[#out + 1] = cur
      end
      cur.bytes = cur.bytes + per_layer[r.layer]
      cur.ready = bwd[r.order]
    end
  else
    local cap = P.bucket_mb * G.MB
    local n = math.max(1, math.ceil(total_bytes / cap - 1e-9))
    local total_ns = 0
    for _, t in ipairs(bwd) do total_ns = total_ns + t.duration_ns end
    local done, i = 0, 1
    for k = 1, n do
      local bytes = math.min(cap, total_bytes - (k - 1) * cap)
      local target = total_ns * math.min(1, (k * cap) / total_bytes)
      while i < #bwd and done + bwd[i].duration_ns < target do
        done = done + bwd[i].duration_ns
        i = i + 1
      end
      out[#out + 1] = {bytes = bytes, ready = (k == n) and bwd[#bwd] or bwd[i]}
    end
  end
  -- fraction_end: share of the step's gradient bytes in buckets 1..k (in
  -- backward order); 1 - fraction_end is where, in forward order, the
  -- bucket's parameters are first needed (parameters near the output are
  -- used last in the forward pass).
  local sum, acc = 0, 0
  for _, b in ipairs(out) do sum = sum + b.bytes end
  for k, b in ipairs(out) do
    b.index = k
    acc = acc + b.bytes
    b.fraction_end = sum > 0 and acc / sum or 1
  end
  return out
end

-- The forward GPU task of `step` where the running forward GPU time first
-- reaches `fraction` of the step's forward time (the first one for 0). The
-- running times are summed on the first call for a step and kept in it
-- (`step.forward_before`: the forward time before each task), so a call per
-- bucket costs a binary search, not a pass over the forward; the forward's
-- durations are read as they were then.
function G.forward_at(step, fraction)
  local fwd = step.forward
  if #fwd == 0 then return nil end
  local before = step.forward_before
  if not before then
    before = {}
    local done = 0
    for i, t in ipairs(fwd) do
      before[i] = done
      done = done + t.duration_ns
    end
    before.total = done
    step.forward_before = before
  end
  local target = before.total * fraction
  if before[#fwd] < target then return fwd[#fwd] end
  local lo, hi = 1, #fwd  -- the first i with before[i] >= target
  while lo < hi do
    local mid = (lo + hi) // 2
    if before[mid] >= target then hi = mid else lo = mid + 1 end
  end
  return fwd[lo]
end

-- First GPU task of the step's weight update (what must wait for the
-- gradients), else the first forward GPU task of the next step.
-- The first GPU task of the weight update that follows the step's backward
-- (update-phase work before the backward, such as zero_grad's fills when
-- the loop calls it after the forward, cannot wait for gradients), else the
-- next step's first forward task.
function G.consumer(steps, s)
  local step = steps[s]
  local last_bwd = #step.backward > 0 and step.pos[step.backward[#step.backward].id] or 0
  for _, t in ipairs(step.update) do
    if step.pos[t.id] > last_bwd then return t end
  end
  local nxt = steps[s + 1]
  if nxt and #nxt.forward > 0 then return nxt.forward[1] end
  return nil
end

return G
