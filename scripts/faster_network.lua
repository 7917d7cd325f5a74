-- faster_network.lua: what if the network were faster? (Daydream Fig. 2,
-- "predicting runtime assuming network bandwidth doubles").
--
-- Model. Communication time is a fixed latency plus bytes / bandwidth, so a
-- `speedup` times faster network makes every communication task take
--     latency + (duration - latency) / speedup.
-- Applies to communication tasks (inserted by ddp.lua, p3.lua, ... run it
-- after them: --script ddp.lua --script faster_network.lua) and to NCCL
-- kernels recorded in a multi-GPU trace (their time is taken to be all
-- network time, an upper bound on the gain when they are partly GPU-bound,
-- Daydream §6.5).
-- Preconditions: communication to speed up (comm tasks a script inserted,
-- or NCCL/RCCL kernels of a multi-GPU trace, class "communication"), else
-- nothing to change.
local P = reverie.params{
  speedup = {default = 2, min = 0.001, doc = "bandwidth multiplier (2 = twice as fast)"},
  latency_us = {default = 0, min = 0, doc = "part of each transfer that does not scale, in us"},
  include_nccl_kernels = {default = true, doc = "also scale NCCL kernels found in the trace"},
}

local comm = graph:select{kind = "comm"}
if P.include_nccl_kernels then comm = comm | graph:select{kind = "kernel", class = "communication"} end
local latency = P.latency_us * 1000
local changed = 0
for t in comm:tasks() do
  local d = t.duration_ns
  if d > latency then
    t.duration_ns = math.floor(latency + (d - latency) / P.speedup + 0.5)
    changed = changed + 1
  end
end
if changed == 0 then
  reverie.nothing_to_change("no communication tasks or NCCL/RCCL kernels to speed up (run ddp.lua " ..
                            "or p3.lua first)")
end
reverie.log(string.format("%d communication tasks %gx faster", changed, P.speedup))
