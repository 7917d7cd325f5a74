-- lib/fusion.lua: kernel fusion as a what-if primitive (issue 22's "fuse").
-- Load with `local F = reverie.include("lib/fusion.lua")`.
--
-- F.fuse(graph, kernels, opts) merges `kernels` (an array of kernel tasks on
-- one stream, in stream order) into one kernel:
-- - the kernels and their launch calls are removed (a launch's one-time
--   cost, lib/common.lua C.one_time_ns, stays); the aten ops that
--   issued those launches lose their own CPU time with them when they issue
--   nothing else (the rule of transforms/ops.h); framework time between ops
--   (Python) stays, because a fused kernel does not remove the model's code;
-- - one kernel is inserted where the first one ran, with one launch call
--   (the trace's median launch), and no aten op around it: a compiled fused
--   kernel (torch.compile / Triton) is launched by generated code, not by the
--   dispatcher (`op_name` gives it an op and its measured cost instead);
-- - its duration is `opts.duration_ns`, or the memory-traffic model below.
--
-- Memory-traffic model (pointwise kernels, which are bandwidth-bound):
-- without tensor sizes (a trace does not record them per kernel), every
-- kernel of the run is taken to read one tensor and write one of the same
-- size, so k unfused kernels move 2k tensors and the fused one 2 (the run's
-- first input and last output; the k-1 intermediates never reach memory):
--     fused = max(sum(d) / k, max(d))
-- The max keeps at least the largest member's time (a member that reads
-- several inputs, or a latency-bound small kernel, is not made faster than
-- itself). It ignores: inputs shared by several members (fewer reads
-- saved), extra inputs of binary ops (more traffic kept), and the cases a
-- compiler will not fuse (a reduction between pointwise ops, a view that
-- changes strides).
local C = reverie.include("lib/common.lua")
local F = {}

function F.pointwise_time_ns(kernels)
  local sum, max = 0, 0
  for _, k in ipairs(kernels) do
    sum = sum + k.duration_ns
    if k.duration_ns > max then max = k.duration_ns end
  end
  return math.max(math.floor(sum / #kernels + 0.5), max)
end

-- With `opts.pending` (a table), the kernels are not removed yet but added
-- to it; F.remove_pending(graph, pending) then removes every run's kernels
-- and launches in one graph:remove, which costs one pass over the graph
-- instead of one per run (the runs are disjoint: the result is the same).
function F.fuse(graph, kernels, opts)
  opts = opts or {}
  if #kernels < 2 then return nil end
  local first = kernels[1]
  local duration = opts.duration_ns or F.pointwise_time_ns(kernels)
  local spec = {kind = "kernel", name = opts.name or ("fused " .. #kernels .. " kernels"),
                before = first, duration_ns = duration}
  if opts.op_name then spec.with_op = opts.op_name end
  local fused = graph:insert(spec)
  if opts.pending then
    for _, k in ipairs(kernels) do opts.pending[#opts.pending + 1] = k end
  else
    C.remove_kernels(graph, graph:from_tasks(kernels))
  end
  return fused
end

-- Returns the one-time launch cost kept (ns; C.remove_kernels).
function F.remove_pending(graph, pending)
  if #pending == 0 then return 0 end
  return C.remove_kernels(graph, graph:from_tasks(pending))
end

return F
