-- lib/common.lua: helpers shared by the optimization scripts.
-- Load with `local C = reverie.include("lib/common.lua")`.
--
-- Kernel classes come from the one classifier (depgraph/kernel_class.h,
-- `t.class` and `graph:select{class = ...}`): scripts never keep keyword
-- lists of their own, so a script and every report speak of the same
-- kernels.
local C = {}

-- Compute-bound classes: GEMMs, convolutions, fused attention.
C.COMPUTE = {"gemm", "conv", "attention"}

local function class_in(t, classes)
  for _, c in ipairs(classes) do
    if t.class == c then return true end
  end
  return false
end

local function select_class(graph, class, extra)
  local q = {kind = "kernel", class = class}
  for k, v in pairs(extra or {}) do q[k] = v end
  return graph:select(q)
end

function C.compute_kernels(graph, extra) return select_class(graph, C.COMPUTE, extra) end
function C.activation_kernels(graph, extra) return select_class(graph, "activation", extra) end
function C.normalization_kernels(graph, extra) return select_class(graph, "normalization", extra) end

-- Median of a Lua array of numbers (nil when empty).
function C.median(values)
  if #values == 0 then return nil end
  table.sort(values)
  return values[(#values + 1) // 2]
end

-- Median duration (ns) of a selection's tasks, or `default` when empty.
function C.median_duration(sel, default)
  local v = {}
  for t in sel:tasks() do v[#v + 1] = t.duration_ns end
  return C.median(v) or default
end

-- Training steps as runs of GPU work in simulated order. A step is the
-- forward, backward and weight-update GPU tasks between one forward pass and
-- the next: a new step starts at a forward GPU task that follows backward or
-- update work. Works whether or not the trace marked steps (a trace
-- without ProfilerStep markers is one graph step holding every step).
-- Each step: {forward = {...}, backward = {...}, update = {...}} arrays of
-- tasks in simulated start order.
function C.steps(graph, timeline)
  timeline = timeline or graph:simulate()
  local gpu = graph:select{kind = "gpu", phase = {"forward", "backward", "update"}}
  local steps, cur = {}, nil
  for _, t in ipairs(timeline:order(gpu)) do
    local phase = t.phase
    if cur == nil or (phase == "forward" and (#cur.backward > 0 or #cur.update > 0)) then
      cur = {forward = {}, backward = {}, update = {}, pos = {}, count = 0}
      steps[#steps + 1] = cur
    end
    local list = cur[phase]
    list[#list + 1] = t
    cur.count = cur.count + 1
    cur.pos[t.id] = cur.count  -- simulated order within the step
  end
  return steps
end

-- The kernels (not memcpy / memset) of an array of tasks.
function C.kernels(tasks)
  local out = {}
  for _, t in ipairs(tasks) do
    if t.kind == "kernel" then out[#out + 1] = t end
  end
  return out
end

-- Does `name` contain any of `patterns` (case-insensitive substrings)?
-- For names the classifier does not judge (dtypes in a kernel's template).
function C.name_has(name, patterns)
  local n = name:lower()
  for _, p in ipairs(patterns) do
    if n:find(p:lower(), 1, true) then return true end
  end
  return false
end

function C.is_compute(t) return t.kind == "kernel" and class_in(t, C.COMPUTE) end
function C.is_activation(t) return t.kind == "kernel" and t.class == "activation" end
function C.is_normalization(t) return t.kind == "kernel" and t.class == "normalization" end
function C.is_pointwise(t)
  return t.kind == "kernel" and (t.class == "elementwise" or t.class == "activation")
end

-- Maximal runs of consecutive tasks of `tasks` for which pred(t) holds:
-- {{t1, t2}, {t5}, ...}. A run is one operator when its kernels come back to
-- back (a cuDNN convolution is often several kernels).
function C.runs(tasks, pred)
  local out, cur = {}, nil
  for _, t in ipairs(tasks) do
    if pred(t) then
      if not cur then
        cur = {}
        out[#out + 1] = cur
      end
      cur[#cur + 1] = t
    else
      cur = nil
    end
  end
  return out
end

-- Pairs the j-th of `fwd` operators with its backward counterpart: the
-- backward pass visits operators in reverse, so with equal counts forward j
-- pairs with backward (#bwd + 1 - j); otherwise by relative position.
function C.mirror(j, nfwd, nbwd)
  if nbwd == 0 then return nil end
  if nfwd == nbwd then return nbwd + 1 - j end
  local k = math.floor((1 - (j - 0.5) / nfwd) * nbwd) + 1
  return math.max(1, math.min(nbwd, k))
end

-- Ring all-reduce time (Thakur et al.; NCCL's "bus bandwidth" convention):
-- every byte crosses 2(N-1)/N links, plus a fixed per-collective latency.
-- One worker does not communicate. `gbps` is Gbit/s (network convention).
function C.ring_allreduce_ns(bytes, workers, gbps, latency_us)
  if workers <= 1 then return 0 end
  local seconds = 2 * (workers - 1) / workers * bytes * 8 / (gbps * 1e9)
  return math.floor(seconds * 1e9 + latency_us * 1e3 + 0.5)
end

-- Ring factor of an all-reduce over `workers`: the share of the payload
-- every worker sends, 2(N-1)/N (0 for one worker).
function C.ring_factor(workers)
  return workers <= 1 and 0 or 2 * (workers - 1) / workers
end

-- A launch call far longer than the trace's typical one (graph:launch_model)
-- is not launch overhead: the first launch of a kernel loads its code (6.5
-- ms in HTA's MI250 toy trace, 3-4 s in its critical-path benchmarks,
-- 0.7 s in param's ResNet), or a full device queue holds it. A replacement
-- (a fused kernel, a graph replay) pays such a cost too, so what a removed
-- launch takes beyond the typical launch is kept when it exceeds 50 typical
-- launches (the longest ordinary launch on the shared traces is 22x the
-- median; these are 100x and more). Returns the ns to keep, else 0.
C.ONE_TIME_LAUNCHES = 50
function C.one_time_ns(graph, launch)
  local typical = graph:launch_model().kernel_launch_ns
  if typical <= 0 or launch.duration_ns <= C.ONE_TIME_LAUNCHES * typical then return 0 end
  return launch.duration_ns - typical
end

-- Logs the one-time launch cost a script kept (nothing when none); `payer`
-- says what pays it in the prediction ("the fused kernel", "a capture").
function C.log_one_time(ns, payer)
  if ns <= 0 then return end
  reverie.log(string.format("kept: %.1f us of one-time launch cost (launches over %d typical ones: " ..
                            "module loading, which %s pays too)", ns / 1e3, C.ONE_TIME_LAUNCHES, payer))
end

-- Removes the kernels of selection `old` and their launch calls, keeping
-- each launch's one-time cost (C.one_time_ns) as the call's whole time,
-- renamed to say so. Returns the ns kept.
function C.remove_kernels(graph, old)
  local kept, kept_ns = {}, 0
  for l in old:launches():tasks() do
    local ns = C.one_time_ns(graph, l)
    if ns > 0 then
      l.duration_ns = ns
      l.name = l.name .. " (one-time cost kept)"
      kept[#kept + 1] = l
      kept_ns = kept_ns + ns
    end
  end
  graph:remove(old | (old:launches() - graph:from_tasks(kept)))
  return kept_ns
end

-- The framework time (cpu_work outside any op) between two launch calls
-- of one thread, `a` before `b`: a list of tasks, empty when one call is
-- both, they are on two threads, or `b` came first. Walks no further than
-- `b`'s measured start (tasks a script inserted have none), and a walk that
-- misses `b` finds nothing.
function C.framework_between(a, b)
  if not a or not b or a == b or a.resource ~= b.resource then return {} end
  local a_ns, b_ns = a.measured_start_ns, b.measured_start_ns
  if a_ns and b_ns and a_ns >= b_ns then return {} end
  local out, t = {}, a:next()
  while t and t ~= b do
    local t_ns = t.measured_start_ns
    if b_ns and t_ns and t_ns > b_ns then break end
    if t.kind == "cpu_work" and t.op_id == nil then out[#out + 1] = t end
    t = t:next()
  end
  if t ~= b then return {} end
  return out
end

-- The cost model of the trace's GPU (graph:cost_model), or a one-line
-- refusal when the trace does not say which GPU it ran on and `gpu_key`
-- does not either: the model's figures come from the GPU table.
function C.cost_model(graph, gpu_key)
  local ok, model = pcall(graph.cost_model, graph, {gpu = gpu_key})
  if not ok then reverie.refuse(tostring(model)) end
  return model
end

-- The GPU the kernels now stand for, by its table key: the trace's, or the
-- one a script earlier in the run moved them to (graph:set_gpu). Not
-- graph:cost_model().gpu, which names the GPU the model was calibrated on.
function C.runs_on(graph, gpu_key)
  local ok, g = pcall(graph.gpu, graph, {gpu = gpu_key})
  return ok and g.key or "an unknown GPU"
end

-- The GPU's fastest link to its peers, per direction, in Gbit/s, from the
-- GPU table (graph:gpu()): NVLink / Infinity Fabric when the part has it
-- (the table quotes both directions together), else its PCIe host link;
-- times the payload efficiency of a link (graph:cost_model().link_efficiency).
-- Returns the figure and a note saying which link it is.
function C.peer_link_gbps(graph, gpu_key)
  local g = graph:gpu{gpu = gpu_key}
  local eff = C.cost_model(graph, gpu_key).link_efficiency
  if g.scaleup_gbs > 0 then
    return g.scaleup_gbs / 2 * eff * 8, string.format("%s %s: %g GB/s each way x %.2f", g.key, g.scaleup,
                                                       g.scaleup_gbs / 2, eff)
  end
  return g.pcie_gbs * eff * 8, string.format("%s PCIe %d.0 x%d: %.1f GB/s each way x %.2f", g.key, g.pcie_gen,
                                            g.pcie_lanes, g.pcie_gbs, eff)
end

-- Why a script that changes GPU work has none to change, or nil: the trace
-- captured no GPU kernel (one wording for every script that says so).
function C.no_gpu_kernels(graph)
  if graph:select{kind = "kernel"}:empty() then
    return "the trace records no GPU kernels (GPU activity was not captured)"
  end
  return nil
end

-- The network between machines is no property of a GPU and no trace
-- records it: the log line of a script that assumes one names the figure.
function C.network_note(gbps)
  return string.format("; network %g Gbit/s per machine (an assumption: the trace does not record " ..
                       "the network between machines; --set it)", gbps)
end

-- Time (ns) to move `bytes` over a `gbps` Gbit/s link, plus latency.
function C.transfer_ns(bytes, gbps, latency_us)
  return math.floor(bytes * 8 / (gbps * 1e9) * 1e9 + (latency_us or 0) * 1e3 + 0.5)
end

-- The tensors the forward saved for the backward (graph:allocations():
-- allocated by a forward op, freed by a backward one) on GPUs, by the GPU
-- task that wrote them, each list largest first, and their count; nil when
-- the trace records none (no `profile_memory`, or allocations without
-- addresses, so frees are not matched to them).
function C.saved_tensors(graph)
  local by, n = {}, 0
  for _, a in ipairs(graph:allocations()) do
    if a.saved and a.producer and a.device >= 0 then
      local l = by[a.producer.id]
      if not l then
        l = {}
        by[a.producer.id] = l
      end
      l[#l + 1] = a
      n = n + 1
    end
  end
  for _, l in pairs(by) do table.sort(l, function(x, y) return x.bytes > y.bytes or (x.bytes == y.bytes and x.id < y.id) end) end
  return n > 0 and by or nil, n
end

-- The largest saved tensor GPU task `t` wrote or, when it wrote none (an
-- in-place op), the nearest of the `back` GPU tasks before it on its stream
-- did; taken out of `saved` so that no tensor is stashed twice.
function C.take_saved(saved, t, back)
  for _ = 0, back do
    if not t then return nil end
    local l = saved[t.id]
    if l and #l > 0 then return table.remove(l, 1) end
    t = t:prev()
  end
  return nil
end

-- Inserts a copy of GPU task `t` (same kind, name + suffix, duration) before
-- GPU task `anchor`, with its launch call; returns the new task.
function C.clone_before(graph, t, anchor, suffix, extra)
  local spec = {kind = t.kind, name = t.name .. (suffix or ""), before = anchor,
                duration_ns = t.duration_ns, bytes = t.bytes}
  for k, v in pairs(extra or {}) do spec[k] = v end
  return graph:insert(spec)
end

return C
