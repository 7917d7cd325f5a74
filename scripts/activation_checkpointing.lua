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
-- CPU time: a recomputation re-runs the segment's forward code, so each
-- recomputed kernel's launch comes with its op's own CPU time (once per op,
-- `with_op`, the op's measured own time) and the segment's framework time
-- (the Python between its launches in the forward) is inserted once before
-- the recomputation, as torch.utils.checkpoint re-runs the module's forward.
-- Memory: a tensor the forward saved for the backward (allocated by a
-- forward op, freed by a backward one: graph:allocations()) and written by
-- a kernel of a recomputed segment is released once the segment's last
-- forward kernel is launched (torch.utils.checkpoint runs the segment
-- without saving) and allocated again when its producer's recomputation is
-- launched, to be freed where the trace freed it (graph:stash; on the CPU's
-- clock, as the stream-ordered caching allocator sees them); the tensors the
-- segment's last kernel writes (the next segment's input, the checkpoint)
-- stay. Within a segment's forward every tensor stays live until the
-- segment ends (no_grad frees them sooner: an overestimate of the forward's
-- peak, seldom the step's). Needs `profile_memory` with addresses (current
-- Kineto schema); otherwise memory is left as recorded and the log says so.
-- Preconditions: the trace does not checkpoint already (graph:facts():
-- CheckpointWrapper layers or checkpoint annotations); if it does there is
-- nothing to change, unless `force` (which recomputes a second time).
-- Assumptions: recomputed kernels take as long as in the forward pass;
-- memcpys/memsets are not recomputed; ops without recorded spans add no CPU
-- time beyond their launch.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  segments = {default = 4, min = 1, integer = true, doc = "checkpointed segments per step"},
  recompute_last = {default = false, doc = "also recompute the last segment"},
  force = {default = false, doc = "apply even when the trace already checkpoints (recomputes twice)"},
}
local ckpt = graph:facts().activation_checkpointing
if ckpt.used and not P.force then
  reverie.nothing_to_change(string.format("the model already checkpoints activations [%s: %s]; " ..
                                          "--set force=true recomputes a second time",
                                          ckpt.source, ckpt.how))
end

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

local saved, saved_count = C.saved_tensors(graph)
local recomputed, stashed, stashed_bytes = 0, 0, 0
-- Release and restore of one recomputed forward kernel's saved tensors, on
-- the CPU's clock as the caching allocator sees them (it is stream-ordered:
-- a tensor is freed when the CPU is done issuing its last use): released
-- after the launch of the segment's last kernel, restored at the launch of
-- the recomputed producer.
local function stash_outputs(t, launch, release)
  if not saved or not launch or not release or t:launcher() == release then return end
  for _, a in ipairs(saved[t.id] or {}) do
    graph:stash(a.id, {release = release, restore = launch})
    stashed, stashed_bytes = stashed + 1, stashed_bytes + a.bytes
  end
end
local trained = false  -- a step with forward and backward kernels
for _, step in ipairs(C.steps(graph)) do
  local fwd = C.kernels(step.forward)
  local bwd = C.kernels(step.backward)
  if #fwd > 0 and #bwd > 0 then
    trained = true
    local n = math.min(P.segments, #fwd, #bwd)
    local fseg, bseg = split(fwd, n), split(bwd, n)
    local last = P.recompute_last and n or n - 1
    for s = 1, last do
      -- Backward segment n + 1 - s holds segment s's gradients.
      local anchor = bseg[n + 1 - s][1]
      -- The segment's framework time in the forward: between its first and
      -- last launch on the thread (none for a one-kernel segment; walking
      -- past it to the thread's end once made a step 280x longer at 256
      -- segments).
      local first, last_call = fseg[s][1]:launcher(), fseg[s][#fseg[s]]:launcher()
      local framework_ns = 0
      for _, t in ipairs(C.framework_between(first, last_call)) do
        framework_ns = framework_ns + t.duration_ns
      end
      local seen_ops, first_launch = {}, nil
      for _, t in ipairs(fseg[s]) do
        local extra = {phase = "backward"}
        local l = t:launcher()
        local op = l and l.op
        if op and not seen_ops[op.id] then
          seen_ops[op.id] = true
          extra.with_op, extra.op_ns = op.name, op.own_ns
        end
        local _, launch = C.clone_before(graph, t, anchor, " (recompute)", extra)
        first_launch = first_launch or launch
        stash_outputs(t, launch, last_call)
        recomputed = recomputed + 1
      end
      if framework_ns > 0 and first_launch then
        graph:insert{kind = "cpu_work", name = "[framework] (recompute)", before = first_launch,
                     duration_ns = framework_ns, phase = "backward"}
      end
    end
  end
end
if recomputed == 0 then
  reverie.nothing_to_change(trained and
      "segments=1 recomputes nothing (the last segment's activations are still live; " ..
      "--set recompute_last=true recomputes it)" or
      "no step has both forward and backward kernels (an inference trace): no activation to recompute")
end
reverie.log(string.format("%d forward kernels recomputed in the backward pass (%d segments per step)",
                          recomputed, P.segments))
local steps = math.max(1, graph:step_count())
if saved then
  reverie.log(string.format("memory: per step %.0f of %.0f saved tensors (%.2f MiB) released after " ..
                            "their segment's forward and allocated again in its recomputation",
                            stashed / steps, saved_count / steps, stashed_bytes / steps / 1048576))
else
  reverie.log("memory: unchanged: the trace records no saved tensors (profile_memory with addresses)")
end
