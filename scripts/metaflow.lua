-- metaflow.lua: MetaFlow (Jia et al., SysML'19; Daydream §5.2): relaxed
-- graph substitutions that fuse layers into cheaper ones.
--
-- Model (Daydream: "select the GPU kernels of substituted layers, remove
-- them, and insert GPU kernels of new layers ... inferred by profiling"). We
-- apply MetaFlow's most common substitution: an element-wise layer (ReLU,
-- bias/residual add) right after a convolution or matrix multiply in the
-- forward pass is fused into it. The element-wise kernels and their launch
-- calls are removed and the compute kernel before them grows by
-- `epilogue_fraction` of their time (the fused epilogue works on data
-- already in registers). Up to `max_fused` element-wise kernels after each
-- compute kernel are fused; batch-norm kernels are never fused.
-- CPU time: the removed kernels' launches go, and with them the own CPU time
-- of the aten ops that issued them (their dispatch), since those ops issue
-- nothing else once fused (transforms/ops.h); the framework (Python) time
-- between ops stays: the model's code still runs, only the kernels fuse.
-- Preconditions: forward compute kernels followed by pointwise ones, else
-- nothing to change.
-- Assumptions: the backward pass is unchanged; substitutions that change
-- layer shapes (merging convolutions) need measured kernels and are not
-- applied.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  epilogue_fraction = {default = 0.1, min = 0, doc = "cost of a fused element-wise op, as a fraction of its kernel"},
  max_fused = {default = 2, min = 1, integer = true, doc = "element-wise kernels fused after one compute kernel"},
}

-- Floating-point element-wise kernels (integer ones are bookkeeping, such as
-- batch norm's num_batches_tracked += 1, not part of the layer's dataflow).
local INTEGER = {"<long>", "<int>", "<int64", "<int32", "<bool>"}
local function elementwise(t)
  return C.is_pointwise(t) and not C.name_has(t.name, INTEGER)
end

local victims, fused = {}, 0
for _, step in ipairs(C.steps(graph)) do
  local fwd = C.kernels(step.forward)
  local i = 1
  while i <= #fwd do
    local t = fwd[i]
    if C.is_compute(t) then
      local extra, j = 0, i + 1
      while j <= #fwd and j - i <= P.max_fused and elementwise(fwd[j]) do
        extra = extra + fwd[j].duration_ns
        victims[#victims + 1] = fwd[j]
        j = j + 1
      end
      if j > i + 1 then
        t.duration_ns = t.duration_ns + math.floor(extra * P.epilogue_fraction + 0.5)
        fused = fused + 1
      end
      i = j
    else
      i = i + 1
    end
  end
end
if fused == 0 then
  reverie.nothing_to_change("no forward GEMM/conv followed by a pointwise kernel")
end
local sel = graph:from_tasks(victims)
local removed = graph:remove(sel | sel:launches())
local n = math.max(1, graph:step_count())
reverie.log(string.format("per step: %.0f compute kernels absorbed %.0f element-wise kernels (%.0f " ..
                          "tasks removed)", fused / n, #victims / n, removed / n))
