-- fused_adam.lua: one fused optimizer kernel instead of one kernel per
-- parameter and operation (Apex FusedAdam; Daydream §5.1 "FusedAdam
-- Optimizer", evaluated in §6.3 on BERT and GNMT, errors within 13%).
--
-- Model (Daydream): the weight-update phase is found by the task-to-layer /
-- phase mapping; all its GPU kernels and the CPU calls that launched them are
-- removed, and one new kernel per parameter group is inserted where the first
-- of them ran, with its own launch call. The fused kernel's duration is
-- its memory traffic, timed as the trace's own optimizer kernels move
-- theirs: an optimizer step is memory-bound, each foreach op one pass over
-- the parameters that reads its tensor lists and writes one (recorded
-- "Input type": `_foreach_addcdiv_(TensorList x3, ...)` moves 4 parameter-
-- sized tensors), so the time of one pass is the median over the step's
-- foreach ops of their kernels' time over their passes, and the fused
-- kernel makes the passes its optimizer needs, once each: Adam and AdamW 7
-- (parameter, exp_avg and exp_avg_sq read and written, the gradient read;
-- amsgrad's extra state is not counted), SGD 5 with momentum (parameter and
-- buffer read and written, gradient read), 3 without (a step of one foreach
-- op has no momentum). On the H100 pairs this puts GPT-2's fused kernel at
-- 1.30 ms (measured 1.37) and ResNet-50's at 0.34 ms (measured 0.32).
-- Where no foreach op calibrates a pass (a for-loop optimizer, another
-- optimizer), the fused kernel takes the removed kernels' time, as
-- Daydream estimates it ("roughly estimated by the sum of all removed
-- compute-intensive kernels"), and the log says so; `fused_time_factor` > 0
-- sets that fraction of the removed time instead of the model. Split evenly
-- over the groups. What disappears on the CPU side is what makes the
-- unfused optimizer launch-bound (2633 update kernels per BERT-base step,
-- Daydream §6.3):
-- - the launch calls, and the own CPU time of the aten ops that issued them
--   (aten::add_, aten::mul_, aten::_foreach_*: dispatch, checks), since those
--   ops issue nothing else once their kernels are fused (transforms/ops.h);
-- - with `remove_python_loop` (default), the framework time inside the
--   optimizer's step annotation ("Optimizer.step#..."): the per-parameter
--   Python loop of a non-fused optimizer, which FusedAdam's single C++ call
--   does not run. Framework time elsewhere (zero_grad's Python, the training
--   loop) stays.
-- The fused kernel's own launch is issued by one op, `aten::_fused_adam_`,
-- with the CPU cost the trace measured for that op when it has one, else the
-- median own time of the optimizer ops it replaces (one dispatch).
--
-- Which kernels: the optimizer's step (class "optimizer": the kernels
-- launched inside `Optimizer.step#...`, and kernels an optimizer names);
-- zero_grad is not fused. A trace without the step's annotation falls back
-- to every update-phase kernel, and says so.
--
-- Memory: allocations made in the CPU work it removes (the per-tensor
-- temporaries of the foreach ops) leave with that work, with their frees
-- (depgraph/memory_replay.h); nothing else is resized.
-- Preconditions (graph:facts().optimizer): nothing to change when the
-- optimizer is already fused (torch's fused=True, apex's or DeepSpeed's
-- FusedAdam). For a non-Adam optimizer the script models that optimizer's
-- own fused implementation (PyTorch's fused SGD, AdamW, Adagrad; apex's
-- LAMB, NovoGrad): the mechanism is the same, one kernel per group doing
-- the step's arithmetic; the log names it. An optimizer with no fused
-- implementation (Shampoo, RMSprop, an EMA) is refused unless
-- `any_optimizer` asks for one anyway.
-- Assumptions: memcpys and memsets of the update phase and other CPU calls
-- stay; the optimizer's arithmetic does not change. A trace without op
-- spans (cpu_op) keeps the old model: a removed launch takes its gap.
local C = reverie.include("lib/common.lua")

local facts = graph:facts()
local opt = facts.optimizer
if opt.implementation == "fused" then
  reverie.nothing_to_change(string.format("the optimizer (%s) is already fused [%s: %s]",
                                          opt.name ~= "" and opt.name or "?", opt.source, opt.how))
end
local fused_name = (opt.name ~= "" and opt.name or "Adam")

local P = reverie.params{
  param_groups = {default = 1, min = 1, integer = true,
                  doc = "optimizer parameter groups: one fused kernel each per step"},
  fused_time_factor = {default = 0, min = 0,
                       doc = "fused kernel time as a fraction of the removed kernels' time " ..
                             "(0: from the passes over memory the fused kernel makes)"},
  kernel_name = {default = "multi_tensor_apply_kernel<Fused" .. fused_name .. "> (fused)",
                 doc = "name of the inserted kernel (default: the trace's optimizer, fused)"},
  remove_python_loop = {default = true,
                        doc = "also remove the framework (Python) time inside Optimizer.step"},
  any_optimizer = {default = false,
                   doc = "model a fused step for an optimizer that has no fused implementation"},
}

-- Optimizers with a fused implementation to switch to: PyTorch's
-- `fused=True` (Adam, AdamW, SGD, Adagrad), apex's and DeepSpeed's fused
-- LAMB and NovoGrad. Any other (Shampoo, RMSprop, an EMA of the weights)
-- has none, and its step may do more than elementwise arithmetic (Shampoo
-- computes matrix roots), which one fused kernel would not replace.
local FUSABLE = {adam = true, adamw = true, sgd = true, adagrad = true, lamb = true,
                 novograd = true}
do
  local others = {}
  for name in opt.name:gmatch("[^ +]+") do
    if not FUSABLE[name:lower()] then others[#others + 1] = name end
  end
  if #others > 0 and not P.any_optimizer then
    reverie.refuse(string.format("%s %s no fused implementation (PyTorch's fused=True covers " ..
                                 "Adam, AdamW, SGD and Adagrad; apex adds LAMB and NovoGrad); " ..
                                 "--set any_optimizer=true models one anyway [%s: %s]",
                                 table.concat(others, " and "), #others > 1 and "have" or "has",
                                 opt.source, opt.how))
  end
end

-- The CPU cost of the fused op: measured when the trace already has it, else
-- the median own time of the optimizer ops it replaces.
local function fused_op_cost(kernels)
  local measured = graph:op_cost("aten::_fused_adam_")
  if measured then return measured end
  local own = {}
  for _, k in ipairs(kernels) do
    local l = k:launcher()
    local id = l and l.op_id
    if id then own[#own + 1] = graph:op(id).own_ns end
  end
  return C.median(own)  -- nil: the trace records no ops, the launch alone
end

-- Passes over the parameters the fused step makes (see the top), or nil.
local function fused_passes(foreach_ops)
  local name = opt.name
  if name == "Adam" or name == "AdamW" then return 7 end
  if name == "SGD" then return foreach_ops > 1 and 5 or 3 end
  return nil
end

-- The time of one pass over the parameters: the median over the foreach
-- ops of `kernels` of their kernels' time over the tensors each moves (its
-- TensorList inputs read, one written). nil without foreach ops.
local function pass_ns(kernels)
  local by_op, order = {}, {}
  for _, k in ipairs(kernels) do
    local l = k:launcher()
    local op = l and l.op
    if op and op.name:find("^aten::_foreach_") then
      if not by_op[op.id] then
        by_op[op.id] = 0
        order[#order + 1] = op.id
      end
      by_op[op.id] = by_op[op.id] + k.duration_ns
    end
  end
  local per_pass = {}
  for _, id in ipairs(order) do
    local inputs = graph:op_inputs(id)
    if inputs then
      local lists = 0
      for _, a in ipairs(inputs) do
        if a.type == "TensorList" then lists = lists + 1 end
      end
      if lists > 0 then per_pass[#per_pass + 1] = by_op[id] / (lists + 1) end
    end
  end
  return C.median(per_pass), #per_pass
end

local python_ns = 0
if P.remove_python_loop then
  local loop = graph:select{cpu_time = "framework", phase = "update", name = "Optimizer.step*"}
  python_ns = loop:total_duration()
  if not loop:empty() then graph:remove(loop) end
end

-- The optimizer's kernels of each step: class "optimizer", else (no
-- annotation says where the step is) every update-phase kernel.
local by_class = not graph:select{kind = "kernel", class = "optimizer"}:empty()
local function optimizer_kernels(step)
  local out = {}
  for _, t in ipairs(C.kernels(step.update)) do
    if not by_class or t.class == "optimizer" then out[#out + 1] = t end
  end
  return out
end

local steps = C.steps(graph)
local fused_steps, removed_kernels, removed_gpu_ns, fused_ns = 0, 0, 0, 0
local one_time_ns = 0  -- launch costs kept (C.remove_kernels)
-- How the fused kernel was timed, over the steps (for the log).
local modelled, unit_sum, model_passes, model_ops, fallback = 0, 0, 0, 0, nil
for _, step in ipairs(steps) do
  local kernels = optimizer_kernels(step)
  if #kernels > 0 then
    local total = 0
    for _, k in ipairs(kernels) do total = total + k.duration_ns end
    local fused = total * P.fused_time_factor
    if P.fused_time_factor == 0 then
      local unit, ops = pass_ns(kernels)
      local passes = fused_passes(ops)
      if unit and passes then
        fused = math.min(total, passes * unit)
        modelled, unit_sum, model_passes, model_ops = modelled + 1, unit_sum + unit, passes, ops
      else
        fused = total
        fallback = fallback or
                   (not passes and ("the model does not know " .. fused_name .. "'s passes") or
                    (ops == 0 and opt.implementation == "for-loop") and
                      "a for-loop optimizer has no foreach op to time a pass over the parameters" or
                    "no foreach op with recorded input types (record_shapes) to time a pass")
      end
    end
    fused_ns = fused_ns + fused
    local per_group = math.floor(fused / P.param_groups + 0.5)
    local cost = fused_op_cost(kernels)
    for _ = 1, P.param_groups do
      graph:insert{kind = "kernel", name = P.kernel_name, before = kernels[1], duration_ns = per_group,
                   with_op = cost and "aten::_fused_adam_" or nil, op_ns = cost}
    end
    -- The old kernels and their launch calls go; remove() rewires whatever
    -- depended on them (a sync after the step) to what came before.
    one_time_ns = one_time_ns + C.remove_kernels(graph, graph:from_tasks(kernels))
    fused_steps = fused_steps + 1
    removed_kernels = removed_kernels + #kernels
    removed_gpu_ns = removed_gpu_ns + total
  end
end
if fused_steps == 0 then
  reverie.nothing_to_change("no optimizer kernels (no update phase, no optimizer kernel names)")
end
local n = math.max(1, fused_steps)
local how
if P.fused_time_factor > 0 then
  how = string.format("%.2fx the removed kernels' time (fused_time_factor)", P.fused_time_factor)
else
  local parts = {}
  if modelled > 0 then
    parts[1] = string.format("%d passes over the parameters at %.1f us each (median of %d foreach ops%s)",
                             model_passes, unit_sum / modelled / 1e3, model_ops,
                             modelled > 1 and string.format("; mean over %d steps", modelled) or "")
  end
  if fallback then
    parts[#parts + 1] = (modelled > 0 and string.format("%d steps take ", fused_steps - modelled) or "") ..
                        "the removed kernels' time: " .. fallback
  end
  how = table.concat(parts, "; ")
end
reverie.log(string.format("%s%s, %s -> fused: per step %.0f kernels (%.1f us) become %d (%.1f us: %s); " ..
                          "%.1f us of Python inside Optimizer.step removed%s",
                          fused_name, opt.name == "" and " (assumed: the trace does not name it)" or "",
                          opt.implementation, removed_kernels / n, removed_gpu_ns / n / 1e3,
                          P.param_groups, fused_ns / n / 1e3, how, python_ns / n / 1e3,
                          by_class and "" or "; no Optimizer.step# annotation: every update-phase " ..
                            "kernel (zero_grad's too) taken as the optimizer's"))
C.log_one_time(one_time_ns, "the fused kernel")
