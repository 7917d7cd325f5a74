-- reconstruct_batchnorm.lua: Restructuring Batch Normalization (Jung et al.,
-- 2018; Daydream §5.2, evaluated in §6.4 on DenseNet-121: predicted 12.7%,
-- measured 7%).
--
-- Model (Daydream): each batch-norm layer is split in two and fused into the
-- neighbouring convolution and activation, so
-- - the activation (ReLU) kernels disappear, forward and backward, with their
--   launch calls: they are memory-bound and now fused into compute-bound
--   convolutions;
-- - batch-norm kernels get `bn_speedup` faster (2x: the restructured layers
--   read their input from memory half as often).
-- Preconditions: batch-norm kernels (class "normalization" named after
-- batch norm; layer norms are not restructured), else nothing to change.
-- Assumptions: every activation kernel sits next to a batch norm (true of
-- ResNet / DenseNet blocks; `activation_phases` limits where they are
-- removed); the fused convolutions' extra work is negligible, and new memory
-- copies a real implementation may add (Daydream §6.4) are not modelled.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  bn_speedup = {default = 2, min = 1, doc = "speedup of batch-norm kernels"},
  remove_activations = {default = true, doc = "remove the activation kernels fused away"},
}

-- Batch norm among the normalization kernels: cuDNN's bn_fw/bn_bw, ATen's
-- batch_norm_*, MIOpen's BatchNorm.
local bn = C.normalization_kernels(graph) &
           graph:select{name = {"batch_norm", "batchnorm", "bn_fw", "bn_bw"}}
if bn:empty() then reverie.nothing_to_change("no batch-norm kernels") end
bn:shrink(P.bn_speedup)
local removed = 0
if P.remove_activations then
  local act = C.activation_kernels(graph, {phase = {"forward", "backward"}})
  removed = graph:remove(act | act:launches())
end
reverie.log(string.format("%d batch-norm kernels / %g; %d activation tasks (kernels and launches) removed",
                          #bn, P.bn_speedup, removed))
