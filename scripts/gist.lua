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
-- Memory: the stashed map is the tensor the forward saved for the backward
-- (graph:allocations()) that the ReLU wrote or, for an in-place ReLU, the
-- nearest of the three GPU tasks before it did (the normalization's
-- output). It is freed once its encoding is launched and allocated again
-- (dense) when its decoding is launched, to be freed where the trace freed
-- it; in between its encoding holds `encoded_fraction` of its bytes
-- (graph:stash, on the CPU's clock as the caching allocator sees it). The
-- default 0.5 stands for SSDC on a ReLU map about 60% sparse (Gist §4:
-- sparse storage with narrow indices); Binarize, for a ReLU feeding a
-- max-pool, keeps 1 bit of 32 (1/32). An estimate: the trace does not
-- record the maps' sparsity. Without saved tensors (no `profile_memory`
-- with addresses) memory is left as recorded and the log says so.
-- Preconditions: a training trace with forward and backward activation
-- kernels (class "activation"), else nothing to change.
-- Assumptions: one stashed activation per ReLU; Gist's delayed precision
-- reduction (DPR) for other layers is not modelled.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  encode_factor = {default = 1.0, min = 0, doc = "encode time / the ReLU kernel's time"},
  decode_factor = {default = 1.0, min = 0, doc = "decode time / the ReLU kernel's time"},
  encoded_fraction = {default = 0.5, min = 0, max = 1,
                      doc = "an encoded map's bytes / the dense map's (an estimate: SSDC at ~60% sparsity)"},
}
local saved = C.saved_tensors(graph)
local stashed, dense_bytes, encoded_bytes = 0, 0, 0

local pairs_done = 0
for _, step in ipairs(C.steps(graph)) do
  local fwd = C.runs(step.forward, C.is_activation)
  local bwd = C.runs(step.backward, C.is_activation)
  for j, run in ipairs(fwd) do
    local relu = run[#run]
    local k = C.mirror(j, #fwd, #bwd)
    if k then
      local d = relu.duration_ns
      local _, encode = graph:insert{kind = "kernel", name = "gist_encode", after = relu,
                                     duration_ns = math.floor(d * P.encode_factor + 0.5)}
      local _, decode = graph:insert{kind = "kernel", name = "gist_decode", before = bwd[k][1],
                                     duration_ns = math.floor(d * P.decode_factor + 0.5)}
      local map = saved and C.take_saved(saved, relu, 3) or nil
      if map and encode and decode then
        local enc = math.ceil(map.bytes * P.encoded_fraction / 512) * 512
        graph:stash(map.id, {release = encode, restore = decode, stashed_bytes = enc})
        stashed, dense_bytes, encoded_bytes = stashed + 1, dense_bytes + map.bytes, encoded_bytes + enc
      end
      pairs_done = pairs_done + 1
    end
  end
end
if pairs_done == 0 then
  reverie.nothing_to_change("no forward activation kernel with a backward counterpart")
end
local n = math.max(1, graph:step_count())
reverie.log(string.format("per step: %.0f activations encoded after the forward ReLU and decoded " ..
                          "before its backward", pairs_done / n))
if saved then
  reverie.log(string.format("memory: per step %.0f stashed maps, %.2f MiB dense held as %.2f MiB encoded " ..
                            "between their encoding and decoding", stashed / n, dense_bytes / n / 1048576,
                            encoded_bytes / n / 1048576))
else
  reverie.log("memory: unchanged: the trace records no saved tensors (profile_memory with addresses)")
end
