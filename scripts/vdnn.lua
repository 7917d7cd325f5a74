-- vdnn.lua: virtualized DNN (vDNN, Rhu et al., MICRO'16; Daydream §5.2):
-- offload feature maps to host memory during the forward pass and prefetch
-- them back for the backward pass.
--
-- Model (Daydream: "insert additional CUDA memory copies, and override the
-- schedule function to implement a custom prefetching policy"). vDNN_conv
-- offloads the input of every convolution:
-- - offload: a device-to-host transfer of the input (its recorded size, see
--   Memory; else `activation_mb`) issued when the convolution starts (its
--   input is ready); vDNN synchronizes at the end of each layer, so the next
--   convolution's launch waits for the transfer (and with it the
--   allocations the CPU makes after it);
-- - prefetch: a host-to-device transfer of the same size, issued when the
--   backward of the convolution after it starts (vDNN prefetches one layer
--   ahead), and needed before the convolution's own backward begins.
-- Transfers go over PCIe, full duplex: offloads and prefetches each get a
-- channel, and the channels' schedule is overridden by a Lua key function:
-- prefetches run in the order the backward pass needs them (not in the order
-- they became ready), offloads first come first served. vDNN's host buffers
-- are pinned: a transfer takes the cost model's time for a pinned copy of
-- its direction (transforms/cost_model.h: the trace's own copies, else the
-- GPU table's host link x its efficiency), or b / pcie_gbs + latency when
-- `pcie_gbs` is given.
-- Memory: the convolution's input is the tensor the forward saved for the
-- backward (graph:allocations()) that the GPU task before the convolution,
-- or the nearest of the three before that (in-place ops allocate nothing),
-- wrote; the transfers carry its recorded bytes, and it is freed on the
-- GPU when its offload ends and allocated again when its prefetch starts
-- (graph:stash), to be freed where the trace freed it. Without such a
-- tensor (no `profile_memory` with addresses) a transfer is
-- `activation_mb` and memory is left as recorded. The pinned host buffers
-- are not counted (host memory).
-- Preconditions: a training trace with compute-bound forward kernels to
-- offload around; pinned copy rates from the trace's GPU in the GPU table
-- (else `gpu`, or `pcie_gbs`). Refused when the trace already checkpoints
-- activations (its backward runs forward work again, which the pairing of
-- forward and backward layers below does not model), and when the schedule
-- contradicts the trace's order (a dependency cycle: the forward and
-- backward convolutions do not pair up in order).
-- Convolutions are runs of consecutive compute-bound forward kernels (a cuDNN
-- convolution is several kernels); forward and backward are paired by
-- position (lib/common.lua C.mirror). Assumptions: a convolution input the
-- trace does not size is `activation_mb` (ResNet-50 at batch 32 has 3-25 MB
-- per layer); allocator effects (fragmentation, the cached blocks) are not
-- modelled.
local C = reverie.include("lib/common.lua")

local P = reverie.params{
  activation_mb = {default = 8, min = 0, doc = "size in MiB of an offloaded feature map the trace does not size"},
  pcie_gbs = {default = 0, min = 0, doc = "achieved PCIe bandwidth in GB/s; 0 = from the model"},
  latency_us = {default = 10, min = 0, doc = "fixed cost of one transfer in microseconds (with pcie_gbs)"},
  gpu = {default = "", doc = "the trace's GPU as a key of the GPU table when the trace lacks deviceProperties"},
}

local ckpt = graph:facts().activation_checkpointing
if ckpt.used then
  reverie.refuse(string.format("the trace already checkpoints activations [%s: %s]: its backward " ..
                               "runs forward work again, which vDNN's pairing of forward and " ..
                               "backward layers does not model", ckpt.source, ckpt.how))
end

local default_bytes = math.floor(P.activation_mb * 1024 * 1024)
local function transfer_ns(kind, bytes)
  if P.pcie_gbs > 0 then return math.floor(bytes / (P.pcie_gbs * 1e9) * 1e9 + P.latency_us * 1e3 + 0.5) end
  return math.floor(graph:copy_ns(kind, bytes, {gpu = P.gpu ~= "" and P.gpu or nil}) + 0.5)
end
local saved = C.saved_tensors(graph)
local d2h = graph:add_channel("pcie device-to-host (offload)")
local h2d = graph:add_channel("pcie host-to-device (prefetch)")
local edges, offloads, sized, sized_bytes, out_ns, back_ns = {}, 0, 0, 0, 0, 0
for _, step in ipairs(C.steps(graph)) do
  local fwd = C.runs(step.forward, C.is_compute)
  local bwd = C.runs(step.backward, C.is_compute)
  for j, conv in ipairs(fwd) do
    local k = C.mirror(j, #fwd, #bwd)
    local it = conv[1].step
    -- The convolution's input: the tensor the GPU work before it wrote and
    -- the forward saved, when the trace records it; else activation_mb.
    local input = saved and C.take_saved(saved, conv[1]:prev(), 3) or nil
    local bytes = input and input.bytes or default_bytes
    if input then sized, sized_bytes = sized + 1, sized_bytes + bytes end
    local offload_ns, prefetch_ns = transfer_ns("dtoh_pinned", bytes), transfer_ns("htod_pinned", bytes)
    out_ns, back_ns = out_ns + offload_ns, back_ns + prefetch_ns
    local off = graph:insert{kind = "comm", name = "vdnn offload (DtoH)", resource = d2h,
                             bytes = bytes, duration_ns = offload_ns, step = it,
                             phase = "forward"}
    edges[#edges + 1] = {conv[1], off}
    -- vDNN synchronizes the host at the end of each layer: the next
    -- convolution's launch waits for the offload.
    if fwd[j + 1] then edges[#edges + 1] = {off, fwd[j + 1][1]:launcher() or fwd[j + 1][1]} end
    if k then
      -- Consumer position in the backward pass: the prefetch order key.
      local pre = graph:insert{kind = "comm", name = "vdnn prefetch (HtoD)", resource = h2d,
                               bytes = bytes, duration_ns = prefetch_ns, step = it,
                               phase = "backward", priority = k}
      edges[#edges + 1] = {off, pre}
      if k > 1 then edges[#edges + 1] = {bwd[k - 1][1], pre} end
      edges[#edges + 1] = {pre, bwd[k][1]}
      -- On the GPU only while it is needed: freed once offloaded,
      -- allocated again when the prefetch starts.
      if input then graph:stash(input.id, {release = off, restore = pre}) end
    end
    offloads = offloads + 1
  end
end
if offloads == 0 then
  reverie.nothing_to_change("no forward compute kernels to offload the inputs of")
end
local added, why = pcall(graph.add_edges, graph, edges)
if not added then
  reverie.refuse("vDNN's transfers would contradict the trace's order (" .. tostring(why):gsub("^.-:%d+: ", "") ..
                 "): its forward and backward convolutions do not pair up in order")
end

-- Prefetches in backward order; offloads (all priority 0) by ready time.
graph:set_policy(function(task, ready_ns)
  if task.priority > 0 then return task.priority end
  return ready_ns
end)
local n = math.max(1, graph:step_count())
reverie.log(string.format("per step: %.0f feature maps offloaded and prefetched (%.1f us out, %.1f us back); " ..
                          "%.0f sized from the trace's saved tensors (%.2f MiB, freed while offloaded), " ..
                          "the rest %g MiB (activation_mb)",
                          offloads / n, out_ns / n / 1e3, back_ns / n / 1e3, sized / n,
                          sized_bytes / n / 1048576, P.activation_mb))
