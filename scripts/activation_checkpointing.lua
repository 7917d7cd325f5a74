-- activation_checkpointing.lua: activation (gradient) checkpointing
-- (Chen et al. 2016, torch.utils.checkpoint): keep only segment-boundary
-- activations in the forward pass and recompute each segment's forward just
-- before its backward.
--
-- Model. Each step's forward GPU work is cut into `segments` consecutive
-- segments of about equal kernel count (torch.utils.checkpoint_sequential);
-- the backward pass is cut into as many segments in reverse. Before the
-- first backward kernel of each segment, a copy of that segment's forward
-- kernels (same names + " (recompute)", same durations, each with a launch
-- call of the trace's median launch duration) is inserted on the same stream,
-- so the backward waits for the recomputation. The last segment is not
-- recomputed (its activations are still live when the backward starts)
-- unless `recompute_last` is set.
-- Assumptions: recomputed kernels take as long as in the forward pass;
-- memcpys/memsets are not recomputed; the memory saved is not modelled (the
-- point is the time it costs).
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  segments = {default = 4, min = 1, integer = true, doc = "checkpointed segments per step"},
  recompute_last = {default = false, doc = "also recompute the last segment"},
}

local function split(list, n)
  local out = {}
  for s = 1, n do
    local lo = math.floor((s - 1) * #list / n) + 1
    local hi = math.floor(s * #list / n)
    local seg = {}
    for i = lo, hi do seg[#seg + 1] = list[i] end
    out[s] = seg
  end
  return out
end

local recomputed = 0
for _, step in ipairs(C.steps(graph)) do
  local fwd = C.kernels(step.forward)
  local bwd = C.kernels(step.backward)
  if #fwd > 0 and #bwd > 0 then
    local n = math.min(P.segments, #fwd, #bwd)
    local fseg, bseg = split(fwd, n), split(bwd, n)
    local last = P.recompute_last and n or n - 1
    for s = 1, last do
      -- Backward segment n + 1 - s holds segment s's gradients.
      local anchor = bseg[n + 1 - s][1]
      for _, t in ipairs(fseg[s]) do
        C.clone_before(graph, t, anchor, " (recompute)", {phase = "backward"})
        recomputed = recomputed + 1
      end
    end
  end
end
reverie.log(string.format("%d forward kernels recomputed in the backward pass (%d segments per step)",
                          recomputed, P.segments))
