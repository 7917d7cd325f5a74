-- fused_adam.lua: one fused optimizer kernel instead of one kernel per
-- parameter and operation (Apex FusedAdam; Daydream §5.1 "FusedAdam
-- Optimizer", evaluated in §6.3 on BERT and GNMT, errors within 13%).
--
-- Model (Daydream): the weight-update phase is found by the task-to-layer /
-- phase mapping; all its GPU kernels and the CPU calls that launched them are
-- removed, and one new kernel per parameter group is inserted where the first
-- of them ran, with its own launch call. The fused kernel's duration is the
-- sum of the removed kernels' durations (Daydream: "roughly estimated by the
-- sum of all removed compute-intensive kernels"), times `fused_time_factor`
-- (1.0: the same memory traffic; below 1 if fusion also saves traffic), split
-- evenly over the groups. What disappears is the CPU side: the launch calls
-- and the framework time between them (their gaps), which is what makes the
-- unfused optimizer launch-bound (2633 update kernels per BERT-base step,
-- Daydream §6.3).
--
-- Assumptions: every update-phase kernel of a step belongs to the optimizer
-- (the phase also covers optimizer.zero_grad, whose kernels are fused too);
-- memcpys and memsets of the update phase and other CPU calls stay; the
-- optimizer's arithmetic does not change (Adam or SGD alike).
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  param_groups = {default = 1, min = 1, integer = true,
                  doc = "optimizer parameter groups: one fused kernel each per step"},
  fused_time_factor = {default = 1.0, min = 0,
                       doc = "fused kernel time as a fraction of the removed kernels' time"},
  kernel_name = {default = "multi_tensor_apply_kernel<FusedAdam> (fused)",
                 doc = "name of the inserted kernel"},
}

local steps = C.steps(graph)
local fused_steps, removed_kernels = 0, 0
for _, step in ipairs(steps) do
  local kernels = C.kernels(step.update)
  if #kernels > 0 then
    local total = 0
    for _, k in ipairs(kernels) do total = total + k.duration_ns end
    local per_group = math.floor(total * P.fused_time_factor / P.param_groups + 0.5)
    for _ = 1, P.param_groups do
      graph:insert{kind = "kernel", name = P.kernel_name, before = kernels[1], duration_ns = per_group}
    end
    -- The old kernels and their launch calls go; remove() rewires whatever
    -- depended on them (a sync after the step) to what came before.
    local old = graph:from_tasks(kernels)
    graph:remove(old | old:launches())
    fused_steps = fused_steps + 1
    removed_kernels = removed_kernels + #kernels
  end
end
if fused_steps == 0 then
  reverie.log("no weight-update kernels found (no update phase in the trace): nothing to fuse")
else
  reverie.log(string.format("fused %d update kernels in %d steps into %d kernel(s) per step",
                            removed_kernels, fused_steps, P.param_groups))
end
