-- pointwise_fusion.lua: what would torch.compile's pointwise fusion buy here?
-- Every run of two or more consecutive pointwise kernels (element-wise and
-- activation kernels, by the kernel classifier of depgraph/kernel_class.h)
-- on one stream, within one phase of one step, becomes one fused kernel
-- (lib/fusion.lua F.fuse).
--
-- CPU time. The fused kernels' launches go, and with them the own CPU time
-- of the aten ops that issued them when those ops issue nothing else
-- (transforms/ops.h); the fused kernel gets one launch and no aten op
-- (compiled code launches it). Framework time between ops (the Python of
-- the model) stays: `remove_framework = true` also removes the framework
-- stretches between the fused ops (what compiling the module into one graph
-- does), which is right only when the whole region is compiled.
--
-- GPU time. The memory-traffic model of lib/fusion.lua: a fused run costs
-- max(sum/k, max) of its k members' times.
--
-- Memory: allocations made in the CPU work it removes (the intermediates
-- of the fused ops) leave with that work, with their frees
-- (depgraph/memory_replay.h); nothing else is resized.
-- Preconditions: works on eager kernels; a trace already compiled
-- (graph:facts().compiled: Triton kernels or compiled regions) is fused
-- where inductor left eager pointwise runs (the log says the trace is
-- compiled), and has nothing to change when no run of `min_run` is left.
-- Ignores: fusion across a reduction or normalization (inductor fuses many of
-- those too: this is a lower bound on what it fuses), epilogue fusion into
-- GEMMs (metaflow.lua), recompilation and guard costs, and CUDA graphs
-- (cuda_graphs.lua).
local C = reverie.include("lib/common.lua")
local F = reverie.include("lib/fusion.lua")

local P = reverie.params{
  min_run = {default = 2, min = 2, integer = true, doc = "shortest run of pointwise kernels fused"},
  phases = {default = "forward,backward", doc = "comma-separated phases to fuse in"},
  remove_framework = {default = false,
                      doc = "also remove the framework (Python) time between the fused ops"},
}

local phases = {}
for p in P.phases:gmatch("[^,%s]+") do phases[p] = true end

local function pointwise(t)
  return C.is_pointwise(t) and not C.name_has(t.name, {"<long>", "<int>", "<bool>"})
end

local runs, fused_kernels, saved_ns, framework_ns = 0, 0, 0, 0
local pending, doomed_framework = {}, {}  -- removed once, after every run is fused
for _, step in ipairs(C.steps(graph)) do
  for phase in pairs(phases) do
    local list = step[phase] or {}
    -- Consecutive in the phase's simulated order and on one stream.
    local cur = {}
    local function flush()
      if #cur >= P.min_run then
        local before = 0
        for _, k in ipairs(cur) do before = before + k.duration_ns end
        if P.remove_framework then
          -- Framework tasks between the first and last launch of the run.
          for _, d in ipairs(C.framework_between(cur[1]:launcher(), cur[#cur]:launcher())) do
            framework_ns = framework_ns + d.duration_ns
            doomed_framework[#doomed_framework + 1] = d
          end
        end
        local f = F.fuse(graph, cur, {name = string.format("triton_poi_fused_%d (%s)", #cur, phase),
                                      pending = pending})
        saved_ns = saved_ns + before - f.duration_ns
        runs = runs + 1
        fused_kernels = fused_kernels + #cur
      end
      cur = {}
    end
    for _, t in ipairs(list) do
      if pointwise(t) and (#cur == 0 or cur[#cur].resource == t.resource) then
        cur[#cur + 1] = t
      else
        flush()
        if pointwise(t) then cur[1] = t end
      end
    end
    flush()
  end
end

local one_time_ns = F.remove_pending(graph, pending)
if #doomed_framework > 0 then graph:remove(graph:from_tasks(doomed_framework)) end

local compiled = graph:facts().compiled
if runs == 0 then
  reverie.nothing_to_change(string.format("no run of %d or more eager pointwise kernels on one " ..
                                          "stream%s", P.min_run,
                                          compiled.used and " (the trace is already compiled)" or ""))
end
local n = math.max(1, graph:step_count())
reverie.log(string.format("per step: %.1f runs of pointwise kernels (%.1f kernels) fused; GPU time " ..
                          "%.1f us less%s%s", runs / n, fused_kernels / n, saved_ns / n / 1e3,
                          P.remove_framework and string.format("; %.1f us of framework time removed",
                                                               framework_ns / n / 1e3) or "",
                          compiled.used and "; the trace is already compiled: only the eager " ..
                            "runs inductor left are fused" or ""))
C.log_one_time(one_time_ns, "the fused kernel")
