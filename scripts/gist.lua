-- gist.lua: Gist (Jain et al., ISCA'18; Daydream §5.2): store activations
-- encoded between their forward and backward use to save GPU memory.
--
-- Model (Daydream: "insert extra encoding and decoding GPU kernels (along
-- with cudaLaunchKernel calls in CPU)... estimated using existing
-- element-wise kernels"). For every forward activation (ReLU) kernel — the
-- stashed feature maps Gist's Binarize and SSDC encodings target — an encode
-- kernel runs right after it, and a decode kernel right before the backward
-- kernel that consumes the activation (its mirror in the backward pass,
-- lib/common.lua C.mirror). Encoding reads the dense map once and writes a
-- compact one, like the ReLU itself, so each takes `encode_factor` /
-- `decode_factor` times that forward ReLU kernel's duration. Each inserted
-- kernel gets a launch call of the trace's median launch duration.
-- Memory: not modelled yet: the encoded activations keep their full size
-- in `predict`'s peak.
-- Preconditions: a training trace with forward and backward activation
-- kernels (class "activation"), else nothing to change.
-- Assumptions: one stashed activation per ReLU; Gist's delayed precision
-- reduction (DPR) for other layers is not modelled.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  encode_factor = {default = 1.0, min = 0, doc = "encode time / the ReLU kernel's time"},
  decode_factor = {default = 1.0, min = 0, doc = "decode time / the ReLU kernel's time"},
}

local pairs_done = 0
for _, step in ipairs(C.steps(graph)) do
  local fwd = C.runs(step.forward, C.is_activation)
  local bwd = C.runs(step.backward, C.is_activation)
  for j, run in ipairs(fwd) do
    local relu = run[#run]
    local k = C.mirror(j, #fwd, #bwd)
    if k then
      local d = relu.duration_ns
      graph:insert{kind = "kernel", name = "gist_encode", after = relu,
                   duration_ns = math.floor(d * P.encode_factor + 0.5)}
      graph:insert{kind = "kernel", name = "gist_decode", before = bwd[k][1],
                   duration_ns = math.floor(d * P.decode_factor + 0.5)}
      pairs_done = pairs_done + 1
    end
  end
end
if pairs_done == 0 then
  reverie.nothing_to_change("no forward activation kernel with a backward counterpart")
end
local n = math.max(1, graph:iteration_count())
reverie.log(string.format("per step: %.0f activations encoded after the forward ReLU and decoded " ..
                          "before its backward", pairs_done / n))
